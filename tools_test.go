// Tests of the tool call events.

package aguistate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestToolsReference runs the reference-client cases for tool calls.
func TestToolsReference(t *testing.T) {
	runEventCases(t, []eventCase{
		{
			name:   "18-tool-start-parent-assistant",
			reason: "reference case 18: same output",
			events: []string{
				`{"type":"TEXT_MESSAGE_START","messageId":"a1"}`,
				`{"type":"TEXT_MESSAGE_CONTENT","messageId":"a1","delta":"ok"}`,
				`{"type":"TEXT_MESSAGE_END","messageId":"a1"}`,
				`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"f","parentMessageId":"a1","metadata":{"m":1}}`,
				`{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{\"x\":"}`,
				`{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"1}"}`,
				`{"type":"TOOL_CALL_END","toolCallId":"c1"}`,
			},
			want: `[{"id":"a1","role":"assistant","content":"ok","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"x\":1}"},"metadata":{"m":1}}]}]`,
		},
		{
			name:     "19-tool-start-parent-is-user",
			reason:   "reference case 19: same messages, but it also warns that parentMessageId names a user message; we apply the event without a warning, since a warning means the event was skipped (ErrNoTarget)",
			messages: `[{"id":"u1","role":"user","content":"hi"}]`,
			events: []string{
				`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"f","parentMessageId":"u1","subagentRunId":"sub1"}`,
			},
			want: `[{"id":"u1","role":"user","content":"hi"},{"id":"c1","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":""}}],"subagentRunId":"sub1"}]`,
		},
		{
			name:     "20-tool-start-parent-missing",
			reason:   "reference case 20: same output",
			messages: `[{"id":"u1","role":"user","content":"hi"}]`,
			events: []string{
				`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"f","parentMessageId":"pX"}`,
				`{"type":"TOOL_CALL_START","toolCallId":"c2","toolCallName":"g","parentMessageId":"pX"}`,
			},
			want: `[{"id":"u1","role":"user","content":"hi"},{"id":"pX","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":""}},{"id":"c2","type":"function","function":{"name":"g","arguments":""}}]}]`,
		},
		{
			name:     "21-tool-start-no-parent",
			reason:   "reference case 21: same output",
			messages: `[{"id":"u1","role":"user","content":"hi"}]`,
			events: []string{
				`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"f","timestamp":1,"rawEvent":{"r":1}}`,
				`{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{}"}`,
				`{"type":"TOOL_CALL_END","toolCallId":"c1"}`,
			},
			want: `[{"id":"u1","role":"user","content":"hi"},{"id":"c1","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}]`,
		},
		{
			name:     "22-tool-start-duplicate-id",
			reason:   "reference case 22 renames the existing tool call to g (and warns) and appends the ARGS; the held call is the record: both starts are replays, and the ARGS of a call that is not open are skipped (construct rule)",
			messages: `[{"id":"a1","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]}]`,
			events: []string{
				`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"f","parentMessageId":"other"}`,
				`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"g"}`,
				`{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"X"}`,
			},
			want: `[{"id":"a1","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]}]`,
			warn: []error{ErrNoTarget, ErrNoTarget, ErrNoTarget},
			warnText: []string{`tool call "c1" is held already: a start that names it is a replay`, `is a replay`,
				`tool call "c1" is not open: its start was skipped, or it has ended`},
		},
		{
			name:   "23-tool-args-end-unknown",
			reason: "reference case 23: same output",
			events: []string{
				`{"type":"TOOL_CALL_ARGS","toolCallId":"zz","delta":"{}"}`,
				`{"type":"TOOL_CALL_END","toolCallId":"zz"}`,
			},
			want: `[]`,
			warn: []error{ErrNoTarget, ErrNoTarget},
		},
		{
			name:     "24-tool-result-placement",
			reason:   "reference case 24: same output",
			messages: `[{"id":"u1","role":"user","content":"hi"},{"id":"a1","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"c2","type":"function","function":{"name":"g","arguments":"{}"}}]},{"id":"a2","role":"assistant","content":"follow-up"}]`,
			events: []string{
				`{"type":"TOOL_CALL_RESULT","messageId":"t1","toolCallId":"c1","content":"r1","timestamp":3,"rawEvent":{"x":1},"error":"E?"}`,
				`{"type":"TOOL_CALL_RESULT","messageId":"t2","toolCallId":"c2","content":[{"type":"text","text":"r2"}],"subagentRunId":"sub1","metadata":{"k":1}}`,
				`{"type":"TOOL_CALL_RESULT","messageId":"t3","toolCallId":"cX","content":"orphan","role":"tool"}`,
			},
			want: `[{"id":"u1","role":"user","content":"hi"},{"id":"a1","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"c2","type":"function","function":{"name":"g","arguments":"{}"}}]},{"id":"t1","toolCallId":"c1","role":"tool","content":"r1"},{"id":"t2","toolCallId":"c2","role":"tool","content":[{"type":"text","text":"r2"}],"subagentRunId":"sub1","metadata":{"k":1}},{"id":"a2","role":"assistant","content":"follow-up"},{"id":"t3","toolCallId":"cX","role":"tool","content":"orphan"}]`,
		},
		{
			name:     "47-pipeline-tool-start-dup-id",
			reason:   "reference case 47 (pipeline): same messages, silent because the name is unchanged; we warn that the start is a replay, and that its END has no open call (construct rule)",
			messages: `[{"id":"a1","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}]`,
			events: []string{
				`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`,
				`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"f"}`,
				`{"type":"TOOL_CALL_END","toolCallId":"c1"}`,
				`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`,
			},
			want: `[{"id":"a1","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}]`,
			warn: []error{ErrNoTarget, ErrNoTarget},
		},
		{
			name:     "54-tool-result-duplicate-message-id",
			reason:   "reference case 54 appends a second message t1; we replace t1 in place, since we never hold two messages with one id (decision 8)",
			messages: `[{"id":"a1","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"id":"t1","toolCallId":"c1","role":"tool","content":"old"}]`,
			events: []string{
				`{"type":"TOOL_CALL_RESULT","messageId":"t1","toolCallId":"c1","content":"new"}`,
			},
			want: `[{"id":"a1","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"id":"t1","toolCallId":"c1","role":"tool","content":"new"}]`,
		},
		{
			name:     "55-tool-start-parent-is-activity",
			reason:   "reference case 55: same messages, but it also warns that parentMessageId names an activity message; we apply the event without a warning, since a warning means the event was skipped (ErrNoTarget)",
			messages: `[{"id":"act","role":"activity","activityType":"p","content":{}}]`,
			events: []string{
				`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"f","parentMessageId":"act"}`,
			},
			want: `[{"id":"act","role":"activity","activityType":"p","content":{}},{"id":"c1","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":""}}]}]`,
		},
	})
}

