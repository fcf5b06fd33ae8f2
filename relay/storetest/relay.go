// Conformance tests of relays on a store: joins, two relays on one thread, a relay killed mid-
// run.

package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aguistate/aguistate"
	"github.com/aguistate/aguistate/internal/agenttest"
	"github.com/aguistate/aguistate/relay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The relay's scenarios on the store: relays that share it as replicas
// do, one killed, one restarted, and a store that goes down.

// script returns an agent's script: each run streams a RUN_STARTED, a
// state, a text message in n pieces (named after the run, so that the runs
// of a thread hold distinct messages), and a RUN_FINISHED.
func script(n int) func(input []byte) [][]byte {
	return func(input []byte) [][]byte {
		var in struct{ ThreadID, RunID string }
		_ = json.Unmarshal(input, &in)
		ids := fmt.Sprintf(`"threadId":%q,"runId":%q`, in.ThreadID, in.RunID)
		msg := fmt.Sprintf(`"messageId":"m-%s"`, in.RunID)
		events := [][]byte{
			[]byte(`{"type":"RUN_STARTED",` + ids + `}`),
			[]byte(`{"type":"STATE_SNAPSHOT","snapshot":{"step":0}}`),
			[]byte(`{"type":"TEXT_MESSAGE_START",` + msg + `,"role":"assistant"}`),
		}
		for i := range n {
			events = append(events, fmt.Appendf(nil, `{"type":"TEXT_MESSAGE_CONTENT",%s,"delta":"piece %d "}`, msg, i))
			events = append(events, fmt.Appendf(nil, `{"type":"STATE_DELTA","delta":[{"op":"replace","path":"/step","value":%d}]}`, i+1))
		}
		return append(events,
			[]byte(`{"type":"TEXT_MESSAGE_END",`+msg+`}`),
			[]byte(`{"type":"RUN_FINISHED",`+ids+`}`))
	}
}

// applied returns a function that returns how many events c has applied
// since the call.
func applied(c *aguistate.Consumer) func() int {
	var n atomic.Int64
	c.Subscribe(func(ch aguistate.Change) {
		if ch.Event.Type != "" {
			n.Add(1)
		}
	})
	return func() int { return int(n.Load()) }
}

// waitFor waits until cond holds, for at most 30 s.
func waitFor(tb testing.TB, what string, cond func() bool) {
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			tb.Fatalf("waited 30 s for this in vain: %s", what)
		}
	}
}

// joined returns a channel closed at c's first change.
func joined(c *aguistate.Consumer) <-chan struct{} {
	ch := make(chan struct{})
	var once sync.Once
	c.Subscribe(func(aguistate.Change) { once.Do(func() { close(ch) }) })
	return ch
}

// relayServer is a relay on a store, served on a loopback address.
type relayServer struct {
	*relay.Relay
	srv *httptest.Server
}

// newRelayServer starts a relay in front of agent on store, with short
// leases, a checkpoint every few events and a short log (with whole, a
// log that keeps every event), and stops it when tb ends.
func newRelayServer(tb testing.TB, agent string, store relay.Store, whole ...bool) *relayServer {
	every, keep := 4, 8
	if len(whole) > 0 && whole[0] {
		every, keep = 1000, 1000
	}
	return startRelay(tb, agent, relay.Options{Store: store, LeaseTTL: 500 * time.Millisecond, Retry: 10 * time.Millisecond,
		CheckpointEvery: every, KeepEvents: keep})
}

// startRelay starts a relay in front of agent with o, and stops it when tb
// ends.
func startRelay(tb testing.TB, agent string, o relay.Options) *relayServer {
	r := relay.New(&aguistate.Agent{URL: agent}, &o)
	s := &relayServer{Relay: r, srv: httptest.NewServer(r)}
	tb.Cleanup(func() {
		s.srv.CloseClientConnections()
		_ = r.Close()
		s.srv.Close()
	})
	return s
}

