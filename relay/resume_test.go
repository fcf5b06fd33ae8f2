// Tests of client resume: runs cut at every event boundary reconnect and end as uncut runs.

package relay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aguistate/aguistate"
	"github.com/aguistate/aguistate/relay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// errCut is the read error of a connection the test cuts.
var errCut = errors.New("connection reset by the test")

// cutter is an http.RoundTripper that cuts the body of its first answer
// after a number of SSE events, at the event's end or inside the next one
// (mid), as a dropped connection would.
type cutter struct {
	events int
	mid    bool

	before func() // when not nil, called before each request after the first

	mu        sync.Mutex
	calls     int
	preludes  int
	responded chan struct{} // when not nil, closed when the first answer's headers have come
}

func (c *cutter) RoundTrip(req *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.calls++
	first := c.calls == 1
	c.mu.Unlock()
	if !first && c.before != nil {
		c.before()
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	switch {
	case err != nil:
	case first:
		resp.Body = &cutBody{rc: resp.Body, left: c.events, mid: c.mid}
		if c.responded != nil {
			close(c.responded)
		}
	default:
		resp.Body = &sniffBody{rc: resp.Body, c: c}
	}
	return resp, err
}

// sniffBody counts, in c, the answers that hold a prelude: an empty id.
type sniffBody struct {
	rc   io.ReadCloser
	c    *cutter
	tail []byte // the last bytes read
	seen bool
}

func (b *sniffBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.tail = append(b.tail, p[:n]...)
	if !b.seen && (bytes.HasPrefix(b.tail, []byte("id:\n")) || bytes.Contains(b.tail, []byte("\nid:\n"))) {
		b.seen = true
		b.c.mu.Lock()
		b.c.preludes++
		b.c.mu.Unlock()
	}
	if len(b.tail) > 8 {
		b.tail = b.tail[len(b.tail)-8:]
	}
	return n, err
}

func (b *sniffBody) Close() error { return b.rc.Close() }

// prelude reports whether an answer after the first held a prelude.
func (c *cutter) prelude() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.preludes > 0
}

// requests returns how many requests went through c.
func (c *cutter) requests() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls
}

// cutBody passes an SSE body through until left data events have ended
// (and, with mid, a few bytes of the next one's data), then fails.
type cutBody struct {
	rc          io.ReadCloser
	left        int
	mid         bool
	inData, cut bool
	prev        byte
	taken       int // bytes of the event cut in the middle
}

func (b *cutBody) Read(p []byte) (int, error) {
	if b.cut {
		return 0, errCut
	}
	n, err := b.rc.Read(p)
	for i := 0; i < n; i++ {
		c := p[i]
		if b.left == 0 && (!b.mid || b.inData && b.taken >= 6) {
			b.cut = true
			b.rc.Close()
			return i, errCut
		}
		if b.left == 0 && b.inData {
			b.taken++
		}
		if c == 'd' && b.prev == '\n' {
			b.inData = true
		}
		if c == '\n' && b.prev == '\n' && b.inData {
			b.inData = false
			b.left--
		}
		b.prev = c
	}
	return n, err
}

func (b *cutBody) Close() error { return b.rc.Close() }

// resumeCases are a relay's log kept whole, so that a Last-Event-ID
// replays, and one that holds only its last event for a viewer, so that a
// reconnect gets a prelude.
var resumeCases = []struct {
	name  string
	store func() relay.Store
}{
	{"replay", func() relay.Store { return relay.NewMemory(nil) }},
	{"prelude", func() relay.Store { return newLastOnly() }},
}

// lastOnly is a Memory whose Read holds only the log's last event for a
// reconnect (a request with a Last-Event-ID; see markReconnects): its read
// from another position before that fails as a trimmed log does. The
// relay's other reads, such as a stream's catch-up with the log when the
// hub is late (as on a loaded machine), see the whole log, as a real store
// does: no trim passes a run's stream (see relay.Store.Trim).
type lastOnly struct {
	*relay.Memory
	mu    sync.Mutex
	last  map[string]int64
	ended chan struct{} // closed once a run's end is appended
}

func newLastOnly() *lastOnly {
	return &lastOnly{Memory: relay.NewMemory(nil), last: make(map[string]int64), ended: make(chan struct{})}
}

func (s *lastOnly) Append(ctx context.Context, thread string, pos int64, events ...[]byte) error {
	err := s.Memory.Append(ctx, thread, pos, events...)
	if err == nil && len(events) > 0 {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.last[thread] = pos + int64(len(events)) - 1
		for _, ev := range events {
			if bytes.Contains(ev, []byte(`"type":"RUN_FINISHED"`)) || bytes.Contains(ev, []byte(`"type":"RUN_ERROR"`)) {
				select {
				case <-s.ended:
				default:
					close(s.ended)
				}
			}
		}
	}
	return err
}

