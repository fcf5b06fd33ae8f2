// TestBrowser: the relay command driven by a real browser (headless Chromium, through chromedp):
// CORS, the session cookie of EventSource joins, and an EventSource that reconnects.

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aguistate/aguistate"
	"github.com/aguistate/aguistate/internal/agenttest"
	"github.com/aguistate/aguistate/internal/framing"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The bounds of the browser test's waits: for Chromium to start, and for
// any one thing that the test waits for.
const (
	browserStart = 30 * time.Second
	browserWait  = 10 * time.Second
)

// TestBrowser runs the relay command with -tokens and -cors-origin, a page
// on another loopback origin, and headless Chromium: one browser for every
// subtest, each in a browser context of its own (its own cookies). The
// agent is a fake that streams script; its holds keep each run in
// progress while the page does what the subtest checks.
func TestBrowser(t *testing.T) {
	browser := newBrowser(t)
	agent := agenttest.NewScript(t, script)
	page := newPage(t)
	other := newPage(t) // an origin the relay does not allow
	base := start(t, "-agent", agent.URL, "-tokens", tokensFile(t, "tok-a a\ntok-b b\n"), "-cors-origin", page.URL)

	// A page POSTs /agent with a bearer token: the preflight passes, the
	// run streams to it as the agent sends it, and GET /threads/{id}
	// answers it with the thread.
	t.Run("Run", func(t *testing.T) {
		release := agent.Hold(3)
		defer release()
		id := newThread(t, "a")
		inputs := len(agent.Inputs())
		tab := openTab(t, browser, page.URL, true)
		tab.do(call("run", "r", base, "tok-a", map[string]any{"threadId": id, "runId": "run-1", "state": map[string]any{},
			"messages": []any{map[string]any{"id": "u1", "role": "user", "content": "hi"}}, "tools": []any{}, "context": []any{}}))
		tab.until(`runs.r.text.includes("TEXT_MESSAGE_START")`, "the run's first events reach the page while the agent holds the rest")
		release()
		tab.until(`runs.r.done`, "the run ends")
		var run struct {
			Status    int
			RequestID string
			Text      string
			Error     string
		}
		tab.eval(`runs.r`, &run)
		require.Equal(t, http.StatusOK, run.Status, run.Error)
		require.Empty(t, run.Error)
		assert.NotEmpty(t, run.RequestID, "the page reads X-Request-Id, an exposed header")
		require.Len(t, agent.Inputs(), inputs+1)
		assert.Equal(t, "a", agent.Header(inputs).Get(tenantHeader))

		events := parseSSE(t, run.Text)
		assert.Equal(t, logEvents(t, base, "tok-a", id), events, "the page got the run's events, with their positions")
		var got struct {
			Status int
			Body   string
			Error  string
		}
		tab.eval(call("get", base+"/threads/"+id, "tok-a"), &got)
		require.Equal(t, http.StatusOK, got.Status, got.Error)
		assert.JSONEq(t, readThread(t, base, "tok-a", id), got.Body)
		assert.JSONEq(t, rebuild(t, events), got.Body)
	})

	// A page trades its token for the session cookie, and its EventSource
	// joins a run in progress: a prelude, then every event that follows,
	// in order; after the run the relay answers its reconnect 204.
	t.Run("Join", func(t *testing.T) {
		release := agent.Hold(3)
		defer release()
		id := newThread(t, "a")
		c, wait := runAsync(t, base, id)
		tab := openTab(t, browser, page.URL, true)
		tab.session(base, "tok-a", http.StatusNoContent)
		tab.do(call("join", "j", base+"/threads/"+id+"/events"))
		tab.until(`joins.j.events.some(e => e.id !== "")`, "the page joins by prelude")
		release()
		tab.until(`joins.j.readyState === 2`, "the EventSource ends after the run")
		wait()

		j := tab.join("j")
		assert.Equal(t, 1, j.Opens, "one connection: the reconnect after the run got 204")
		afterPrelude(t, j.Events, logEvents(t, base, "tok-a", id))
		assert.JSONEq(t, threadJSON(t, c), readThread(t, base, "tok-a", id))
		assert.JSONEq(t, threadJSON(t, c), rebuild(t, j.Events), "the page holds the thread")
	})

	// A proxy between the page and the relay cuts the EventSource's
	// connection mid-run and refuses new ones while the run goes on: the
	// browser reconnects by itself with Last-Event-ID, and the page gets
	// every event exactly once.
	t.Run("Reconnect", func(t *testing.T) {
		release := agent.Hold(1, 3, 5)
		defer func() { release(); release(); release() }()
		proxy := newCutProxy(t, base)
		id := newThread(t, "a")
		c, wait := runAsync(t, base, id)
		ended := make(chan struct{})
		var once sync.Once
		c.Subscribe(func(ch aguistate.Change) {
			if ch.Event.Type == "TEXT_MESSAGE_END" {
				once.Do(func() { close(ended) })
			}
		})
		tab := openTab(t, browser, page.URL, true)
		tab.session(base, "tok-a", http.StatusNoContent)
		tab.do(call("join", "j", proxy.URL+"/threads/"+id+"/events"))
		tab.until(`joins.j.events.some(e => e.id !== "")`, "the page joins by prelude")
		release() // the agent sends STATE_SNAPSHOT and TEXT_MESSAGE_START
		tab.until(`joins.j.events.some(e => e.data.includes("TEXT_MESSAGE_START"))`, "the page follows the run")
		cutAt := tab.join("j").Events
		lastID := cutAt[len(cutAt)-1].ID

		proxy.cut()
		tab.until(`joins.j.errors >= 1`, "the page sees its connection cut")
		release() // the agent sends TEXT_MESSAGE_CONTENT and TEXT_MESSAGE_END: the page misses them
		select {
		case <-ended:
		case <-time.After(browserWait):
			t.Fatal("the run does not go on")
		}
		proxy.restore()
		tab.until(`joins.j.opens === 2 && joins.j.events.some(e => e.data.includes("TEXT_MESSAGE_END"))`, "the EventSource reconnects and catches up")
		release() // the agent ends the run
		tab.until(`joins.j.readyState === 2`, "the EventSource ends after the run")
		wait()

		log := logEvents(t, base, "tok-a", id)
		j := tab.join("j")
		afterPrelude(t, j.Events, log)
		assert.JSONEq(t, readThread(t, base, "tok-a", id), rebuild(t, j.Events), "the page holds the thread")
		assert.JSONEq(t, threadJSON(t, c), rebuild(t, j.Events))

		reqs := proxy.requests()
		require.GreaterOrEqual(t, len(reqs), 3, "the join, the reconnect and the one after the run: %v", reqs)
		assert.Equal(t, proxied{Status: http.StatusOK}, reqs[0], "the join")
		for _, r := range reqs[1 : len(reqs)-2] {
			assert.Equal(t, proxied{LastEventID: []string{lastID}, Refused: true}, r, "a reconnect while the proxy is down")
		}
		assert.Equal(t, proxied{LastEventID: []string{lastID}, Status: http.StatusOK}, reqs[len(reqs)-2], "the reconnect")
		assert.Equal(t, proxied{LastEventID: []string{log[len(log)-1].ID}, Status: http.StatusNoContent}, reqs[len(reqs)-1], "the reconnect after the run")
	})

	// A page of an origin that is not allowed gets no
	// Access-Control-Allow-Origin, even with a good cookie: its fetches
	// and its EventSource fail, and its POST never reaches the agent. A
	// page without the cookie, or with another tenant's, cannot join or
	// read the thread.
	t.Run("Refused", func(t *testing.T) {
		agent.Hold()
		id := newThread(t, "a", "b")
		_, wait := runAsync(t, base, id)
		wait()
		inputs := len(agent.Inputs())

		allowed := openTab(t, browser, page.URL, true)
		allowed.session(base, "tok-a", http.StatusNoContent) // the browser context holds a's cookie
		foreign := openTab(t, allowed.ctx, other.URL, false)
		failures := foreign.corsFailures()
		id2 := newThread(t, "a")
		foreign.do(call("run", "x", base, "tok-a", map[string]any{"threadId": id2, "runId": "run-x", "messages": []any{}}))
		foreign.until(`runs.x.done`, "the POST ends")
		var run struct {
			Status int
			Error  string
		}
		foreign.eval(`runs.x`, &run)
		assert.Zero(t, run.Status, "the POST gets no answer")
		assert.Contains(t, run.Error, "TypeError", "the POST fails")
		var got struct {
			Status int
			Error  string
		}
		foreign.eval(call("get", base+"/threads/"+id, ""), &got)
		assert.Contains(t, got.Error, "TypeError", "the fetch with a's cookie fails")
		foreign.do(call("join", "x", base+"/threads/"+id+"/events"))
		foreign.until(`joins.x.readyState === 2`, "the EventSource gives up")
		assert.Equal(t, joined{Events: []sseEvent{}, Errors: 1, ReadyState: 2}, foreign.join("x"), "the EventSource with a's cookie errors, and gets no event")
		assert.Len(t, agent.Inputs(), inputs, "the agent never ran the POST")
		status, _ := request(t, http.DefaultClient, http.MethodGet, base+"/threads/"+id2, "tok-a", nil)
		assert.Equal(t, http.StatusNotFound, status, "nor did the relay record it")
		for deadline := time.Now().Add(browserWait); len(failures()) < 3 && time.Now().Before(deadline); {
			time.Sleep(20 * time.Millisecond) // the network events may come after the page's
		}
		assert.Equal(t, map[string]network.CorsError{
			"/agent":                     network.CorsErrorPreflightMissingAllowOriginHeader,
			"/threads/" + id:             network.CorsErrorMissingAllowOriginHeader,
			"/threads/" + id + "/events": network.CorsErrorMissingAllowOriginHeader,
		}, failures(), "the browser blocks each answer: no Access-Control-Allow-Origin")

		stranger := openTab(t, browser, page.URL, true)
		stranger.do(call("join", "n", base+"/threads/"+id+"/events"))
		stranger.until(`joins.n.readyState === 2`, "the EventSource without a cookie gives up")
		assert.Equal(t, joined{Events: []sseEvent{}, Errors: 1, ReadyState: 2}, stranger.join("n"), "the EventSource without a cookie errors, and gets no event")
		stranger.eval(call("get", base+"/threads/"+id, ""), &got)
		assert.Equal(t, http.StatusUnauthorized, got.Status, "GET without a cookie: %s", got.Error)

		stranger.session(base, "tok-b", http.StatusNoContent)
		stranger.do(call("join", "b", base+"/threads/"+id+"/events"))
		stranger.until(`joins.b.readyState === 2`, "the EventSource with b's cookie gives up")
		assert.Equal(t, joined{Events: []sseEvent{}, Errors: 1, ReadyState: 2}, stranger.join("b"), "the EventSource with b's cookie errors, and gets no event")
		var body struct {
			Status int
			Body   string
		}
		stranger.eval(call("get", base+"/threads/"+id, ""), &body)
		assert.Equal(t, http.StatusNotFound, body.Status, "b's cookie does not read a's thread")
		assert.NotContains(t, body.Body, "hello")
	})

	// An EventSource with ?follow=thread stays on its thread across runs:
	// one that joins before the thread's first run gets every event of two
	// runs on its one connection, from position 1, and is still open after
	// each; one that joins during the first run gets a prelude, then the
	// rest of both. (Once DELETE /threads/{id} is on main: delete the
	// thread, and both EventSources end, readyState 2, at their
	// reconnect's 204.)
	t.Run("Follow", func(t *testing.T) {
		release := agent.Hold(3)
		defer release()
		id := newThread(t, "a")
		follow := base + "/threads/" + id + "/events?follow=thread"
		tab := openTab(t, browser, page.URL, true)
		tab.session(base, "tok-a", http.StatusNoContent)
		tab.do(call("join", "early", follow))
		tab.until(`joins.early.opens === 1 && joins.early.readyState === 1`, "the EventSource opens on a thread that has no run yet")
		_, wait := runAsync(t, base, id)
		tab.do(call("join", "late", follow))
		tab.until(`joins.late.events.some(e => e.id !== "")`, "the second EventSource joins run 1 by prelude")
		release()
		wait()
		ended := func(n int) string {
			return fmt.Sprintf(`["early", "late"].every(j => joins[j].events.filter(e => e.data.includes("RUN_FINISHED")).length === %d)`, n)
		}
		tab.until(ended(1), "run 1 ends on both")
		c, wait := runAsync(t, base, id)
		wait()
		tab.until(ended(2), "run 2 reaches both, on the same connection")

		log := logEvents(t, base, "tok-a", id)
		early, late := tab.join("early"), tab.join("late")
		assert.Equal(t, joined{Events: log, Opens: 1, ReadyState: 1}, early, "every event of both runs, from position 1, on one connection")
		afterPrelude(t, late.Events, log)
		assert.Equal(t, 1, late.Opens)
		assert.Equal(t, 1, late.ReadyState, "still open after run 2")
		assert.JSONEq(t, readThread(t, base, "tok-a", id), rebuild(t, early.Events), "the page holds the thread")
		assert.JSONEq(t, threadJSON(t, c), rebuild(t, late.Events))
	})
}