// client returns a Consumer that starts thread with a user message, and
// the Agent that reaches the relay at base, reconnecting.
func client(tb testing.TB, base, thread string) (*aguistate.Consumer, *aguistate.Agent) {
	c := aguistate.New(nil)
	require.NoError(tb, c.StartRun(aguistate.RunAgentInput{ThreadID: thread}))
	require.NoError(tb, c.AddMessages(aguistate.UserMessage("hello").WithID("u1")))
	return c, &aguistate.Agent{URL: base + "/agent", Reconnects: 10}
}

// logOf returns the events of thread's log in s, from position 1, which
// must not be trimmed.
func logOf(tb testing.TB, s relay.Store, thread string) []relay.Entry {
	got, err := readAll(testContext(tb), s, thread, 0)
	require.NoError(tb, err)
	return got
}

// threadAt returns the thread as s holds it, from its checkpoint and log,
// and its position.
func threadAt(tb testing.TB, s relay.Store, thread string) (*aguistate.Consumer, int64) {
	ctx := testContext(tb)
	c := aguistate.New(nil)
	pos, data, err := s.LoadCheckpoint(ctx, thread)
	if !errors.Is(err, relay.ErrNoCheckpoint) {
		require.NoError(tb, err)
		c, err = aguistate.Restore(data, nil)
		require.NoError(tb, err)
	}
	for e, err := range s.Read(ctx, thread, pos) {
		require.NoError(tb, err)
		require.NoError(tb, c.Apply(e.Event))
		pos = e.Pos
	}
	return c, pos
}

// waitLog waits until thread's log in s reaches position n.
func waitLog(tb testing.TB, s relay.Store, thread string, n int64) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, pos := threadAt(tb, s, thread); pos >= n {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("thread %q: the log does not reach position %d", thread, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// runsOf returns the runIds that the RUN_STARTED events of a log record in
// their input.
func runsOf(tb testing.TB, log []relay.Entry) []string {
	var runs []string
	for _, e := range log {
		var ev struct {
			Type  string
			Input struct{ RunID string }
		}
		require.NoError(tb, json.Unmarshal(e.Event, &ev))
		if ev.Type == "RUN_STARTED" {
			runs = append(runs, ev.Input.RunID)
		}
	}
	return runs
}

// freeLeases grants every lease, as a store whose leases expired under
// slow relays would: relays on it rely on the log's compare-and-set alone.
type freeLeases struct{ relay.Store }

func (freeLeases) Lease(context.Context, string, string, string, time.Duration) error { return nil }

// testRelayOneWriter has two relays start a run of one thread at once.
// With leases the second is refused at once. With leases that every relay
// gets, both call the agent before either records an event, and the log's
// compare-and-set refuses the second's first append. Either way exactly
// one run is recorded, whole, and the loser's client gets 409.
func testRelayOneWriter(t *testing.T, h Harness) {
	for _, leases := range []bool{true, false} {
		t.Run(fmt.Sprint("leases=", leases), func(t *testing.T) {
			s, ns := open(t, h)
			thread := "t"
			agent := agenttest.NewScript(t, script(3))
			release := agent.Hold(3)
			if !leases {
				release = agent.Hold(0) // both relays call the agent before the first event
			}
			var relays []*relayServer
			for range 2 {
				store := h.Open(t, ns, "")
				if !leases {
					store = freeLeases{store}
				}
				relays = append(relays, newRelayServer(t, agent.URL, store, true))
			}
			type result struct {
				run string
				err error
			}
			results := make(chan result, 2)
			for i, r := range relays {
				go func() {
					c, a := client(t, r.srv.URL, thread)
					run := fmt.Sprint("run-", i)
					_, err := c.RunAgent(testContext(t), a, &aguistate.RunOptions{RunID: run})
					results <- result{run, err}
				}()
			}
			if !leases {
				waitFor(t, "both relays call the agent", func() bool { return len(agent.Inputs()) == 2 })
				release()
			}
			loser := <-results // refused before the agent goes on, with leases
			release()
			winner := <-results
			if !leases && loser.err == nil {
				loser, winner = winner, loser
			}
			var he *aguistate.HTTPError
			require.ErrorAs(t, loser.err, &he, "the loser's client is refused")
			assert.Equal(t, http.StatusConflict, he.StatusCode)
			require.NoError(t, winner.err)
			log := logOf(t, s, thread)
			assert.Equal(t, []string{winner.run}, runsOf(t, log), "one run is recorded, the winner's")
			for i, e := range log {
				assert.Equal(t, int64(i+1), e.Pos)
			}
			assert.Len(t, log, len(script(3)([]byte(`{}`))), "the winner's run is whole")
		})
	}
}

// balancer is a reverse proxy in front of one relay at a time, as a load
// balancer in front of replicas.
type balancer struct {
	*httptest.Server
	to atomic.Pointer[url.URL]
}

func newBalancer(tb testing.TB, to string) *balancer {
	b := &balancer{}
	b.switchTo(tb, to)
	proxy := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(b.to.Load()) },
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			http.Error(w, err.Error(), http.StatusBadGateway)
		},
	}
	b.Server = httptest.NewServer(proxy)
	tb.Cleanup(b.Close)
	return b
}

