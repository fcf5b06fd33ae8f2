// Tests of GET /threads/{threadId}/events?follow=thread: who may follow, the bounds, the
// keep-alives, and what an idle follower holds. storetest's FollowThread scenarios test the
// rest on every store.

package relay_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aguistate/aguistate"
	"github.com/aguistate/aguistate/internal/agenttest"
	"github.com/aguistate/aguistate/relay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// followURL returns the URL that follows thread across runs on the relay
// at base.
func followURL(base, thread string) string {
	return base + "/threads/" + thread + "/events?follow=thread"
}

// TestFollowThreadRefused: a follower is asked of the Authorize hook as
// any viewer is (ActionJoin, the thread), and refused as one; a follow
// value the relay does not know is a 400.
func TestFollowThreadRefused(t *testing.T) {
	t.Parallel()
	hook := &recorder{}
	r := relay.New(&aguistate.Agent{}, &relay.Options{Authorize: hook.authorize})
	base := serve(t, r)
	tests := []struct {
		name, reason string
		auth, query  string
		status       int
	}{
		{"no token", "401, as every route", "", "follow=thread", http.StatusUnauthorized},
		{"forbidden", "403", "Bearer bad", "follow=thread", http.StatusForbidden},
		{"hook down", "503", "Bearer down", "follow=thread", http.StatusServiceUnavailable},
		{"unknown follow", "a follow other than thread", "Bearer good", "follow=run", http.StatusBadRequest},
		{"empty follow", "follow without a value", "Bearer good", "follow=", http.StatusBadRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, _, body := send(t, http.MethodGet, base+"/threads/t1/events?"+tc.query, tc.auth, nil)
			assert.Equal(t, tc.status, status, "%s: %s", tc.reason, body)
			assert.Equal(t, []asked{{relay.ActionJoin, "t1"}}, hook.take(), "the hook is asked first")
		})
	}
}

// openFollow sends GET url with Authorization auth until the test ends or
// the returned function is called, and returns the answer's status. A 200
// stays open, as a follower.
func openFollow(t *testing.T, url string) (int, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp.StatusCode, func() {
		cancel()
		resp.Body.Close()
	}
}

// TestFollowThreadBounds: followers count in MaxThreadViewers and
// MaxViewers, a thread before its first run too, and one that leaves
// makes room.
func TestFollowThreadBounds(t *testing.T) {
	t.Parallel()
	r := relay.New(&aguistate.Agent{}, &relay.Options{MaxViewers: 2, MaxThreadViewers: 1})
	base := serve(t, r)
	status, leave := openFollow(t, followURL(base, "a"))
	require.Equal(t, http.StatusOK, status, "a thread before its first run")
	status, _ = openFollow(t, followURL(base, "a"))
	assert.Equal(t, http.StatusTooManyRequests, status, "MaxThreadViewers")
	status, _ = openFollow(t, followURL(base, "b"))
	require.Equal(t, http.StatusOK, status)
	status, _ = openFollow(t, followURL(base, "c"))
	assert.Equal(t, http.StatusServiceUnavailable, status, "MaxViewers")
	leave()
	waitFor(t, "the follower that left makes room", func() bool {
		status, leave := openFollow(t, followURL(base, "a"))
		defer leave()
		return status == http.StatusOK
	})
}

// TestFollowThreadKeepAlive: between runs, and before the first, a
// follower gets the retry field at once, then a keep-alive comment at
// each interval.
func TestFollowThreadKeepAlive(t *testing.T) {
	t.Parallel()
	r := relay.New(&aguistate.Agent{}, &relay.Options{Retry: 250 * time.Millisecond})
	relay.SetKeepAlive(r, 20*time.Millisecond)
	base := serve(t, r)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, followURL(base, "t"), nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	lines := bufio.NewScanner(resp.Body)
	var got []string
	for len(got) < 4 && lines.Scan() {
		got = append(got, lines.Text())
	}
	require.NoError(t, lines.Err())
	assert.Equal(t, []string{"retry: 250", ": keep-alive", ": keep-alive", ": keep-alive"}, got)
}

// BenchmarkIdleFollowers measures what 1,000 followers that wait for a
// run cost the process serving them: the goroutines and live heap added
// per follower, on one thread or each on its own. The clients are raw TCP
// connections, which hold no goroutine. "net/http" is the floor: a handler
// that writes its header and waits, as an idle follower does.
func BenchmarkIdleFollowers(b *testing.B) {
	const followers = 1000
	idle := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte("retry: 1000\n"))
		http.NewResponseController(w).Flush()
		<-req.Context().Done()
	})
	cases := []struct {
		name   string
		relay  bool // else the floor, idle
		own    bool // a thread per follower, else one
		filled bool // each thread has a finished run, which the follower gets first
	}{
		{"net/http", false, false, false},
		{"relay/one thread", true, false, false},
		{"relay/own threads", true, true, false},
		{"relay/own threads with a run", true, true, true},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			thread := func(i int) string {
				if tc.own {
					return fmt.Sprint("t", i)
				}
				return "t"
			}
			for b.Loop() {
				var h http.Handler = idle
				var r *relay.Relay
				if tc.relay {
					store := relay.NewMemory(nil)
					for i := 0; tc.filled && i < followers; i++ {
						fillThread(b, store, thread(i))
					}
					r = relay.New(&aguistate.Agent{}, &relay.Options{Store: store, MaxThreadViewers: followers})
					h = r
				}
				addr := serveHandler(b, h)
				goroutines, heap := runtime.NumGoroutine(), heapBytes()
				conns := make([]net.Conn, followers)
				for i := range conns {
					conns[i] = dialFollower(b, addr, thread(i))
				}
				time.Sleep(100 * time.Millisecond) // the handlers reach their wait
				b.ReportMetric(float64(runtime.NumGoroutine()-goroutines)/followers, "goroutines/follower")
				b.ReportMetric(float64(heapBytes()-heap)/followers, "heap-B/follower")
				for _, c := range conns {
					c.Close()
				}
				if r != nil {
					_ = r.Close()
				}
			}
		})
	}
}