// waitEnd waits until a run's end is in the log, so that a reconnect
// finds the whole run there and, holding only its last event, has to
// send a prelude (on a loaded machine the agent's stream may be far
// behind the client's cut).
func (s *lastOnly) waitEnd() {
	select {
	case <-s.ended:
	case <-time.After(30 * time.Second):
	}
}

func (s *lastOnly) Read(ctx context.Context, thread string, after int64) iter.Seq2[relay.Entry, error] {
	s.mu.Lock()
	last := s.last[thread]
	s.mu.Unlock()
	if ctx.Value(reconnectKey{}) != nil && after > 0 && after < last-1 {
		return func(yield func(relay.Entry, error) bool) {
			yield(relay.Entry{}, &relay.RangeError{Thread: thread, After: after, Trimmed: true})
		}
	}
	return s.Memory.Read(ctx, thread, after)
}

// reconnectKey marks the context of a request with a Last-Event-ID.
type reconnectKey struct{}

// markReconnects passes the requests with a Last-Event-ID to next with
// reconnectKey in their context.
func markReconnects(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if _, ok := req.Header["Last-Event-Id"]; ok {
			req = req.WithContext(context.WithValue(req.Context(), reconnectKey{}, true))
		}
		next.ServeHTTP(w, req)
	})
}

// runOnce runs a Consumer started from s's input against a new relay on
// store, in front of an agent that streams s, through client, and returns
// it with the result.
func runOnce(t *testing.T, s recordedStream, store relay.Store, client *http.Client) (*aguistate.Consumer, aguistate.RunResult, error) {
	a := newAgent(t, s.events)
	r := relay.New(&aguistate.Agent{URL: a.URL}, &relay.Options{Store: store, Retry: time.Millisecond})
	srv := httptest.NewServer(markReconnects(r))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		_ = r.Close()
		srv.Close()
	})
	base := srv.URL
	var in aguistate.RunAgentInput
	require.NoError(t, in.UnmarshalJSON(s.input))
	c := aguistate.New(nil)
	require.NoError(t, c.StartRun(in))
	res, err := c.RunAgent(testContext(t), &aguistate.Agent{URL: base + "/agent", Client: client, Reconnects: 3}, &aguistate.RunOptions{RunID: in.RunID})
	return c, res, err
}

// multiRun reports whether a stream holds more than one run: a reconnect
// follows such an answer run by run (see Relay).
func multiRun(events [][]byte) bool {
	n := 0
	for _, ev := range events {
		var e struct{ Type string }
		_ = json.Unmarshal(ev, &e)
		if e.Type == "RUN_STARTED" {
			n++
		}
	}
	return n > 1
}

// TestRunAgentResume cuts the POST of every recorded stream's run at every
// event boundary, and inside every event: RunAgent reconnects and ends as
// an uncut run ends, with the relay's log whole and trimmed.
func TestRunAgentResume(t *testing.T) {
	t.Parallel()
	var cuts atomic.Int64
	t.Cleanup(func() { t.Logf("%d cuts, each reconnected", cuts.Load()) })
	for _, s := range recordedStreams(t) {
		if multiRun(s.events) {
			continue
		}
		for _, rc := range resumeCases {
			t.Run(s.name+"/"+rc.name, func(t *testing.T) {
				t.Parallel()
				want, wantRes, wantErr := runOnce(t, s, rc.store(), nil)
				_, base := newRelay(t, newAgent(t, s.events), relay.Options{})
				_, sent := post(t, base, s.input)
				for k := 0; k < len(sent); k++ {
					for _, mid := range []bool{false, true} {
						if k == 0 && !mid {
							continue // no id came: nothing to reconnect after
						}
						cut := &cutter{events: k, mid: mid}
						store := rc.store()
						if lo, ok := store.(*lastOnly); ok {
							cut.before = lo.waitEnd
						}
						got, res, err := runOnce(t, s, store, &http.Client{Transport: cut})
						where := fmt.Sprintf("cut after %d events (inside the next: %v)", k, mid)
						assert.Equal(t, errText(wantErr), errText(err), where)
						assert.Equal(t, wantRes.Outcome, res.Outcome, where)
						assert.Equal(t, threadJSON(t, want, cut.prelude()), threadJSON(t, got, cut.prelude()), where)
						assert.Greater(t, cut.requests(), 1, "%s: a reconnect", where)
						cuts.Add(1)
						if rc.name == "prelude" && k > 0 && k < len(sent)-1 {
							assert.True(t, cut.prelude(), "%s: through a prelude", where)
						}
					}
				}
			})
		}
	}
}

// errText returns err's text, or "".
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