func (b *balancer) switchTo(tb testing.TB, to string) {
	u, err := url.Parse(to)
	require.NoError(tb, err)
	b.to.Store(u)
}

// testRelayKilled kills a relay in the middle of a run, with a client
// running it and a viewer following it there: both reconnect, through the
// balancer, to another relay, which serves them from the checkpoint and the
// log and, once the dead relay's lease has expired, ends the run with a
// RUN_ERROR of code CodeRunLost. Nothing is lost or doubled.
func testRelayKilled(t *testing.T, h Harness) {
	s, ns := open(t, h)
	thread := "t"
	agent := agenttest.NewScript(t, script(6))
	release := agent.Hold(9)
	defer release()
	killed := newFault()
	a, b := newRelayServer(t, agent.URL, faulty{h.Open(t, ns, ""), killed}), newRelayServer(t, agent.URL, h.Open(t, ns, ""))
	lb := newBalancer(t, a.srv.URL)

	c, ag := client(t, lb.URL, thread)
	got := applied(c)
	ran := make(chan error, 1)
	go func() {
		_, err := c.RunAgent(testContext(t), ag, nil)
		ran <- err
	}()
	waitFor(t, "the client applies the run's first events", func() bool { return got() >= 9 })
	viewer := aguistate.New(nil)
	seen := joined(viewer)
	followed := make(chan error, 1)
	go func() {
		_, err := viewer.Follow(testContext(t), &aguistate.Agent{Reconnects: 10}, lb.URL+"/threads/"+thread+"/events")
		followed <- err
	}()
	<-seen // the viewer joined on a

	killed.fail(false)
	lb.switchTo(t, b.srv.URL)
	a.srv.CloseClientConnections()

	for name, err := range map[string]error{"the client": <-ran, "the viewer": <-followed} {
		var re *aguistate.RunError
		if assert.ErrorAs(t, err, &re, "%s learns that the run is lost", name) {
			assert.Equal(t, relay.CodeRunLost, re.Code, name)
		}
	}
	want, _ := threadAt(t, s, thread)
	assert.False(t, want.Running(), "the other relay ended the run")
	assert.Equal(t, threadOf(t, want), threadOf(t, viewer), "the viewer holds the thread")
	assert.Equal(t, threadOf(t, want), threadOf(t, c), "the client holds the thread")
}

// threadOf returns a Consumer's state and messages as JSON.
func threadOf(tb testing.TB, c *aguistate.Consumer) string {
	b, err := json.Marshal(map[string]any{"state": c.State(), "messages": c.Messages()})
	require.NoError(tb, err)
	return string(b)
}

// testRelayAcross has a viewer follow, on one relay, a run that another
// relay runs: it gets every event, through the store.
func testRelayAcross(t *testing.T, h Harness) {
	_, ns := open(t, h)
	thread := "t"
	agent := agenttest.NewScript(t, script(20))
	release := agent.Hold(12)
	defer release()
	a, b := newRelayServer(t, agent.URL, h.Open(t, ns, "")), newRelayServer(t, agent.URL, h.Open(t, ns, ""))
	c, ag := client(t, a.srv.URL, thread)
	ran := make(chan error, 1)
	go func() {
		_, err := c.RunAgent(testContext(t), ag, nil)
		ran <- err
	}()
	waitLog(t, h.Open(t, ns, ""), thread, 12)
	viewer := aguistate.New(nil)
	seen := joined(viewer)
	followed := make(chan error, 1)
	go func() {
		// A viewer that falls behind the log's tail reconnects, and gets a prelude.
		_, err := viewer.Follow(testContext(t), &aguistate.Agent{Reconnects: 5}, b.srv.URL+"/threads/"+thread+"/events")
		followed <- err
	}()
	<-seen // the viewer joined on b
	release()
	require.NoError(t, <-ran)
	require.NoError(t, <-followed)
	assert.Equal(t, threadOf(t, c), threadOf(t, viewer))
}