// TestToolEvents checks every field of the tool call events.
func TestToolEvents(t *testing.T) {
	call := `{"id":"c1","type":"function","function":{"name":"f","arguments":""}}`
	runEventCases(t, []eventCase{
		{
			name:   "start creates an assistant message",
			reason: "key order id, role, toolCalls, subagentRunId; the metadata goes to the tool call",
			events: []string{`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"f","subagentRunId":"s","metadata":{"m":1},"timestamp":2}`},
			want:   `[{"id":"c1","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":""},"metadata":{"m":1}}],"subagentRunId":"s"}]`,
		},
		{
			name:     "start on an assistant without toolCalls",
			reason:   "toolCalls is appended as the last member; subagentRunId is not added to a held message",
			messages: `[{"id":"a1","role":"assistant","content":"x"}]`,
			events:   []string{`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"f","parentMessageId":"a1","subagentRunId":"s"}`},
			want:     `[{"id":"a1","role":"assistant","content":"x","toolCalls":[` + call + `]}]`,
		},
		{
			name:     "start whose own id names a user message",
			reason:   "the reference would add a second message c1; we never hold two messages with one id, so the event is skipped",
			messages: `[{"id":"c1","role":"user","content":"hi"}]`,
			events:   []string{`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"f"}`},
			want:     `[{"id":"c1","role":"user","content":"hi"}]`,
			warn:     []error{ErrNoTarget},
		},
		{
			name:     "start whose own id names an assistant message",
			reason:   "the reference would add a second message c1; we add the call to the held assistant message",
			messages: `[{"id":"c1","role":"assistant","content":""}]`,
			events:   []string{`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"f","parentMessageId":""}`},
			want:     `[{"id":"c1","role":"assistant","content":"","toolCalls":[` + call + `]}]`,
		},
		{
			name:     "args and end merge metadata into the tool call",
			reason:   "the tool call, not the message, takes the metadata of TOOL_CALL_ARGS and TOOL_CALL_END",
			messages: `[{"id":"a1","role":"assistant","content":"x"}]`,
			events: []string{
				`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"f","parentMessageId":"a1"}`,
				`{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{\"n\":1.0}","metadata":{"a":1}}`,
				`{"type":"TOOL_CALL_END","toolCallId":"c1","metadata":{"b":2}}`,
			},
			want: `[{"id":"a1","role":"assistant","content":"x","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"n\":1.0}"},"metadata":{"a":1,"b":2}}]}]`,
		},
		{
			name:   "args on a call without a function object",
			reason: "a snapshot restated the open call without one: there is nothing to append to, skipped with a warning",
			events: []string{
				`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"f","parentMessageId":"a1"}`,
				`{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"a1","role":"assistant","toolCalls":[{"id":"c1"}]}]}`,
				`{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"x"}`,
			},
			want:     `[{"id":"a1","role":"assistant","toolCalls":[{"id":"c1"}]}]`,
			warn:     []error{ErrNoTarget},
			warnText: []string{`tool call "c1" has no "function" object`},
		},
		{
			name:     "result with every field",
			reason:   "key order id, toolCallId, role, content, subagentRunId, metadata; an empty role is tool; error is not copied",
			messages: `[{"id":"a1","role":"assistant","toolCalls":[` + call + `]},{"id":"t0","role":"tool","toolCallId":"c0","content":"r"},{"id":"u","role":"user","content":"next"}]`,
			events:   []string{`{"type":"TOOL_CALL_RESULT","messageId":"t1","toolCallId":"c1","content":[{"type":"text","text":"ok"}],"role":"","subagentRunId":"s","metadata":{"k":1},"error":"e"}`},
			want:     `[{"id":"a1","role":"assistant","toolCalls":[` + call + `]},{"id":"t0","role":"tool","toolCallId":"c0","content":"r"},{"id":"t1","toolCallId":"c1","role":"tool","content":[{"type":"text","text":"ok"}],"subagentRunId":"s","metadata":{"k":1}},{"id":"u","role":"user","content":"next"}]`,
		},
	})
}