// newBrowser starts headless Chromium with a fresh profile for t and its
// subtests, and stops it when t ends. Without chromium on PATH it skips t,
// or fails it when CI is set.
func newBrowser(t *testing.T) context.Context {
	path, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("Chromium is required in CI (apt-get install -y chromium): %v", err)
		}
		t.Skip("chromium is not on PATH (Debian: apt-get install -y chromium); the browser test is skipped")
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), chromedp.ExecPath(path),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(t.TempDir()))
	browser, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	watchdog := time.AfterFunc(browserStart, cancel) // the context of the first run must have no deadline: it is the browser's
	err = chromedp.Do(browser)
	watchdog.Stop()
	require.NoError(t, err, "Chromium starts within %s", browserStart)
	return browser
}

// newPage serves testdata/page.html at / of a loopback origin (its URL).
func newPage(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, req *http.Request) { http.ServeFile(w, req, "testdata/page.html") })
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// tab is the page in a tab of the browser.
type tab struct {
	t   *testing.T
	ctx context.Context
}

// openTab opens url in a new tab of parent's browser, in a new browser
// context (with no cookie) when fresh, else in parent's; the tab closes when
// t ends.
func openTab(t *testing.T, parent context.Context, url string, fresh bool) *tab {
	var opts []chromedp.ContextOption
	if fresh {
		opts = append(opts, chromedp.WithNewBrowserContext())
	}
	ctx, cancel := chromedp.NewContext(parent, opts...)
	t.Cleanup(cancel)
	watchdog := time.AfterFunc(browserWait, cancel) // the first run's context is the tab's
	err := chromedp.Do(ctx, chromedp.Navigate(url))
	watchdog.Stop()
	require.NoError(t, err, "the tab opens %s", url)
	return &tab{t, ctx}
}