// testRelayRestart runs threads through a relay, closes it, and starts
// another on the store, as a restarted process: it serves the threads,
// replays their logs and goes on with them.
func testRelayRestart(t *testing.T, h Harness) {
	_, ns := open(t, h)
	agent := agenttest.NewScript(t, script(5))
	first := newRelayServer(t, agent.URL, h.Open(t, ns, ""))
	want, ag := client(t, first.srv.URL, "t")
	for range 3 { // a thread of three runs
		_, err := want.RunAgent(testContext(t), ag, nil)
		require.NoError(t, err)
	}
	first.srv.CloseClientConnections()
	require.NoError(t, first.Close())

	again := newRelayServer(t, agent.URL, h.Open(t, ns, ""))
	resp, err := http.Get(again.srv.URL + "/threads/t")
	require.NoError(t, err)
	defer resp.Body.Close()
	var got struct{ State, Messages json.RawMessage }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&got))
	var w struct{ State, Messages json.RawMessage }
	require.NoError(t, json.Unmarshal([]byte(threadOf(t, want)), &w))
	assert.JSONEq(t, string(w.State), string(got.State), "the thread reloaded")
	assert.JSONEq(t, string(w.Messages), string(got.Messages))

	viewer := aguistate.New(nil)
	res, err := viewer.Follow(testContext(t), &aguistate.Agent{}, again.srv.URL+"/threads/t/events")
	require.NoError(t, err)
	assert.Equal(t, "success", res.Outcome, "a prelude of the finished run")
	assert.Equal(t, threadOf(t, want), threadOf(t, viewer))
	_, err = want.RunAgent(testContext(t), &aguistate.Agent{URL: again.srv.URL + "/agent"}, nil)
	require.NoError(t, err, "the thread goes on")
	res, err = viewer.Follow(testContext(t), &aguistate.Agent{}, again.srv.URL+"/threads/t/events")
	require.NoError(t, err)
	assert.Equal(t, "success", res.Outcome, "the viewer follows on after its last event")
	assert.Equal(t, threadOf(t, want), threadOf(t, viewer))
}

// testRelayStoreDown serves a relay whose store is down: requests fail
// with a clear error (503, "aguistate: ..."), /healthz says so (503),
// nothing of the thread is recorded, and once the store is back a run that
// was under way goes on whole, though the store went down with an append
// on its way.
func testRelayStoreDown(t *testing.T, h Harness) {
	ns := namespace(t)
	agent := agenttest.NewScript(t, script(5))
	o := newOutage(t, h, ns)
	o.fail()
	down := newRelayServer(t, agent.URL, o.open(t))
	c, ag := client(t, down.srv.URL, "t")
	_, err := c.RunAgent(testContext(t), ag, nil)
	var he *aguistate.HTTPError
	require.ErrorAs(t, err, &he)
	assert.Equal(t, http.StatusServiceUnavailable, he.StatusCode)
	assert.True(t, strings.HasPrefix(he.Body, "aguistate: "), "a clear error: %q", he.Body)
	assert.Empty(t, agent.Inputs(), "the agent was not called")
	for _, path := range []string{"/threads/t", "/threads/t/events", "/threads", "/healthz"} {
		resp, err := http.Get(down.srv.URL + path)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, path)
	}
	_, pos := threadAt(t, h.Open(t, ns, ""), "t")
	assert.Zero(t, pos, "no partial thread")

	// A store that goes down in the middle of a run and comes back.
	o = newOutage(t, h, ns)
	agent = agenttest.NewScript(t, script(8))
	release := agent.Hold(6)
	r := newRelayServer(t, agent.URL, o.open(t), true)
	c, ag = client(t, r.srv.URL, "u")
	ran := make(chan error, 1)
	go func() {
		_, err := c.RunAgent(testContext(t), ag, nil)
		ran <- err
	}()
	direct := h.Open(t, ns, "")
	waitLog(t, direct, "u", 6)
	o.fail()
	release()
	time.Sleep(300 * time.Millisecond) // the relay's appends fail meanwhile
	o.restore()
	require.NoError(t, <-ran, "the run goes on once the store is back")
	log := logOf(t, direct, "u")
	for i, e := range log {
		assert.Equal(t, int64(i+1), e.Pos)
	}
	want := aguistate.New(nil)
	for _, e := range log {
		require.NoError(t, want.Apply(e.Event))
	}
	assert.False(t, want.Running(), "the run ended")
	assert.Equal(t, threadOf(t, want), threadOf(t, c), "nothing lost or doubled")
}

