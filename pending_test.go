// Tests of the tool calls a run leaves for the client: named by the
// producer, or derived from the run's stream.

package aguistate

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPendingToolCalls(t *testing.T) {
	t.Parallel()
	const started = `{"type":"RUN_STARTED","threadId":"t","runId":"r"}`
	call := func(id string) string {
		return `{"type":"TOOL_CALL_START","toolCallId":"` + id + `","toolCallName":"f_` + id + `","parentMessageId":"a1"},` +
			`{"type":"TOOL_CALL_ARGS","toolCallId":"` + id + `","delta":"{}"},{"type":"TOOL_CALL_END","toolCallId":"` + id + `"}`
	}
	result := func(id string) string {
		return `{"type":"TOOL_CALL_RESULT","messageId":"t_` + id + `","toolCallId":"` + id + `","content":"done"}`
	}
	finished := func(outcome string) string {
		if outcome == "" {
			return `{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`
		}
		return `{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":` + outcome + `}`
	}
	tests := []struct {
		name   string
		events []string // each may hold several, comma-separated
		want   []string // the ids pending
		reason string
	}{
		{"derived", []string{started, call("c1"), call("c2"), result("c1"), finished("")}, []string{"c2"},
			"the calls the run started that no TOOL_CALL_RESULT of the run answered"},
		{"in order", []string{started, call("c2"), call("c1"), finished(`{"type":"success"}`)}, []string{"c2", "c1"}, "in the order they started"},
		{"named", []string{started, call("c1"), call("c2"), finished(`{"type":"success","pendingToolCallIds":["c2"]}`)}, []string{"c2"},
			"the producer's pendingToolCallIds win over the tally"},
		{"named empty", []string{started, call("c1"), finished(`{"type":"success","pendingToolCallIds":[]}`)}, []string{"c1"},
			"an empty list names none: derived from the stream"},
		{"chunks", []string{started, `{"type":"TOOL_CALL_CHUNK","toolCallId":"c1","toolCallName":"f_c1","delta":"{}"}`, finished("")}, []string{"c1"},
			"a chunk that opens a tool call starts it"},
		{"unknown outcome", []string{started, call("c1"), finished(`{"type":"suspended"}`)}, []string{"c1"}, "read as success, as in the reference"},
		{"interrupt", []string{started, call("c1"), finished(`{"type":"interrupt","interrupts":[{"id":"i1","reason":"r"}]}`)}, nil,
			"an interrupted run leaves interrupts, not tool calls"},
		{"cancelled", []string{started, call("c1"), finished(`{"type":"cancelled"}`)}, nil, "a cancelled run leaves nothing to answer"},
		{"failed", []string{started, call("c1"), `{"type":"RUN_ERROR","message":"boom"}`}, nil, "a failed run neither"},
		{"failed after finishing", []string{started, call("c1"), finished(""), `{"type":"RUN_ERROR","message":"boom"}`}, nil, "RUN_ERROR ends it"},
		{"in progress", []string{started, call("c1")}, nil, "nothing is left before the run ends"},
		{"an earlier run's", []string{started, call("c1"), finished(""), started, finished("")}, nil,
			"each run leaves its own: the tally starts again at RUN_STARTED"},
		{"answered in the thread", []string{started, call("c1"), `{"type":"MESSAGES_SNAPSHOT","messages":[` +
			`{"id":"a1","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"f_c1","arguments":"{}"}}]},` +
			`{"id":"x","role":"tool","toolCallId":"c1","content":"r"}]}`, finished("")}, nil,
			"a call that a held tool message answers is not pending"},
		{"a replayed start", []string{started, call("c1"), finished(`{"type":"cancelled"}`), started,
			`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"f_c1"}`, finished("")}, nil,
			"a skipped event changes nothing, the tally included (the reference client counts a replayed start)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := New(nil)
			for _, evs := range tt.events {
				var list []json.RawMessage
				require.NoError(t, json.Unmarshal([]byte("["+evs+"]"), &list))
				for _, ev := range list {
					require.NoError(t, c.Apply(ev))
				}
			}
			var got []string
			for _, call := range c.PendingToolCalls() {
				got = append(got, call.ID)
				assert.Equal(t, "f_"+call.ID, call.Name, "the call as the thread holds it")
				assert.Equal(t, "{}", call.Arguments)
			}
			assert.Equal(t, tt.want, got, tt.reason)
		})
	}
}