// call returns the JavaScript call of the page's function fn with args,
// each as JSON.
func call(fn string, args ...any) string {
	js := make([]string, len(args))
	for i, a := range args {
		b, err := json.Marshal(a)
		if err != nil {
			panic(err)
		}
		js[i] = string(b)
	}
	return fn + "(" + strings.Join(js, ", ") + ")"
}

// eval evaluates the JavaScript expression in the tab, waits for it when it
// is a promise, and decodes its value into v (nil: the value is dropped).
func (p *tab) eval(expr string, v any) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, browserWait)
	defer cancel()
	b, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](expr, chromedp.EvalAwaitPromise))
	require.NoError(p.t, err, "%s", expr)
	if v != nil {
		require.NoError(p.t, json.Unmarshal(b, v), "%s: %s", expr, b)
	}
}

// do evaluates the JavaScript expression in the tab.
func (p *tab) do(expr string) {
	p.t.Helper()
	p.eval(expr, nil)
}

// until waits until the JavaScript expression is true in the tab, for
// browserWait at most, and then fails t with what the page holds.
func (p *tab) until(expr, what string) {
	p.t.Helper()
	deadline := time.Now().Add(browserWait)
	for {
		var ok bool
		p.eval("Boolean("+expr+")", &ok)
		if ok {
			return
		}
		if time.Now().After(deadline) {
			var state string
			p.eval(`JSON.stringify({runs, joins}).slice(0, 4096)`, &state)
			p.t.Fatalf("%s: %s is not true after %s; the page holds (its first 4 KiB) %s", what, expr, browserWait, state)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// session trades token for the relay's session cookie, from the page, and
// checks that the relay answers status.
func (p *tab) session(base, token string, status int) {
	p.t.Helper()
	var got struct {
		Status int
		Error  string
	}
	p.eval(call("session", base, token), &got)
	require.Equal(p.t, status, got.Status, "POST /session: %s", got.Error)
}

// joined is what a page's EventSource got (see join in testdata/page.html).
type joined struct {
	Events        []sseEvent
	Opens, Errors int
	ReadyState    int
}

// join returns what the page's EventSource name got so far.
func (p *tab) join(name string) joined {
	p.t.Helper()
	var j joined
	p.eval("joins["+strconv.Quote(name)+"]", &j)
	return j
}

// corsFailures starts recording the requests of the tab that the browser
// blocks for CORS, and returns a function that returns them so far: the
// reason of each, by the path of its URL.
func (p *tab) corsFailures() func() map[string]network.CorsError {
	var mu sync.Mutex
	paths := map[network.RequestID]string{}
	failed := map[string]network.CorsError{}
	require.NoError(p.t, chromedp.Listen(p.ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			if u, err := url.Parse(ev.Request.URL); err == nil {
				paths[ev.RequestID] = u.Path
			}
		case *network.EventLoadingFailed:
			if ev.CorsErrorStatus != nil {
				failed[paths[ev.RequestID]] = ev.CorsErrorStatus.CorsError
			}
		}
	}))
	return func() map[string]network.CorsError {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(failed)
	}
}

// sseEvent is an event of an SSE stream: its last event ID, as an
// EventSource gives it (HTML Living Standard section 9.2.6), and its data.
type sseEvent struct {
	ID   string `json:"id"`
	Data string `json:"data"`
}

// parseSSE returns the events of an SSE stream's text.
func parseSSE(t *testing.T, text string) []sseEvent {
	t.Helper()
	var f framing.Fields
	var events []sseEvent
	for data, err := range framing.ReadFields(strings.NewReader(text), framing.SSE, 0, 0, &f) {
		require.NoError(t, err)
		events = append(events, sseEvent{f.LastEventID, string(data)})
	}
	return events
}

// logEvents returns every event of thread id as the relay at base has it,
// read with token: GET /threads/{id}/events with Last-Event-ID 0, which
// ends after a run, then again after its last event, run after run,
// until a 204. Their ids are the positions 1 to n.
func logEvents(t *testing.T, base, token, id string) []sseEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), browserWait)
	defer cancel()
	var events []sseEvent
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/threads/"+id+"/events", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Last-Event-ID", strconv.Itoa(len(events)))
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		if resp.StatusCode == http.StatusNoContent && len(events) > 0 {
			break
		}
		require.Equal(t, http.StatusOK, resp.StatusCode)
		events = append(events, parseSSE(t, string(body))...)
	}
	for i, e := range events {
		require.Equal(t, strconv.Itoa(i+1), e.ID, "the log's positions")
	}
	return events
}

