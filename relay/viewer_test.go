// Tests of viewers that fall behind: a viewer that never reads holds no backlog, and is cut off;
// viewers of many threads that come and go get only their own thread's events.

package relay_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aguistate/aguistate"
	"github.com/aguistate/aguistate/internal/agenttest"
	"github.com/aguistate/aguistate/internal/framing"
	"github.com/aguistate/aguistate/relay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// heapBytes returns the live heap after a collection.
func heapBytes() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// bigEvents returns a run of n CUSTOM events of size bytes each, between
// its RUN_STARTED and RUN_FINISHED.
func bigEvents(n, size int) [][]byte {
	pad := strings.Repeat("x", size)
	events := [][]byte{[]byte(`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`)}
	for i := range n {
		events = append(events, fmt.Appendf(nil, `{"type":"CUSTOM","name":"c","value":"%d%s"}`, i, pad))
	}
	return append(events, []byte(`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`))
}

// stalledViewer joins thread t at base with a raw TCP connection (whose
// receive buffer is small when small), reads the response up to the
// prelude's last event (it is then subscribed to the run), and reads
// nothing more.
func stalledViewer(t *testing.T, base string, small bool) net.Conn {
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	if small {
		require.NoError(t, conn.(*net.TCPConn).SetReadBuffer(4096))
	}
	_, err = fmt.Fprintf(conn, "GET /threads/t/events HTTP/1.1\r\nHost: relay\r\n\r\n")
	require.NoError(t, err)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(30*time.Second)))
	br := bufio.NewReaderSize(conn, 16)
	for {
		line, err := br.ReadString('\n')
		require.NoError(t, err, "the viewer reads its prelude")
		if strings.HasPrefix(line, "id: 1") {
			return conn
		}
	}
}