// TestPendingToolCallsAnswered checks that answering a pending call with a
// tool message takes it off the list, and that a named call the thread
// does not hold has its id only.
func TestPendingToolCallsAnswered(t *testing.T) {
	t.Parallel()
	c := New(nil)
	for _, ev := range []string{
		`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`,
		`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"f"}`,
		`{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"success","pendingToolCallIds":["c1","c9","c1"]}}`,
	} {
		require.NoError(t, c.Apply([]byte(ev)))
	}
	assert.Equal(t, []ToolCall{{ID: "c1", Name: "f"}, {ID: "c9"}}, c.PendingToolCalls(), "each once; c9 is named but not held")
	require.NoError(t, c.AddMessages(ToolMessage("c1", "ok")))
	assert.Equal(t, []ToolCall{{ID: "c9"}}, c.PendingToolCalls(), "answered: no longer pending")
}

// TestPendingToolCallIdsMalformed checks that pendingToolCallIds is an
// array of tool call ids, as the schema says.
func TestPendingToolCallIdsMalformed(t *testing.T) {
	t.Parallel()
	for _, ids := range []string{`"c1"`, `[1]`, `[""]`} {
		c := New(nil)
		err := c.Apply([]byte(`{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"success","pendingToolCallIds":` + ids + `}}`))
		assert.ErrorIs(t, err, ErrMalformedEvent, ids)
	}
}

// TestPendingToolCallsTally checks that a snapshot that drops a call
// takes it out of the run's tally, so that calls started and dropped again
// do not grow it, and that a call it keeps stays.
func TestPendingToolCallsTally(t *testing.T) {
	t.Parallel()
	c := New(nil)
	require.NoError(t, c.Apply([]byte(`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`)))
	for i := range 1000 {
		id := fmt.Sprintf("c%d", i)
		require.NoError(t, c.Apply([]byte(`{"type":"TOOL_CALL_START","toolCallId":"`+id+`","toolCallName":"f","parentMessageId":"a`+id+`"}`)))
		require.NoError(t, c.Apply([]byte(`{"type":"MESSAGES_SNAPSHOT","messages":[]}`)))
	}
	assert.Zero(t, c.cur.Load().calls.Len(), "every call dropped: the tally holds none")
	require.NoError(t, c.Apply([]byte(`{"type":"TOOL_CALL_START","toolCallId":"kept","toolCallName":"f","parentMessageId":"a1"}`)))
	require.NoError(t, c.Apply([]byte(`{"type":"TOOL_CALL_START","toolCallId":"gone","toolCallName":"f","parentMessageId":"a2"}`)))
	require.NoError(t, c.Apply([]byte(`{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"a1","role":"assistant","toolCalls":[{"id":"kept","type":"function","function":{"name":"f","arguments":""}}]},`+
		`{"id":"a3","role":"assistant","toolCalls":[{"id":"gone","type":"function","function":{"name":"f","arguments":""}}]}]}`)))
	require.NoError(t, c.Apply([]byte(`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`)))
	assert.Equal(t, []ToolCall{{ID: "kept", Name: "f"}, {ID: "gone", Name: "f"}}, c.PendingToolCalls(),
		"a call restated in place, or moved to another message, stays")
}

// TestRunAgentPendingToolCalls runs the recorded client-tool hand-back of
// the Go example server's /agentic_chat: the run leaves its call for the
// client, on RunResult and on the Consumer.
func TestRunAgentPendingToolCalls(t *testing.T) {
	t.Parallel()
	run := loadRecordedRun(t, "goex-agentic-chat-client-tool")
	srv := newAgent(t, func(w http.ResponseWriter, r *http.Request) {
		serveEvents(w, "text/event-stream", run.chunks)
	})
	c := New(nil)
	require.NoError(t, startRun(c, string(run.input)))
	res, err := c.RunAgent(context.Background(), &Agent{URL: srv.URL}, nil)
	require.NoError(t, err)
	want := []ToolCall{{ID: "call_1", Name: "confirm_booking", Arguments: `{"flight":"AA9"}`}}
	assert.Equal(t, want, res.PendingToolCalls)
	assert.Equal(t, want, c.PendingToolCalls())
	cp, err := Restore(c.Checkpoint(), nil)
	require.NoError(t, err)
	assert.Equal(t, want, cp.PendingToolCalls(), "the checkpoint keeps the run's tally")
}
