// Package agenttest serves a scripted AG-UI agent for the tests of a Go
// frontend. A [Server] listens on a loopback address (net/http/httptest)
// and answers each run with the events of a [Turn], built from typed steps:
// text, reasoning, tool calls and their results, state, interrupts and
// errors, as a live agent streams them or as a chunk-only producer does. It
// records each run's input, the RunAgentInput the frontend sent, for the
// test's assertions.
//
// Use [New] with the turns in order, or [NewFunc] with a script that
// builds each turn from the run's input; pass [Server.Agent] to
// [aguistate.Consumer.RunAgent] or [aguistate.Consumer.RunTools]; read
// [Server.Inputs] to check what the frontend sent. The examples show a
// frontend's test end to end.
//
// Every run's events are framed as server-sent events and flushed one at
// a time. The run begins with RUN_STARTED, naming the thread and run of its
// input, and ends with RUN_FINISHED, or RUN_ERROR for a turn with a [Fail]
// step.
// Message and tool call ids are numbered per Server, in order: "msg-1",
// "call-1", and so on.
package agenttest

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"

	"github.com/aguistate/aguistate"
)

// Server is a scripted AG-UI agent served over HTTP on a loopback address.
// Its URL is the run endpoint: each POST of a RunAgentInput is one run. It
// is safe for concurrent use.
type Server struct {
	*httptest.Server
	tb     TB
	script func(aguistate.RunAgentInput) Turn

	mu     sync.Mutex
	inputs []aguistate.RunAgentInput
	ids    ids
}

// TB is what a Server needs of a test: *testing.T and *testing.B have it.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
	Cleanup(func())
}

// New starts a Server whose runs answer with turns, in order, and stops it
// when tb ends. A nil turn is one with no step. A run after the last turn
// fails tb, and gets a 500.
func New(tb TB, turns ...Turn) *Server {
	tb.Helper()
	next := 0
	var mu sync.Mutex
	return NewFunc(tb, func(aguistate.RunAgentInput) Turn {
		mu.Lock()
		defer mu.Unlock()
		if next == len(turns) {
			tb.Errorf("agenttest: run %d, but the script has %d turns", next+1, len(turns))
			return nil
		}
		next++
		if turns[next-1] == nil {
			return Turn{} // a turn with no step
		}
		return turns[next-1]
	})
}

// NewFunc starts a Server whose runs answer with the turn that script
// returns for the run's input, and stops it when tb ends. A nil turn gets
// a 500. script may be called from several goroutines at once.
//
// A request that is not the POST of a RunAgentInput, and a turn whose step
// cannot make its events (a [State] that encoding/json cannot marshal, a
// [ToolResult] with no [ToolCall] before it, an [Event] that is not JSON),
// fail tb, and get a 400 or a 500.
func NewFunc(tb TB, script func(in aguistate.RunAgentInput) Turn) *Server {
	tb.Helper()
	s := &Server{tb: tb, script: script}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	tb.Cleanup(s.Close)
	return s
}

// Agent returns an [aguistate.Agent] that runs on s, with s's client.
func (s *Server) Agent() *aguistate.Agent {
	return &aguistate.Agent{URL: s.URL, Client: s.Client()}
}

// Inputs returns the inputs of the runs so far, in the order they came.
func (s *Server) Inputs() []aguistate.RunAgentInput {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]aguistate.RunAgentInput(nil), s.inputs...)
}

// serve answers one run: it reads and records the input, and streams the
// events of the script's turn.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	var in aguistate.RunAgentInput
	if err == nil {
		err = in.UnmarshalJSON(body)
	}
	if r.Method != http.MethodPost || err != nil {
		s.tb.Errorf("agenttest: a request that is no run: %s %s: %v", r.Method, r.URL, err)
		http.Error(w, "agenttest: POST a RunAgentInput", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.inputs = append(s.inputs, in)
	s.mu.Unlock()
	turn := s.script(in)
	if turn == nil {
		http.Error(w, "agenttest: the script has no turn for this run", http.StatusInternalServerError)
		return
	}
	s.mu.Lock()
	events, err := turn.events(in, &s.ids)
	s.mu.Unlock()
	if err != nil {
		s.tb.Errorf("agenttest: run %s: %v", in.RunID, err)
		http.Error(w, "agenttest: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	rc := http.NewResponseController(w)
	for _, ev := range events {
		var b bytes.Buffer
		fmt.Fprintf(&b, "data: %s\n\n", ev)
		if _, err := w.Write(b.Bytes()); err != nil {
			return // the client went away
		}
		_ = rc.Flush()
	}
}

// ids numbers the messages and tool calls of a Server's runs.
type ids struct{ messages, calls int }

func (n *ids) message() string {
	n.messages++
	return fmt.Sprintf("msg-%d", n.messages)
}

func (n *ids) call() string {
	n.calls++
	return fmt.Sprintf("call-%d", n.calls)
}
