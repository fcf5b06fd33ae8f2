// Tests of the relay command: it runs against an httptest agent and a store, and is driven
// over HTTP as a client would.

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aguistate/aguistate"
	"github.com/aguistate/aguistate/internal/agenttest"
	"github.com/aguistate/aguistate/relay"
	"github.com/aguistate/aguistate/relay/pgstore"
	"github.com/aguistate/aguistate/relay/redisstore"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lockedBuffer is a bytes.Buffer safe for a writer and a reader.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// start runs the command with args in the background and returns its base
// URL; it stops it when t ends, and checks that it exits with 0.
func start(t *testing.T, args ...string) string {
	base, _ := startLogged(t, args...)
	return base
}

// startLogged is start, and returns the command's standard error too.
func startLogged(t *testing.T, args ...string) (string, *lockedBuffer) {
	ctx, cancel := context.WithCancel(context.Background())
	listening := make(chan string, 1)
	exited := make(chan int, 1)
	var stderr lockedBuffer
	go func() { exited <- run(ctx, append(args, "-listen", "127.0.0.1:0"), &stderr, listening) }()
	select {
	case addr := <-listening:
		t.Cleanup(func() {
			cancel()
			assert.Equal(t, 0, <-exited, "exit status after a signal; stderr:\n%s", stderr.String())
		})
		assert.Contains(t, stderr.String(), "relay: http://"+addr)
		return "http://" + addr, &stderr
	case code := <-exited:
		cancel()
		t.Fatalf("exit status %d: %s", code, stderr.String())
		return "", nil
	}
}