// afterPrelude checks that a page's events are a prelude (events with no
// id, the last one with a position p) and then the events of log after
// position p, each once and in order.
func afterPrelude(t *testing.T, events, log []sseEvent) {
	t.Helper()
	k := slices.IndexFunc(events, func(e sseEvent) bool { return e.ID != "" })
	require.GreaterOrEqual(t, k, 0, "a prelude that ends at a position: %v", events)
	p, err := strconv.Atoi(events[k].ID)
	require.NoError(t, err)
	require.True(t, p > 0 && p < len(log), "the prelude ends at %d, inside the run's %d events", p, len(log))
	assert.Equal(t, log[p:], events[k+1:], "the events after the prelude's position %d", p)
}

// rebuild returns the thread that events make, as GET /threads/{id} gives
// it.
func rebuild(t *testing.T, events []sseEvent) string {
	t.Helper()
	c := aguistate.New(nil)
	for _, e := range events {
		require.NoError(t, c.Apply([]byte(e.Data)), "%s", e.Data)
	}
	return threadJSON(t, c)
}

// readThread returns GET /threads/{id} at base, read with token.
func readThread(t *testing.T, base, token, id string) string {
	t.Helper()
	status, body := request(t, http.DefaultClient, http.MethodGet, base+"/threads/"+id, token, nil)
	require.Equal(t, http.StatusOK, status, body)
	return body
}