// TestToolMalformed checks that a tool event with a required field missing
// or of the wrong type is fatal and changes nothing.
func TestToolMalformed(t *testing.T) {
	held := `[{"id":"a1","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":""}}]}]`
	var cases []eventCase
	for _, ev := range []string{
		`{"type":"TOOL_CALL_START","toolCallName":"f"}`,
		`{"type":"TOOL_CALL_START","toolCallId":"c2"}`,
		`{"type":"TOOL_CALL_START","toolCallId":"c2","toolCallName":1}`,
		`{"type":"TOOL_CALL_START","toolCallId":"c2","toolCallName":"f","parentMessageId":1}`,
		`{"type":"TOOL_CALL_START","toolCallId":"c2","toolCallName":"f","metadata":true}`,
		`{"type":"TOOL_CALL_ARGS","toolCallId":"c1"}`,
		`{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":{}}`,
		`{"type":"TOOL_CALL_END","toolCallId":""}`,
		`{"type":"TOOL_CALL_RESULT","messageId":"t1","toolCallId":"c1"}`,
		`{"type":"TOOL_CALL_RESULT","messageId":"t1","toolCallId":"c1","content":null}`,
		`{"type":"TOOL_CALL_RESULT","messageId":"t1","toolCallId":"c1","content":5}`,
		`{"type":"TOOL_CALL_RESULT","messageId":"t1","content":"r"}`,
		`{"type":"TOOL_CALL_RESULT","toolCallId":"c1","content":"r"}`,
		`{"type":"TOOL_CALL_RESULT","messageId":"t1","toolCallId":"c1","content":"r","role":2}`,
	} {
		cases = append(cases, eventCase{name: ev, reason: "a required field is missing or of the wrong type",
			messages: held, events: []string{ev}, want: held, fatal: ErrMalformedEvent})
	}
	runEventCases(t, cases)
}

// TestToolResultNeverOverwritesOtherRoles checks that a result whose
// message id is held by an assistant or activity message is skipped with a
// warning instead of destroying that message, while a held tool message
// (an updated result) is replaced in place.
func TestToolResultNeverOverwritesOtherRoles(t *testing.T) {
	t.Parallel()
	c := New(nil)
	warnings := warningsOf(c)
	for _, ev := range []string{
		`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"f","parentMessageId":"a1"}`,
		`{"type":"ACTIVITY_SNAPSHOT","messageId":"x1","activityType":"T","content":{}}`,
		`{"type":"TOOL_CALL_RESULT","messageId":"a1","toolCallId":"c1","content":"clobber"}`,
		`{"type":"TOOL_CALL_RESULT","messageId":"x1","toolCallId":"c1","content":"clobber"}`,
		`{"type":"TOOL_CALL_RESULT","messageId":"t1","toolCallId":"c1","content":"first"}`,
		`{"type":"TOOL_CALL_RESULT","messageId":"t1","toolCallId":"c1","content":"updated"}`,
	} {
		require.NoError(t, c.Apply([]byte(ev)))
	}
	require.Len(t, warnings(), 2)
	assert.ErrorIs(t, warnings()[0], ErrNoTarget)
	assert.Equal(t, `[{"id":"a1","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":""}}]},`+
		`{"id":"t1","toolCallId":"c1","role":"tool","content":"updated"},`+
		`{"id":"x1","role":"activity","activityType":"T","content":{}}]`, messagesJSON(c))
}

// TestToolResultRole checks that a result cannot claim another role and so
// overwrite, or pose as, a message of that role.
func TestToolResultRole(t *testing.T) {
	t.Parallel()
	c := New(nil)
	require.NoError(t, startRun(c, `{"messages":[{"id":"a1","role":"assistant","content":"text"}]}`))
	err := c.Apply([]byte(`{"type":"TOOL_CALL_RESULT","messageId":"a1","toolCallId":"c1","content":"pwned","role":"assistant"}`))
	assert.ErrorIs(t, err, ErrMalformedEvent, "AG-UI: a tool call result's role is tool")
	assert.Equal(t, `[{"id":"a1","role":"assistant","content":"text"}]`, messagesJSON(c))
}