// fillThread stores a finished run of 20 events of about 200 bytes in
// thread, with a checkpoint at its end.
func fillThread(b *testing.B, store relay.Store, thread string) {
	ctx := context.Background()
	c := aguistate.New(nil)
	events := bigEvents(18, 150)
	for i, ev := range events {
		require.NoError(b, c.Apply(ev))
		require.NoError(b, store.Append(ctx, thread, int64(i+1), ev))
	}
	require.NoError(b, store.SaveCheckpoint(ctx, thread, int64(len(events)), c.Checkpoint()))
}

// serveHandler serves h on a loopback address until b ends, and returns
// the address.
func serveHandler(b *testing.B, h http.Handler) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(b, err)
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// dialFollower follows thread on the server at addr with a raw connection,
// and returns it once the answer's header and retry field have come, with
// the prelude when the thread has one.
func dialFollower(b *testing.B, addr, thread string) net.Conn {
	c, err := net.Dial("tcp", addr)
	require.NoError(b, err)
	_, err = fmt.Fprintf(c, "GET /threads/%s/events?follow=thread HTTP/1.1\r\nHost: relay\r\n\r\n", thread)
	require.NoError(b, err)
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		require.NoError(b, err)
		if strings.HasPrefix(line, "retry:") {
			return c
		}
	}
}

// TestConsumerFollowThread follows a thread with a Go client
// (aguistate.Consumer.FollowThread) behind one address served by two
// relays on one store: it joins after a run, by prelude, gets a run on the
// first relay, goes on after
// that relay closes (its reconnect reaches the second), gets a run there,
// and returns nil once the thread is deleted, holding the thread as the
// log makes it.
func TestConsumerFollowThread(t *testing.T) {
	t.Parallel()
	store := relay.NewMemory(nil)
	agent := agenttest.NewScript(t, echo(2))
	a, _ := newRelay(t, agent, relay.Options{Store: store})
	b, _ := newRelay(t, agent, relay.Options{Store: store})
	var serving atomic.Pointer[relay.Relay]
	serving.Store(a)
	base := serveFunc(t, func(w http.ResponseWriter, req *http.Request) { serving.Load().ServeHTTP(w, req) })

	_, err := runThread(t, base, "r0")
	require.NoError(t, err)
	viewer := aguistate.New(nil)
	ends := make(chan string, 100) // a RUN_FINISHED's run id
	viewer.Subscribe(func(ch aguistate.Change) {
		if ch.Event.Type == "RUN_FINISHED" {
			ends <- viewer.RunID()
		}
	})
	followed := make(chan error, 1)
	go func() {
		followed <- viewer.FollowThread(testContext(t), &aguistate.Agent{}, base+"/threads/t/events")
	}()
	waitEnd := func(run string) {
		select {
		case got := <-ends:
			require.Equal(t, run, got)
		case err := <-followed:
			t.Fatalf("FollowThread returned before run %s ended: %v", run, err)
		case <-time.After(30 * time.Second):
			t.Fatalf("waited 30 s in vain for run %s to end", run)
		}
	}
	waitFor(t, "the viewer joins by prelude", func() bool { return viewer.RunID() == "r0" })
	_, err = runThread(t, base, "r1")
	require.NoError(t, err)
	waitEnd("r1")
	serving.Store(b)
	require.NoError(t, a.Close())
	_, err = runThread(t, base, "r2")
	require.NoError(t, err)
	waitEnd("r2")
	assert.Equal(t, threadJSON(t, consumerOf(t, dataOf(logEvents(t, store, "t")))), threadJSON(t, viewer))

	require.NoError(t, store.Delete(testContext(t), "t"))
	select {
	case err := <-followed:
		assert.NoError(t, err, "the thread was deleted")
	case <-time.After(30 * time.Second):
		t.Fatal("FollowThread goes on after the thread's delete")
	}
}

// logEvents returns the events of thread's log in store, as a viewer gets
// them.
func logEvents(t *testing.T, store relay.Store, thread string) []sseEvent {
	var out []sseEvent
	for e, err := range store.Read(testContext(t), thread, 0) {
		require.NoError(t, err)
		out = append(out, sseEvent{fmt.Sprint(e.Pos), string(e.Event)})
	}
	return out
}

// echo is an agent's script: each run streams its RUN_STARTED, n CUSTOM
// events and its RUN_FINISHED, with the input's thread and run ids.
func echo(n int) func(input []byte) [][]byte {
	return func(input []byte) [][]byte {
		var in struct{ ThreadID, RunID string }
		_ = json.Unmarshal(input, &in)
		ids := fmt.Sprintf(`"threadId":%q,"runId":%q`, in.ThreadID, in.RunID)
		events := [][]byte{[]byte(`{"type":"RUN_STARTED",` + ids + `}`)}
		for i := range n {
			events = append(events, fmt.Appendf(nil, `{"type":"CUSTOM","name":%q,"value":%d}`, in.RunID, i))
		}
		return append(events, []byte(`{"type":"RUN_FINISHED",`+ids+`}`))
	}
}