// runAsync starts a run of thread id through the relay at base, as tenant
// a's Go client, and returns once the thread has its first event: the
// client's Consumer, and a function that waits for the run's end.
func runAsync(t *testing.T, base, id string) (*aguistate.Consumer, func()) {
	t.Helper()
	c := aguistate.New(nil)
	started := make(chan struct{})
	var once sync.Once
	c.Subscribe(func(aguistate.Change) { once.Do(func() { close(started) }) })
	ctx, cancel := context.WithTimeout(context.Background(), 3*browserWait)
	t.Cleanup(cancel)
	ran := make(chan error, 1)
	go func() {
		_, err := c.RunAgent(ctx, &aguistate.Agent{URL: base + "/agent", Header: http.Header{"Authorization": {"Bearer tok-a"}}},
			&aguistate.RunOptions{ThreadID: id})
		ran <- err
	}()
	select {
	case <-started:
	case err := <-ran:
		t.Fatalf("the run ended before it started: %v", err)
	case <-time.After(browserWait):
		t.Fatal("the run does not start")
	}
	return c, func() {
		t.Helper()
		select {
		case err := <-ran:
			require.NoError(t, err)
		case <-time.After(browserWait):
			t.Fatal("the run does not end")
		}
	}
}

// cutProxy is a reverse proxy in front of the relay that the test can cut:
// it closes its clients' connections, and while it is down it closes each
// new one without an answer.
type cutProxy struct {
	*httptest.Server
	mu   sync.Mutex
	down bool
	reqs []proxied
}