// firstPos returns the first position that thread's log in s holds, by
// bisection on the reads that the log refuses as trimmed, given its last
// position last.
func firstPos(tb testing.TB, s relay.Store, thread string, last int64) int64 {
	ctx := testContext(tb)
	lo, hi := int64(0), last // a read after hi succeeds; find the least such
	for lo < hi {
		mid := (lo + hi) / 2
		var err error
		for _, err = range s.Read(ctx, thread, mid) {
			break
		}
		if errors.Is(err, relay.ErrOutOfRange) {
			lo = mid + 1
		} else {
			require.NoError(tb, err)
			hi = mid
		}
	}
	return lo + 1
}

// testRelayTrim runs a long run whose POST follows it through the relay's
// hub: the trim at the run's end may be held back for the hub, which lags
// behind the writer, but once the run is over the log holds no more than
// KeepEvents events before the last checkpoint, and one checkpoint's
// interval.
func testRelayTrim(t *testing.T, h Harness) {
	s, ns := open(t, h)
	agent := agenttest.NewScript(t, script(1000))
	r := newRelayServer(t, agent.URL, h.Open(t, ns, "")) // a checkpoint every 4 events, 8 kept
	c, ag := client(t, r.srv.URL, "t")
	_, err := c.RunAgent(testContext(t), ag, nil)
	require.NoError(t, err)
	_, last := threadAt(t, s, "t")
	require.Equal(t, int64(len(script(1000)([]byte(`{}`)))), last, "the run is recorded")
	var first int64
	for i := 0; ; i++ {
		if first = firstPos(t, s, "t", last); last-first+1 <= 8+4 {
			break
		}
		if i == 3000 {
			t.Fatalf("the log holds %d events after the run (positions %d to %d), not at most 12", last-first+1, first, last)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// testRelayWrapped runs a relay on a store wrapped in a struct that embeds
// it, on a thread whose run a relay left open (it stopped without ending
// the run, and its lease is gone): the relay takes the lease, ends the old
// run with a RUN_ERROR of code CodeRunLost, and runs the new one. Through
// a wrapper that lost the leases, the thread would answer 409 for good.
func testRelayWrapped(t *testing.T, h Harness) {
	s, _ := open(t, h)
	mustAppend(t, s, "t", 1, []byte(`{"type":"RUN_STARTED","threadId":"t","runId":"lost"}`))
	agent := agenttest.NewScript(t, script(1))
	r := newRelayServer(t, agent.URL, wrapped{s}, true)
	c, ag := client(t, r.srv.URL, "t")
	_, err := c.RunAgent(testContext(t), ag, &aguistate.RunOptions{RunID: "new"})
	require.NoError(t, err, "the new run runs")
	var types []string
	for _, e := range logOf(t, s, "t") {
		var ev struct{ Type, Code string }
		require.NoError(t, json.Unmarshal(e.Event, &ev))
		types = append(types, strings.TrimSpace(ev.Type+" "+ev.Code))
	}
	require.GreaterOrEqual(t, len(types), 3)
	assert.Equal(t, []string{"RUN_STARTED", "RUN_ERROR " + relay.CodeRunLost, "RUN_STARTED"}, types[:3], "the lost run ended first")
	assert.Equal(t, "RUN_FINISHED", types[len(types)-1])
}