// script is an agent's run: it echoes the input's thread and run ids.
func script(input []byte) [][]byte {
	var in struct{ ThreadID, RunID string }
	_ = json.Unmarshal(input, &in)
	ids := fmt.Sprintf(`"threadId":%q,"runId":%q`, in.ThreadID, in.RunID)
	return [][]byte{
		[]byte(`{"type":"RUN_STARTED",` + ids + `}`),
		[]byte(`{"type":"STATE_SNAPSHOT","snapshot":{"n":1}}`),
		[]byte(`{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}`),
		[]byte(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"hello"}`),
		[]byte(`{"type":"TEXT_MESSAGE_END","messageId":"m1"}`),
		[]byte(`{"type":"RUN_FINISHED",` + ids + `}`),
	}
}

// newThread returns a thread id no earlier test used, and removes the
// thread of each tenant (and of tenant "") from the machine's stores when t
// ends.
func newThread(t *testing.T, tenants ...string) string {
	id := fmt.Sprintf("example-%d", time.Now().UnixNano())
	t.Cleanup(func() {
		ctx := context.Background()
		var stores []relay.Store
		if redisURL(t) != "" {
			rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
			defer rdb.Close()
			stores = append(stores, redisstore.New(rdb, nil))
		}
		if url := pgURL(t); url != "" {
			if pool, err := pgxpool.New(ctx, url); err == nil {
				defer pool.Close()
				if s, err := pgstore.New(pool, nil); err == nil {
					defer s.Close()
					stores = append(stores, s)
				}
			}
		}
		for _, s := range stores {
			for _, tenant := range append(tenants, "") {
				_ = s.Tenant(tenant).Delete(ctx, id)
			}
		}
	})
	return id
}

// stores returns the -store values of the stores this machine has:
// memory, and Redis and PostgreSQL when they answer.
func stores(t *testing.T) []string {
	stores := []string{"memory"}
	if redisURL(t) != "" {
		stores = append(stores, redisURL(t))
	}
	if pgURL(t) != "" {
		stores = append(stores, pgURL(t))
	}
	return stores
}

// runThread runs thread id through the relay at base and returns the
// client's Consumer.
func runThread(t *testing.T, base, id string) *aguistate.Consumer {
	c := aguistate.New(nil)
	require.NoError(t, c.AddMessages(aguistate.UserMessage("hi").WithID("u1")))
	res, err := c.RunAgent(context.Background(), &aguistate.Agent{URL: base + "/agent"}, &aguistate.RunOptions{ThreadID: id})
	require.NoError(t, err)
	assert.Equal(t, "success", res.Outcome)
	return c
}

// thread returns GET /threads/{id} at base.
func thread(t *testing.T, base, id string) string {
	resp, err := http.Get(base + "/threads/" + id)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(body)
}

// threadJSON returns a Consumer's thread as GET /threads/{threadId} does.
func threadJSON(t *testing.T, c *aguistate.Consumer) string {
	b, err := json.Marshal(map[string]any{"state": c.State(), "messages": c.Messages()})
	require.NoError(t, err)
	return string(b)
}

// TestRelay runs a thread through the relay on every store this machine
// has: the client, GET /threads/{id} and a viewer who joins after the run
// hold the same thread; a second relay on a shared store serves it too.
func TestRelay(t *testing.T) {
	agent := agenttest.NewScript(t, script)
	for _, store := range stores(t) {
		t.Run(strings.SplitN(store, ":", 2)[0], func(t *testing.T) {
			id := newThread(t)
			base := start(t, "-agent", agent.URL, "-store", store)
			c := runThread(t, base, id)
			assert.JSONEq(t, threadJSON(t, c), thread(t, base, id))
			viewer := aguistate.New(nil)
			_, err := viewer.Follow(context.Background(), &aguistate.Agent{}, base+"/threads/"+id+"/events")
			require.NoError(t, err)
			assert.JSONEq(t, threadJSON(t, c), threadJSON(t, viewer), "a viewer joins by prelude")
			if store != "memory" {
				other := start(t, "-agent", agent.URL, "-store", store)
				assert.JSONEq(t, threadJSON(t, c), thread(t, other, id), "another relay on the store serves the thread")
			}
		})
	}
}

// TestPoolSize sizes the connection pool of each store from its URL: the
// line the relay writes when it listens gives the size, the default when
// the URL does not set it.
func TestPoolSize(t *testing.T) {
	agent := agenttest.NewScript(t, script)
	var cases []struct{ store, want string }
	if url := redisURL(t); url != "" {
		cases = append(cases,
			struct{ store, want string }{url + "?pool_size=3&pool_timeout=2s", "a pool of 3 connections"},
			struct{ store, want string }{url, fmt.Sprintf("a pool of %d connections", 10*runtime.GOMAXPROCS(0))})
	}
	if url := pgURL(t); url != "" {
		cases = append(cases, struct{ store, want string }{url + "?pool_max_conns=3", "a pool of 3 connections"})
	}
	for _, tt := range cases {
		_, stderr := startLogged(t, "-agent", agent.URL, "-store", tt.store)
		assert.Contains(t, stderr.String(), tt.want, tt.store)
	}
}

// TestUsage checks the exit status of bad usage, and of a store that does
// not answer.
func TestUsage(t *testing.T) {
	for _, tt := range []struct {
		args   []string
		status int
		stderr string
	}{
		{nil, 2, "usage: relay -agent URL"},
		{[]string{"-agent", "http://127.0.0.1:1", "-store", "mysql://x"}, 2, "-store is memory"},
		{[]string{"-agent", "http://127.0.0.1:1", "extra"}, 2, "usage:"},
		{[]string{"-agent", "http://127.0.0.1:1", "-store", "redis://127.0.0.1:1"}, 1, "error: aguistate: the store does not answer"},
		{[]string{"-agent", "http://127.0.0.1:1", "-store", "redis://127.0.0.1:1?poolsize=3"}, 2, "unexpected option: poolsize"},
		{[]string{"-agent", "http://127.0.0.1:1", "-listen", "256.0.0.1:1"}, 1, "error:"},
		{[]string{"-agent", "http://127.0.0.1:1", "-tokens", "/nonexistent/tokens"}, 2, "error: -tokens:"},
		{[]string{"-agent", "http://127.0.0.1:1", "-cors-origin", "https://app.example.com/path"}, 2, "is not an origin"},
		{[]string{"-agent", "http://127.0.0.1:1", "-max-threads", "0"}, 2, "-max-threads 1 or more"},
		{[]string{"-agent", "http://127.0.0.1:1", "-ttl", "-1s"}, 2, "-ttl and -drain are 0 or more"},
	} {
		var stderr bytes.Buffer
		assert.Equal(t, tt.status, run(context.Background(), tt.args, &stderr, nil), "%v", tt.args)
		assert.Contains(t, stderr.String(), tt.stderr, "%v", tt.args)
	}
}

// TestKill kills a relay process (SIGKILL) in the middle of a run, with a
// client running it through a balancer: the client reconnects to another
// relay process on the same Redis, which ends the run as lost once the
// killed relay's lease has expired.
func TestKill(t *testing.T) {
	store := redisURL(t)
	if store == "" {
		t.Skip("Redis does not answer at 127.0.0.1:6379")
	}
	bin := buildRelay(t)
	agent := agenttest.NewScript(t, script)
	release := agent.Hold(3)
	defer release()
	thread := newThread(t)

	a, killed, _ := startProcess(t, bin, "-agent", agent.URL, "-store", store)
	b, _, _ := startProcess(t, bin, "-agent", agent.URL, "-store", store)

	var mu sync.Mutex
	to := a
	proxy := &http.Client{Transport: roundTripper(func(req *http.Request) (*http.Response, error) {
		mu.Lock()
		req.URL.Host = strings.TrimPrefix(to, "http://")
		mu.Unlock()
		return http.DefaultTransport.RoundTrip(req)
	})}
	c := aguistate.New(nil)
	require.NoError(t, c.StartRun(aguistate.RunAgentInput{ThreadID: thread}))
	got := make(chan struct{})
	var once sync.Once
	c.Subscribe(func(ch aguistate.Change) {
		if ch.Event.Type == "TEXT_MESSAGE_START" {
			once.Do(func() { close(got) })
		}
	})
	ran := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, err := c.RunAgent(ctx, &aguistate.Agent{URL: a + "/agent", Client: proxy, Reconnects: 10}, nil)
		ran <- err
	}()
	select {
	case <-got:
	case err := <-ran:
		t.Fatalf("the run ended: %v", err)
	}
	require.NoError(t, killed.Process.Signal(syscall.SIGKILL))
	mu.Lock()
	to = b
	mu.Unlock()

	err := <-ran // the lease lasts 10 s
	var re *aguistate.RunError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, relay.CodeRunLost, re.Code)
	resp, err := http.Get(b + "/threads/" + thread)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	assert.JSONEq(t, threadJSON(t, c), string(body), "the client holds the thread, nothing lost or doubled")
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// redisURL returns the store URL of the machine's Redis, or "" (and fails
// in CI) when it does not answer.
func redisURL(t *testing.T) string {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("Redis is required in CI: %v", err)
		}
		return ""
	}
	return "redis://127.0.0.1:6379/0"
}

// pgURL returns the store URL of the machine's PostgreSQL, or "" (and
// fails in CI) when it does not answer.
func pgURL(t *testing.T) string {
	const url = "postgres://postgres@127.0.0.1:5432/test"
	conn, err := net.DialTimeout("tcp", "127.0.0.1:5432", 2*time.Second)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("PostgreSQL is required in CI: %v", err)
		}
		return ""
	}
	conn.Close()
	return url
}

// TestOrigins sets -cors-origin values: the flag keeps what
// relay.ParseOrigin makes of each (its own test has the cases), and refuses
// what it refuses.
func TestOrigins(t *testing.T) {
	t.Parallel()
	var o origins
	require.NoError(t, o.Set("HTTPS://App.example.com:443"))
	require.NoError(t, o.Set("*"))
	assert.Equal(t, origins{"https://app.example.com", "*"}, o, "as a browser writes the Origin header")
	assert.Error(t, o.Set("https://app.example.com/app"), "an origin has no path")
	assert.Len(t, o, 2, "a refused value is not kept")
}