// proxied is a request the proxy got: its Last-Event-ID, and the relay's
// status, or Refused when the proxy was down.
type proxied struct {
	LastEventID []string
	Status      int
	Refused     bool
}

// newCutProxy starts a cutProxy in front of base, and stops it when t ends.
func newCutProxy(t *testing.T, base string) *cutProxy {
	target, err := url.Parse(base)
	require.NoError(t, err)
	p := &cutProxy{}
	rp := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(target) },
		FlushInterval: -1,
		ModifyResponse: func(resp *http.Response) error {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.reqs = append(p.reqs, proxied{LastEventID: resp.Request.Header.Values("Last-Event-ID"), Status: resp.StatusCode})
			return nil
		},
		ErrorLog: log.New(io.Discard, "", 0), // the cuts
	}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		p.mu.Lock()
		down := p.down
		if down {
			p.reqs = append(p.reqs, proxied{LastEventID: req.Header.Values("Last-Event-ID"), Refused: true})
		}
		p.mu.Unlock()
		if down {
			panic(http.ErrAbortHandler) // the server closes the connection
		}
		rp.ServeHTTP(w, req)
	}))
	t.Cleanup(p.Close)
	return p
}

// cut closes the connections of the proxy's clients, and those that come
// until restore.
func (p *cutProxy) cut() {
	p.mu.Lock()
	p.down = true
	p.mu.Unlock()
	p.CloseClientConnections()
}

// restore ends a cut: the proxy passes new requests to the relay again.
func (p *cutProxy) restore() {
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
}

// requests returns the requests the proxy got, in order.
func (p *cutProxy) requests() []proxied {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.reqs)
}
