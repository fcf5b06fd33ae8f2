// Package agenttest serves a fake AG-UI agent for tests: every run streams
// the events a script gives for its input, as SSE, and may wait before one
// of them, or between each two.
package agenttest

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/aguistate/aguistate/internal/jsonv"
)

// Agent is a fake AG-UI agent on a loopback address (its URL).
type Agent struct {
	*httptest.Server
	script func(input []byte) [][]byte

	mu      sync.Mutex
	inputs  [][]byte
	headers []http.Header
	gone    int    // runs whose request ended before their answer did
	holds   []hold // of the runs that start from now on
	pace    time.Duration
}

// New starts an Agent whose runs stream events, and stops it when tb ends.
func New(tb testing.TB, events [][]byte) *Agent {
	return NewScript(tb, func([]byte) [][]byte { return events })
}

// NewScript starts an Agent whose runs stream the events that script
// returns for their input (the request body), and stops it when tb ends.
func NewScript(tb testing.TB, script func(input []byte) [][]byte) *Agent {
	a := &Agent{script: script}
	a.Server = httptest.NewServer(http.HandlerFunc(a.serve))
	tb.Cleanup(a.Close)
	return a
}

func (a *Agent) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	a.mu.Lock()
	a.inputs = append(a.inputs, body)
	a.headers = append(a.headers, req.Header.Clone())
	holds, pace := a.holds, a.pace
	a.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	rc := http.NewResponseController(w)
	for i, ev := range a.script(body) {
		for len(holds) > 0 && holds[0].at <= i {
			_ = rc.Flush()
			select {
			case <-holds[0].released:
				holds = holds[1:]
			case <-req.Context().Done():
				a.mu.Lock()
				a.gone++
				a.mu.Unlock()
				return
			}
		}
		if pace > 0 && i > 0 {
			_ = rc.Flush()
			select {
			case <-time.After(pace):
			case <-req.Context().Done():
				return
			}
		}
		fmt.Fprintf(w, "data: %s\n\n", ev)
	}
	_ = rc.Flush()
}

// hold is where runs wait (see Hold): before their event at index at,
// until released is closed.
type hold struct {
	at       int
	released chan struct{}
}

// Hold makes the runs that start after it wait before their event at
// each index of at (in increasing order), in place of the holds of an
// earlier call (Hold() removes them): the first call of release lets them past the first index,
// the second past the second, and so on; calls past the last do nothing.
// With one index, release may be called once or more.
func (a *Agent) Hold(at ...int) (release func()) {
	holds := make([]hold, len(at))
	for k, i := range at {
		holds[k] = hold{i, make(chan struct{})}
	}
	a.mu.Lock()
	a.holds = holds
	a.mu.Unlock()
	var mu sync.Mutex
	return func() {
		mu.Lock()
		defer mu.Unlock()
		if len(holds) > 0 {
			close(holds[0].released)
			holds = holds[1:]
		}
	}
}

// Pace makes the runs that start after it wait d before each event but
// the first, so that a run of n events lasts (n-1)·d.
func (a *Agent) Pace(d time.Duration) {
	a.mu.Lock()
	a.pace = d
	a.mu.Unlock()
}

// Inputs returns the bodies of the run requests so far.
func (a *Agent) Inputs() [][]byte {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([][]byte(nil), a.inputs...)
}

// Header returns the header of the run request at index i (from 0).
func (a *Agent) Header(i int) http.Header {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.headers[i]
}

// Gone returns how many runs ended, while they waited (see Hold), because
// their request did: the client cancelled it or went away.
func (a *Agent) Gone() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.gone
}

// Echo returns a script (see NewScript) that streams events with their
// "threadId" member set to the run input's threadId, as an agent echoes
// the thread it runs; events without the member, and every event when the
// input has no threadId, are streamed as they are.
func Echo(events [][]byte) func(input []byte) [][]byte {
	return func(input []byte) [][]byte {
		in, err := jsonv.Parse(input, 1000)
		if err != nil || in.Kind() != jsonv.Object || in.Get("threadId") == nil || in.Get("threadId").Kind() != jsonv.String {
			return events
		}
		thread := in.Get("threadId")
		out := make([][]byte, len(events))
		for i, ev := range events {
			out[i] = ev
			if n, err := jsonv.Parse(ev, 1000); err == nil && n.Kind() == jsonv.Object && n.Get("threadId") != nil {
				out[i] = jsonv.Marshal(jsonv.WithMember(n, "threadId", thread))
			}
		}
		return out
	}
}