// startRun POSTs input to the relay at base, which must start a run of
// thread t whose agent holds it, and returns once the run has started,
// with a channel that receives the POST's status once its stream is read.
func startRun(t *testing.T, base string, input []byte) <-chan int {
	posted := make(chan int, 1)
	go func() {
		resp, err := http.Post(base+"/agent", "application/json", bytes.NewReader(input))
		if err != nil {
			posted <- 0
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		posted <- resp.StatusCode
	}()
	for i := 0; ; i++ { // the thread exists once its first event is in the log
		require.Less(t, i, 3000, "the run starts")
		if status, _ := getThread(t, base, "t"); status == http.StatusOK {
			return posted
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// smallBuffers is a listener whose connections have a small send buffer,
// so that a viewer that reads nothing blocks the relay's first large write.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(4096)
	}
	return c, err
}

// stalledServer serves r with small send buffers, and returns its base URL
// and a channel that receives the remote address of each connection once
// its request is done (idle) or it is closed.
func stalledServer(t *testing.T, r *relay.Relay) (string, <-chan string) {
	done := make(chan string, 64)
	srv := httptest.NewUnstartedServer(r)
	srv.Listener = smallBuffers{srv.Listener}
	srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
		if s == http.StateIdle || s == http.StateClosed {
			select {
			case done <- c.RemoteAddr().String():
			default:
			}
		}
	}
	srv.Start()
	t.Cleanup(func() {
		srv.CloseClientConnections()
		_ = r.Close()
		srv.Close()
	})
	return srv.URL, done
}

// TestRelayStalledViewer has a viewer join a run and never read: the relay
// keeps at most ViewerBuffer bytes of events for it, lets them go once it
// drops the viewer from its feed, and ends the viewer's response once a
// write has blocked for WriteTimeout.
func TestRelayStalledViewer(t *testing.T) {
	const n, size = 48, 1 << 20 // 48 MiB of events
	events := bigEvents(n, size)
	input := []byte(`{"threadId":"t","runId":"r","messages":[]}`)

	t.Run("budget", func(t *testing.T) {
		a := newAgent(t, events)
		release := a.Hold(1)
		store := relay.NewMemory(nil)
		r := relay.New(&aguistate.Agent{URL: a.URL}, &relay.Options{Store: store, CheckpointEvery: 4, KeepEvents: 4, WriteTimeout: time.Hour})
		base, _ := stalledServer(t, r)
		before := heapBytes()
		posted := startRun(t, base, input)
		stalledViewer(t, base, true)
		release()
		require.Equal(t, http.StatusOK, <-posted)
		last := int64(n + 2)
		for i := 0; ; i++ { // the trim at the run's end may wait for the hub
			var err error
			for _, err = range store.Read(testContext(t), "t", last-4-2) {
				break
			}
			if errors.Is(err, relay.ErrOutOfRange) {
				break
			}
			require.Less(t, i, 3000, "the log is trimmed after the run")
			time.Sleep(10 * time.Millisecond)
		}
		// What the relay holds once its goroutines have let go of the run:
		// the event being written to the viewer, the log's last events and
		// the Consumer; not the run's 48 MiB.
		var held int64
		for i := 0; i < 300; i++ {
			if held = heapBytes() - before; held < 16<<20 {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Logf("heap held with a stalled viewer after a run of %d MiB: %.1f MiB", n*size>>20, float64(held)/(1<<20))
		assert.Less(t, held, int64(16<<20), "a stalled viewer's backlog is not held")
	})

	t.Run("deadline", func(t *testing.T) {
		a := newAgent(t, events)
		release := a.Hold(1)
		r := relay.New(&aguistate.Agent{URL: a.URL}, &relay.Options{CheckpointEvery: 4, KeepEvents: 4, WriteTimeout: 100 * time.Millisecond})
		base, done := stalledServer(t, r)
		posted := startRun(t, base, input)
		conn := stalledViewer(t, base, true)
		release()
		require.Equal(t, http.StatusOK, <-posted)
		// The relay ends the viewer's response once a write has blocked for
		// WriteTimeout: its handler returns, and holds nothing.
		for timeout := time.After(30 * time.Second); ; {
			select {
			case addr := <-done:
				if addr == conn.LocalAddr().String() {
					return
				}
			case <-timeout:
				t.Fatal("the relay still serves the stalled viewer")
			}
		}
	})
}

// behind is a store whose reads, Follow included, hold only the log's
// first keep events, as a store that lost writes it acknowledged does;
// with trimmed, a read after a position before keep finds it trimmed.
type behind struct {
	relay.Store
	keep    int64
	trimmed bool
}

func (s behind) Read(ctx context.Context, thread string, after int64) iter.Seq2[relay.Entry, error] {
	return s.cut(s.Store.Read(ctx, thread, after), thread, after)
}

func (s behind) Follow(ctx context.Context, thread string, after int64) iter.Seq2[relay.Entry, error] {
	return func(yield func(relay.Entry, error) bool) {
		for e, err := range s.cut(s.Store.Read(ctx, thread, after), thread, after) {
			if !yield(e, err) || err != nil {
				return
			}
		}
		<-ctx.Done()
		yield(relay.Entry{}, ctx.Err())
	}
}

func (s behind) cut(seq iter.Seq2[relay.Entry, error], thread string, after int64) iter.Seq2[relay.Entry, error] {
	return func(yield func(relay.Entry, error) bool) {
		if s.trimmed && after > 0 && after < s.keep {
			yield(relay.Entry{}, &relay.RangeError{Thread: thread, After: after, Trimmed: true})
			return
		}
		for e, err := range seq {
			if err == nil && e.Pos > s.keep {
				return
			}
			if !yield(e, err) {
				return
			}
		}
	}
}

// TestRelayStreamLost runs a thread whose store, once the run has ended,
// holds fewer events than it acknowledged, or has trimmed the events after
// the POST's last: the POST's stream ends with a RUN_ERROR of code
// CodeStreamLost, where it used to wait for ever, or end cleanly with no
// end of the run.
func TestRelayStreamLost(t *testing.T) {
	t.Parallel()
	for _, trimmed := range []bool{false, true} {
		t.Run(fmt.Sprint("trimmed=", trimmed), func(t *testing.T) {
			t.Parallel()
			a := newAgent(t, [][]byte{
				[]byte(`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`),
				[]byte(`{"type":"STATE_SNAPSHOT","snapshot":{"a":1}}`),
				[]byte(`{"type":"STATE_SNAPSHOT","snapshot":{"a":2}}`),
				[]byte(`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`),
			})
			_, base := newRelay(t, a, relay.Options{Store: behind{Store: relay.NewMemory(nil), keep: 2, trimmed: trimmed}})
			_, err := runThread(t, base, "r")
			var re *aguistate.RunError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, relay.CodeStreamLost, re.Code)
		})
	}
}

// taggedRun is an agent's script whose events each name the run (its
// input's runId, which names the tenant and the thread too).
func taggedRun(input []byte) [][]byte {
	var in struct{ ThreadID, RunID string }
	_ = json.Unmarshal(input, &in)
	ids := fmt.Sprintf(`"threadId":%q,"runId":%q`, in.ThreadID, in.RunID)
	events := [][]byte{[]byte(`{"type":"RUN_STARTED",` + ids + `}`)}
	for i := range 30 {
		events = append(events, fmt.Appendf(nil, `{"type":"STATE_SNAPSHOT","snapshot":{"run":%q,"i":%d}}`, in.RunID, i))
	}
	return append(events, []byte(`{"type":"RUN_FINISHED",`+ids+`}`))
}

// TestRelaySubChannelsShared runs threads of two tenants at once (the same
// thread ids in each) while viewers of each join and leave, many of them
// mid-run (their subscription's channel goes back to the pool, for the
// next join of any thread): every event a viewer gets with an id is its
// own thread's log entry at that position.
func TestRelaySubChannelsShared(t *testing.T) {
	t.Parallel()
	a := agenttest.NewScript(t, taggedRun)
	a.Pace(time.Millisecond)
	store := relay.NewMemory(nil)
	hook := func(req *http.Request, _ relay.Action, _ string) (relay.Grant, error) {
		return relay.Grant{Tenant: req.Header.Get("X-Tenant")}, nil
	}
	_, base := newRelay(t, a, relay.Options{Store: store, Authorize: hook, ViewerBuffer: 100})

	type got struct {
		tenant, thread string
		events         []sseEvent
	}
	var mu sync.Mutex
	var all []got
	var wg sync.WaitGroup
	for _, tenant := range []string{"a", "b"} {
		for _, thread := range []string{"t1", "t2"} {
			wg.Go(func() {
				for run := range 2 {
					input := fmt.Sprintf(`{"threadId":%q,"runId":"%s-%s-%d","messages":[]}`, thread, tenant, thread, run)
					req, _ := http.NewRequest(http.MethodPost, base+"/agent", strings.NewReader(input))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("X-Tenant", tenant)
					resp, err := http.DefaultClient.Do(req)
					if !assert.NoError(t, err) {
						return
					}
					var vg sync.WaitGroup
					for v := range 12 {
						vg.Go(func() {
							events := view(t, base+"/threads/"+thread+"/events", tenant, 2+v%4*(v%2)) // half of them leave early
							mu.Lock()
							all = append(all, got{tenant, thread, events})
							mu.Unlock()
						})
						time.Sleep(time.Millisecond) // joins spread over the run
					}
					events, err := readSSE(resp.Body, "")
					resp.Body.Close()
					assert.NoError(t, err)
					vg.Wait()
					mu.Lock()
					all = append(all, got{tenant, thread, events})
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	checked := 0
	for _, g := range all {
		log := map[string]string{}
		for e, err := range store.Tenant(g.tenant).Read(context.Background(), g.thread, 0) {
			require.NoError(t, err)
			log[strconv.FormatInt(e.Pos, 10)] = string(e.Event)
		}
		events := g.events
		if len(events) > 0 && events[0].id == "" { // a prelude, whose last event has the id of the join position
			for len(events) > 0 && events[0].id == "" {
				events = events[1:]
			}
			if len(events) > 0 {
				events = events[1:]
			}
		}
		for _, e := range events {
			checked++
			assert.Equal(t, log[e.id], e.data, "tenant %s thread %s: the event at %s", g.tenant, g.thread, e.id)
		}
	}
	t.Logf("%d streams, %d events checked", len(all), checked)
}

// view joins the thread at url as tenant, and returns its events: all of
// them when n is 2, else the first n (the viewer leaves then).
func view(t *testing.T, url, tenant string, n int) []sseEvent {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("X-Tenant", tenant)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil
	}
	defer resp.Body.Close()
	var events []sseEvent
	f := framing.Fields{}
	for data, err := range framing.ReadFields(resp.Body, framing.SSE, 0, 0, &f) {
		if err != nil {
			break
		}
		events = append(events, sseEvent{f.LastEventID, string(data)})
		if n != 2 && len(events) == n {
			break
		}
	}
	return events
}
