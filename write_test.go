// Tests of the write rule: no event rewrites a held message of a role its
// family does not write (issue 8, kind 1).

package aguistate

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestWriteRule has a row per member of kind 1: an event naming a held
// message of another role or another tool call is skipped with an
// ErrNoTarget warning that names both, and the message never changes.
func TestWriteRule(t *testing.T) {
	const (
		answer    = `{"id":"a1","role":"assistant","content":"Here is the plan"}`
		user      = `{"id":"u1","role":"user","content":"book a table"}`
		parts     = `{"id":"u2","role":"user","content":[{"type":"text","text":"what is this?"},{"type":"binary","mimeType":"image/png","url":"https://example.invalid/cat.png"}]}`
		reasoning = `{"id":"r1","role":"reasoning","content":"weighing options"}`
		tool      = `{"id":"t1","toolCallId":"c1","role":"tool","content":"72F"}`
		calls     = `{"id":"a2","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"c2","type":"function","function":{"name":"g","arguments":"{}"}}]}`
		activity  = `{"id":"act","role":"activity","activityType":"p","content":{"pct":1}}`

		intoUser      = `message "u1" has the role "user", and activity events write only into "activity" messages`
		intoAnswer    = `message "a1" has the role "assistant", and activity events write only into "activity" messages`
		textReasoning = `message "r1" has the role "reasoning", and text message events write only into "assistant", "user", "system" or "developer" messages`
		mirror        = `message "a1" has the role "assistant", and reasoning message events write only into "reasoning" messages`
	)
	held := "[" + answer + "," + user + "," + parts + "," + reasoning + "," + calls + "," + tool + "," + activity + "]"
	rows := []struct {
		name, reason string
		events       []string
		warnText     []string
	}{
		{
			name:     "ACTIVITY_SNAPSHOT over an assistant message",
			reason:   "a client-only event must not delete a producer's message (replace true or false)",
			events:   []string{`{"type":"ACTIVITY_SNAPSHOT","messageId":"a1","activityType":"progress","content":{"pct":40}}`, `{"type":"ACTIVITY_SNAPSHOT","messageId":"a1","activityType":"progress","content":{"pct":90},"replace":false}`},
			warnText: []string{intoAnswer, intoAnswer},
		},
		{
			name:     "ACTIVITY_SNAPSHOT over a user message",
			reason:   "the user's question would vanish from the next run's input",
			events:   []string{`{"type":"ACTIVITY_SNAPSHOT","messageId":"u1","activityType":"progress","content":{"pct":10}}`},
			warnText: []string{intoUser},
		},
		{
			name:     "ACTIVITY_DELTA on a tool message",
			reason:   "activity events write only activity messages",
			events:   []string{`{"type":"ACTIVITY_DELTA","messageId":"t1","activityType":"p","patch":[]}`},
			warnText: []string{`message "t1" has the role "tool", and activity events write only into "activity" messages`},
		},
		{
			name:     "text events into a reasoning message",
			reason:   "the answer must not be appended to the reasoning",
			events:   []string{`{"type":"TEXT_MESSAGE_START","messageId":"r1","role":"assistant"}`, `{"type":"TEXT_MESSAGE_CONTENT","messageId":"r1","delta":"Take the train."}`, `{"type":"TEXT_MESSAGE_END","messageId":"r1"}`},
			warnText: []string{textReasoning, textReasoning, textReasoning},
		},
		{
			name:     "the mirror: reasoning events into an assistant message",
			reason:   "the reasoning must not leak into the visible answer and the next input",
			events:   []string{`{"type":"REASONING_MESSAGE_START","messageId":"a1","role":"reasoning"}`, `{"type":"REASONING_MESSAGE_CONTENT","messageId":"a1","delta":" (scratch)"}`, `{"type":"REASONING_MESSAGE_END","messageId":"a1"}`},
			warnText: []string{mirror, mirror, mirror},
		},
		{
			name:     "text events into a user message",
			reason:   "the assistant's text must not be appended to the user's words",
			events:   []string{`{"type":"TEXT_MESSAGE_START","messageId":"u1"}`, `{"type":"TEXT_MESSAGE_CONTENT","messageId":"u1","delta":"+more"}`},
			warnText: []string{`message "u1" has the role "user", and the event starts one of the role "assistant"`, `text message "u1" is not open`},
		},
		{
			name:     "text events into a user message with content parts",
			reason:   "the image must not be replaced by a string",
			events:   []string{`{"type":"TEXT_MESSAGE_START","messageId":"u2","role":"user"}`, `{"type":"TEXT_MESSAGE_CONTENT","messageId":"u2","delta":"A cat."}`},
			warnText: []string{`text message "u2" is held already: a start that names it is a replay`, `text message "u2" is not open`},
		},
		{
			name:     "text events into a tool message",
			reason:   "text events do not write tool results",
			events:   []string{`{"type":"TEXT_MESSAGE_START","messageId":"t1"}`},
			warnText: []string{`message "t1" has the role "tool", and text message events write only into`},
		},
		{
			name:     "text events into an activity message",
			reason:   "activity messages are client-only",
			events:   []string{`{"type":"TEXT_MESSAGE_CONTENT","messageId":"act","delta":"x"}`},
			warnText: []string{`message "act" has the role "activity", and text message events write only into`},
		},
		{
			name:     "TEXT_MESSAGE_CHUNK into a reasoning message",
			reason:   "the chunk form follows the same rule",
			events:   []string{`{"type":"TEXT_MESSAGE_CHUNK","messageId":"r1","delta":"Take the train."}`},
			warnText: []string{textReasoning},
		},
		{
			name:     "REASONING_MESSAGE_CHUNK into an assistant message",
			reason:   "the chunk form of the mirror",
			events:   []string{`{"type":"REASONING_MESSAGE_CHUNK","messageId":"a1","delta":"scratch"}`},
			warnText: []string{mirror},
		},
		{
			name:     "TEXT_MESSAGE_CHUNK into a user message with content parts",
			reason:   "the chunk form of the lost image",
			events:   []string{`{"type":"TEXT_MESSAGE_CHUNK","messageId":"u2","delta":"A cat."}`, `{"type":"TEXT_MESSAGE_CHUNK","delta":" Black."}`},
			warnText: []string{`message "u2" has the role "user", and the event starts one of the role "assistant"`, `text message "u2" is not open`},
		},
		{
			name:     "TOOL_CALL_CHUNK whose own id names a user message",
			reason:   "tool calls live in assistant messages",
			events:   []string{`{"type":"TOOL_CALL_CHUNK","toolCallId":"u1","toolCallName":"f","delta":"{}"}`},
			warnText: []string{`message "u1" has the role "user", and tool call events write only into "assistant" messages`},
		},
		{
			name:     "TOOL_CALL_START whose own id names a reasoning message",
			reason:   "tool calls live in assistant messages",
			events:   []string{`{"type":"TOOL_CALL_START","toolCallId":"r1","toolCallName":"f"}`},
			warnText: []string{`message "r1" has the role "reasoning", and tool call events write only into "assistant" messages`},
		},
		{
			name:     "TOOL_CALL_RESULT of another tool call under a held message id",
			reason:   "the first call's result must stay, or the next input sends it unanswered",
			events:   []string{`{"type":"TOOL_CALL_RESULT","messageId":"t1","toolCallId":"c2","content":"sunny"}`},
			warnText: []string{`message "t1" holds the result of tool call "c1", not of tool call "c2"`},
		},
		{
			name:     "TOOL_CALL_RESULT over a user message",
			reason:   "a result never overwrites another role",
			events:   []string{`{"type":"TOOL_CALL_RESULT","messageId":"u1","toolCallId":"c1","content":"sunny"}`},
			warnText: []string{`message "u1" has the role "user", and tool call results write only into "tool" messages`},
		},
		{
			name:     "REASONING_ENCRYPTED_VALUE on an activity message",
			reason:   "activity messages are client-only",
			events:   []string{`{"type":"REASONING_ENCRYPTED_VALUE","subtype":"message","entityId":"act","encryptedValue":"E"}`},
			warnText: []string{`message "act" has the role "activity", and encrypted values write only into`},
		},
	}
	var cases []eventCase
	for _, r := range rows {
		warn := make([]error, len(r.warnText))
		for i := range warn {
			warn[i] = ErrNoTarget
		}
		cases = append(cases, eventCase{name: r.name, reason: r.reason, messages: held, events: r.events,
			want: held, warn: warn, warnText: r.warnText})
	}
	runEventCases(t, cases)
}

