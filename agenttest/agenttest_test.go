// Tests of the test kit: the events of each step, the inputs recorded,
// and what fails the test.

package agenttest_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/aguistate/aguistate"
	"github.com/aguistate/aguistate/agenttest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// streamOf runs one turn on a new Server and returns its events, one JSON
// text each.
func streamOf(t *testing.T, turn agenttest.Turn) []string {
	t.Helper()
	srv := agenttest.New(t, turn)
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(`{"threadId":"t1","runId":"r1","messages":[]}`))
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	var events []string
	for text, err := range aguistate.ReadEvents(resp.Body, nil) {
		require.NoError(t, err)
		events = append(events, string(text))
	}
	return events
}

func TestSteps(t *testing.T) {
	t.Parallel()
	const start, finish = `{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}`, `{"type":"RUN_FINISHED","threadId":"t1","runId":"r1"}`
	tests := []struct {
		name string
		turn agenttest.Turn
		want []string
	}{
		{"nothing", nil, []string{start, finish}},
		{"text", agenttest.Turn{agenttest.Text("Hi there.")}, []string{start,
			`{"type":"TEXT_MESSAGE_START","messageId":"msg-1","role":"assistant"}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"msg-1","delta":"Hi "}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"msg-1","delta":"there."}`,
			`{"type":"TEXT_MESSAGE_END","messageId":"msg-1"}`, finish}},
		{"text chunks", agenttest.Turn{agenttest.TextChunks("Hi there.")}, []string{start,
			`{"type":"TEXT_MESSAGE_CHUNK","messageId":"msg-1","role":"assistant","delta":"Hi "}`,
			`{"type":"TEXT_MESSAGE_CHUNK","delta":"there."}`, finish}},
		{"reasoning", agenttest.Turn{agenttest.Reasoning("Hmm.")}, []string{start,
			`{"type":"REASONING_START","messageId":"msg-1"}`,
			`{"type":"REASONING_MESSAGE_START","messageId":"msg-1","role":"reasoning"}`,
			`{"type":"REASONING_MESSAGE_CONTENT","messageId":"msg-1","delta":"Hmm."}`,
			`{"type":"REASONING_MESSAGE_END","messageId":"msg-1"}`,
			`{"type":"REASONING_END","messageId":"msg-1"}`, finish}},
		{"a tool call and its result", agenttest.Turn{agenttest.ToolCall("f", `{"a":1}`), agenttest.ToolResult("ok")}, []string{start,
			`{"type":"TOOL_CALL_START","toolCallId":"call-1","toolCallName":"f","parentMessageId":"msg-1"}`,
			`{"type":"TOOL_CALL_ARGS","toolCallId":"call-1","delta":"{\"a"}`,
			`{"type":"TOOL_CALL_ARGS","toolCallId":"call-1","delta":"\":1}"}`,
			`{"type":"TOOL_CALL_END","toolCallId":"call-1"}`,
			`{"type":"TOOL_CALL_RESULT","messageId":"msg-2","toolCallId":"call-1","role":"tool","content":"ok"}`, finish}},
		{"tool call chunks after text", agenttest.Turn{agenttest.Text("Ok"), agenttest.ToolCallChunks("f", `{}`)}, []string{start,
			`{"type":"TEXT_MESSAGE_START","messageId":"msg-1","role":"assistant"}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"msg-1","delta":"Ok"}`,
			`{"type":"TEXT_MESSAGE_END","messageId":"msg-1"}`,
			`{"type":"TOOL_CALL_CHUNK","toolCallId":"call-1","toolCallName":"f","parentMessageId":"msg-1","delta":"{"}`,
			`{"type":"TOOL_CALL_CHUNK","delta":"}"}`, finish}},
		{"state", agenttest.Turn{agenttest.State(map[string]int{"n": 1}), agenttest.Delta(
			agenttest.Op{Op: "replace", Path: "/n", Value: 2}, agenttest.Op{Op: "remove", Path: "/m"}, agenttest.Op{Op: "add", Path: "/z", Value: nil})},
			[]string{start, `{"type":"STATE_SNAPSHOT","snapshot":{"n":1}}`,
				`{"type":"STATE_DELTA","delta":[{"op":"replace","path":"/n","value":2},{"op":"remove","path":"/m"},{"op":"add","path":"/z","value":null}]}`, finish}},
		{"interrupts", agenttest.Turn{agenttest.Interrupt("i1", "confirm", "Sure?"), agenttest.Interrupt("i2", "input", "")}, []string{start,
			`{"type":"RUN_FINISHED","threadId":"t1","runId":"r1","outcome":{"type":"interrupt","interrupts":[{"id":"i1","reason":"confirm","message":"Sure?"},{"id":"i2","reason":"input"}]}}`}},
		{"a failure", agenttest.Turn{agenttest.Text("a"), agenttest.Fail("boom", "E1"), agenttest.Text("never")}, []string{start,
			`{"type":"TEXT_MESSAGE_START","messageId":"msg-1","role":"assistant"}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"msg-1","delta":"a"}`,
			`{"type":"TEXT_MESSAGE_END","messageId":"msg-1"}`,
			`{"type":"RUN_ERROR","message":"boom","code":"E1"}`}},
		{"an event by hand", agenttest.Turn{agenttest.Event(`{"type":"CUSTOM","name":"n","value":1}`)}, []string{start,
			`{"type":"CUSTOM","name":"n","value":1}`, finish}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, streamOf(t, tt.turn))
		})
	}
}

// TestServerRecordsInputs checks that each run's input is recorded, and
// that a Consumer takes every step's events with no warning.
func TestServerRecordsInputs(t *testing.T) {
	t.Parallel()
	srv := agenttest.New(t,
		agenttest.Turn{agenttest.Reasoning("Hmm."), agenttest.Text("Hi."), agenttest.State(map[string]int{"n": 1}), agenttest.ToolCallChunks("f", `{}`), agenttest.ToolResult("ok")},
		agenttest.Turn{agenttest.TextChunks("Bye."), agenttest.Delta(agenttest.Op{Op: "add", Path: "/m", Value: true})},
	)
	c := aguistate.New(nil)
	c.Subscribe(func(ch aguistate.Change) { assert.NoError(t, ch.Warning) })
	require.NoError(t, c.AddMessages(aguistate.UserMessage("hello").WithID("u1")))
	_, err := c.RunAgent(context.Background(), srv.Agent(), &aguistate.RunOptions{RunID: "r1"})
	require.NoError(t, err)
	_, err = c.RunAgent(context.Background(), srv.Agent(), nil)
	require.NoError(t, err)
	assert.Equal(t, `{"n":1,"m":true}`, c.State().String())
	in := srv.Inputs()
	require.Len(t, in, 2)
	assert.Equal(t, "r1", in[0].RunID)
	assert.Equal(t, "1.0", in[0].ProtocolVersion)
	assert.Equal(t, "u1", in[0].Messages[0].ID())
	assert.Equal(t, in[0].ThreadID, in[1].ThreadID, "the same thread")
	assert.Len(t, in[1].Messages, 4, "the user's, the reasoning, the text holding the call, its result")
}

// recordT is an agenttest.TB that records what fails.
type recordT struct {
	mu   sync.Mutex
	errs []string
}

func (*recordT) Helper()        {}
func (*recordT) Cleanup(func()) {}
func (r *recordT) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// TestServerFails checks what fails the test: a run past the script's
// turns, a request that is no run, a step that cannot make its events.
func TestServerFails(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		turns []agenttest.Turn
		body  string
		want  string
	}{
		{"no turn left", []agenttest.Turn{}, `{}`, "run 1, but the script has 0 turns"},
		{"not a run input", []agenttest.Turn{nil}, `[]`, "a request that is no run"},
		{"a result of nothing", []agenttest.Turn{{agenttest.ToolResult("x")}}, `{}`, "ToolResult with no ToolCall"},
		{"a state that is not JSON", []agenttest.Turn{{agenttest.State(func() {})}}, `{}`, "unsupported type"},
		{"an event that is not JSON", []agenttest.Turn{{agenttest.Event("{")}}, `{}`, "is not JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rt := &recordT{}
			srv := agenttest.New(rt, tc.turns...)
			defer srv.Close()
			resp, err := http.Post(srv.URL, "application/json", strings.NewReader(tc.body))
			require.NoError(t, err)
			resp.Body.Close()
			assert.GreaterOrEqual(t, resp.StatusCode, 400)
			rt.mu.Lock()
			defer rt.mu.Unlock()
			require.Len(t, rt.errs, 1)
			assert.Contains(t, rt.errs[0], tc.want)
		})
	}
}