// TestWriteRuleAllows checks the other side of the rule: what each family
// of events may write, it writes.
func TestWriteRuleAllows(t *testing.T) {
	runEventCases(t, []eventCase{
		{
			name:     "a result replaces the result of the same call",
			reason:   "an updated result, in place",
			messages: `[{"id":"t1","toolCallId":"c1","role":"tool","content":"old"}]`,
			events:   []string{`{"type":"TOOL_CALL_RESULT","messageId":"t1","toolCallId":"c1","content":"new"}`},
			want:     `[{"id":"t1","toolCallId":"c1","role":"tool","content":"new"}]`,
		},
		{
			name:     "a tool call into a held assistant message with text",
			reason:   "tool call events write assistant messages",
			messages: `[{"id":"a1","role":"assistant","content":"Let me check."}]`,
			events:   []string{`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"f","parentMessageId":"a1"}`, `{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{}"}`},
			want:     `[{"id":"a1","role":"assistant","content":"Let me check.","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}]`,
		},
		{
			name:   "text messages of every text role",
			reason: "developer, system, assistant and user (AG-UI TextMessageRole)",
			events: []string{`{"type":"TEXT_MESSAGE_START","messageId":"d","role":"developer"}`, `{"type":"TEXT_MESSAGE_CHUNK","messageId":"s","role":"system","delta":"x"}`, `{"type":"TEXT_MESSAGE_START","messageId":"u","role":"user"}`, `{"type":"TEXT_MESSAGE_CONTENT","messageId":"u","delta":"y"}`},
			want:   `[{"id":"d","role":"developer","content":""},{"id":"s","role":"system","content":"x"},{"id":"u","role":"user","content":"y"}]`,
		},
		{
			name:     "an encrypted value on a reasoning message",
			reason:   "encrypted values write every role but activity",
			messages: `[{"id":"r1","role":"reasoning","content":"x"}]`,
			events:   []string{`{"type":"REASONING_ENCRYPTED_VALUE","subtype":"message","entityId":"r1","encryptedValue":"E"}`},
			want:     `[{"id":"r1","role":"reasoning","content":"x","encryptedValue":"E"}]`,
		},
	})
}

// TestWriteRuleTable checks that the table names each family once and
// that every role it names is one of AG-UI's.
func TestWriteRuleTable(t *testing.T) {
	roles := []string{roleAssistant, roleUser, roleSystem, roleDeveloper, roleTool, roleActivity, roleReasoning}
	for w, row := range writeRule {
		assert.NotEmpty(t, row.events, "writer %d has a name", w)
		assert.NotEmpty(t, row.roles, "writer %d writes something", w)
		assert.Subset(t, roles, row.roles, "writer %s", row.events)
	}
	assert.Equal(t, `"a"`, quotedList([]string{"a"}))
	assert.Equal(t, `"a", "b" or "c"`, quotedList([]string{"a", "b", "c"}))
}
