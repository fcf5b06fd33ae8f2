// Tests of the construct rule: a text message, a reasoning message or a
// tool call takes deltas only while it is open (issue 8, kind 2).

package aguistate

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConstructs has a row per member of kind 2: a construct that is
// replayed, ended, or whose start was skipped takes no more deltas; and the
// sequences that must keep working.
func TestConstructs(t *testing.T) {
	const (
		start = `{"type":"RUN_STARTED","threadId":"t","runId":"r1"}`
		next  = `{"type":"RUN_STARTED","threadId":"t","runId":"r2"}`
		call  = `{"id":"call_1","type":"function","function":{"name":"file_read","arguments":"{\"path\":\"notes.txt\"}"}}`
	)
	runEventCases(t, []eventCase{
		{
			name:     "a replayed tool call",
			reason:   "the Go example server's resume path re-sends a call it had sent: the start is a replay, and its arguments are not appended twice",
			messages: `[{"id":"a1","role":"assistant","content":"","toolCalls":[` + call + `]}]`,
			events: []string{start,
				`{"type":"TOOL_CALL_START","toolCallId":"call_1","toolCallName":"file_read"}`,
				`{"type":"TOOL_CALL_ARGS","toolCallId":"call_1","delta":"{\"path\":\"notes.txt\"}"}`,
				`{"type":"TOOL_CALL_END","toolCallId":"call_1"}`},
			want: `[{"id":"a1","role":"assistant","content":"","toolCalls":[` + call + `]}]`,
			warn: []error{ErrNoTarget, ErrNoTarget, ErrNoTarget},
			warnText: []string{`tool call "call_1" is held already: a start that names it is a replay`,
				`tool call "call_1" is not open: its start was skipped, or it has ended`, `tool call "call_1" is not open`},
		},
		{
			name:   "text content after its end",
			reason: "an ended text message takes no more text",
			events: []string{`{"type":"TEXT_MESSAGE_START","messageId":"m1"}`, `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"a"}`,
				`{"type":"TEXT_MESSAGE_END","messageId":"m1"}`, `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"b"}`, `{"type":"TEXT_MESSAGE_END","messageId":"m1"}`},
			want:     `[{"id":"m1","role":"assistant","content":"a"}]`,
			warn:     []error{ErrNoTarget, ErrNoTarget},
			warnText: []string{`text message "m1" is not open`, `text message "m1" is not open`},
		},
		{
			name:   "reasoning content after its end",
			reason: "an ended reasoning message takes no more reasoning",
			events: []string{`{"type":"REASONING_MESSAGE_START","messageId":"r1","role":"reasoning"}`, `{"type":"REASONING_MESSAGE_CONTENT","messageId":"r1","delta":"a"}`,
				`{"type":"REASONING_MESSAGE_END","messageId":"r1"}`, `{"type":"REASONING_MESSAGE_CONTENT","messageId":"r1","delta":"b"}`},
			want:     `[{"id":"r1","role":"reasoning","content":"a"}]`,
			warn:     []error{ErrNoTarget},
			warnText: []string{`reasoning message "r1" is not open`},
		},
		{
			name:   "tool call arguments after its end",
			reason: "an ended tool call takes no more arguments",
			events: []string{`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"f"}`, `{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{}"}`,
				`{"type":"TOOL_CALL_END","toolCallId":"c1"}`, `{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{}"}`},
			want:     `[{"id":"c1","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}]`,
			warn:     []error{ErrNoTarget},
			warnText: []string{`tool call "c1" is not open`},
		},
		{
			name:     "a replayed text message",
			reason:   "a start naming a held message with text is a replay: its content is not appended twice",
			messages: `[{"id":"m1","role":"assistant","content":"Hello"}]`,
			events:   []string{`{"type":"TEXT_MESSAGE_START","messageId":"m1"}`, `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Hello"}`, `{"type":"TEXT_MESSAGE_END","messageId":"m1"}`},
			want:     `[{"id":"m1","role":"assistant","content":"Hello"}]`,
			warn:     []error{ErrNoTarget, ErrNoTarget, ErrNoTarget},
			warnText: []string{`text message "m1" is held already: a start that names it is a replay`},
		},
		{
			name:   "a start of an open message",
			reason: "a second start while the message is open is a replay too; the message goes on",
			events: []string{`{"type":"TEXT_MESSAGE_START","messageId":"m1"}`, `{"type":"TEXT_MESSAGE_START","messageId":"m1"}`, `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"a"}`},
			want:   `[{"id":"m1","role":"assistant","content":"a"}]`,
			warn:   []error{ErrNoTarget},
		},
		{
			name:     "content whose start named an activity message",
			reason:   "the start was skipped, so its content is too",
			messages: `[{"id":"act","role":"activity","activityType":"p","content":{}}]`,
			events:   []string{`{"type":"REASONING_MESSAGE_START","messageId":"act","role":"reasoning"}`, `{"type":"REASONING_MESSAGE_CONTENT","messageId":"act","delta":"x"}`},
			want:     `[{"id":"act","role":"activity","activityType":"p","content":{}}]`,
			warn:     []error{ErrNoTarget, ErrNoTarget},
		},
		{
			name:   "RUN_STARTED closes every construct",
			reason: "a new run does not go on with the last run's open message or tool call",
			events: []string{start, `{"type":"TEXT_MESSAGE_START","messageId":"m1"}`, `{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"f"}`, next,
				`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"a"}`, `{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{}"}`},
			want: `[{"id":"m1","role":"assistant","content":""},{"id":"c1","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":""}}]}]`,
			warn: []error{ErrNoTarget, ErrNoTarget},
		},
		{
			name:   "RUN_FINISHED and RUN_ERROR close every construct",
			reason: "the next run cannot go on with them",
			events: []string{start, `{"type":"TEXT_MESSAGE_START","messageId":"m1"}`, `{"type":"RUN_FINISHED","threadId":"t","runId":"r1"}`, next,
				`{"type":"REASONING_MESSAGE_START","messageId":"r9","role":"reasoning"}`, `{"type":"RUN_ERROR","message":"boom"}`,
				`{"type":"RUN_STARTED","threadId":"t","runId":"r3"}`,
				`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"a"}`, `{"type":"REASONING_MESSAGE_CONTENT","messageId":"r9","delta":"b"}`},
			want: `[{"id":"m1","role":"assistant","content":""},{"id":"r9","role":"reasoning","content":""}]`,
			warn: []error{ErrNoTarget, ErrNoTarget},
		},
		{
			name:   "a snapshot that drops an open message closes it",
			reason: "the construct's message is gone; a new start of its id opens a new one",
			events: []string{`{"type":"TEXT_MESSAGE_START","messageId":"m1"}`, `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"a"}`,
				`{"type":"MESSAGES_SNAPSHOT","messages":[]}`, `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"b"}`,
				`{"type":"TEXT_MESSAGE_START","messageId":"m1"}`, `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"c"}`},
			want:     `[{"id":"m1","role":"assistant","content":"c"}]`,
			warn:     []error{ErrNoTarget},
			warnText: []string{`no message "m1"`},
		},
		{
			name:   "a snapshot that restates an open message keeps it open",
			reason: "the message is held with text content, where its events write",
			events: []string{`{"type":"TEXT_MESSAGE_START","messageId":"m1"}`, `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"a"}`,
				`{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"m1","role":"assistant","content":"A"}]}`, `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"b"}`},
			want: `[{"id":"m1","role":"assistant","content":"Ab"}]`,
		},
		{
			name:   "a snapshot that gives an open message content parts closes it",
			reason: "text is never appended over content parts",
			events: []string{`{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"user"}`,
				`{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"m1","role":"user","content":[{"type":"text","text":"x"}]}]}`, `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"b"}`},
			want: `[{"id":"m1","role":"user","content":[{"type":"text","text":"x"}]}]`,
			warn: []error{ErrNoTarget},
		},
		{
			name:   "a snapshot that moves an open tool call to a user message closes it",
			reason: "tool call events write only assistant messages",
			events: []string{`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"f","parentMessageId":"a1"}`,
				`{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"a1","role":"user","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":""}}]}]}`,
				`{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{}"}`},
			want:     `[{"id":"a1","role":"user","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":""}}]}]`,
			warn:     []error{ErrNoTarget},
			warnText: []string{`message "a1" has the role "user", and tool call events write only into "assistant" messages`},
		},
		{
			name:   "text after tool calls in one assistant message",
			reason: "the start opens the message the tool call made, which has no text yet (reference case 12)",
			events: []string{`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"f","parentMessageId":"a1"}`, `{"type":"TOOL_CALL_END","toolCallId":"c1"}`,
				`{"type":"TEXT_MESSAGE_START","messageId":"a1"}`, `{"type":"TEXT_MESSAGE_CONTENT","messageId":"a1","delta":"Done."}`, `{"type":"TEXT_MESSAGE_END","messageId":"a1"}`},
			want: `[{"id":"a1","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":""}}],"content":"Done."}]`,
		},
		{
			name:   "a chunk stream interrupted by another event",
			reason: "the other event ends the chunk stream, not the construct: a later chunk naming the id goes on with it, as the reference's chunk expansion reopens it",
			events: []string{`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","delta":"a"}`, `{"type":"STATE_DELTA","delta":[]}`,
				`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","delta":"b"}`,
				`{"type":"TOOL_CALL_CHUNK","toolCallId":"c1","toolCallName":"f","parentMessageId":"m1","delta":"{"}`,
				`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","delta":"c"}`, `{"type":"TOOL_CALL_CHUNK","toolCallId":"c1","toolCallName":"f","delta":"}"}`},
			want: `[{"id":"m1","role":"assistant","content":"abc","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}]`,
		},
		{
			name:   "a relay's prelude for an open text message",
			reason: "a viewer joining mid-message gets a snapshot without it, then its START and one CONTENT with the text so far, then the live stream",
			events: []string{`{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"u1","role":"user","content":"hi"}]}`,
				`{"type":"TEXT_MESSAGE_START","messageId":"m1"}`, `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Hel"}`,
				`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"lo"}`, `{"type":"TEXT_MESSAGE_END","messageId":"m1"}`},
			want: `[{"id":"u1","role":"user","content":"hi"},{"id":"m1","role":"assistant","content":"Hello"}]`,
		},
		{
			name:   "a relay's prelude for an open tool call",
			reason: "the snapshot holds the assistant message without the open call; the START names it as parent",
			events: []string{`{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"a1","role":"assistant","content":"Let me look."}]}`,
				`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"f","parentMessageId":"a1"}`, `{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{\"a\""}`,
				`{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":":1}"}`, `{"type":"TOOL_CALL_END","toolCallId":"c1"}`},
			want: `[{"id":"a1","role":"assistant","content":"Let me look.","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]}]`,
		},
		{
			name:   "a relay's prelude for an open reasoning message",
			reason: "as for a text message",
			events: []string{`{"type":"MESSAGES_SNAPSHOT","messages":[]}`,
				`{"type":"REASONING_MESSAGE_START","messageId":"r1","role":"reasoning"}`, `{"type":"REASONING_MESSAGE_CONTENT","messageId":"r1","delta":"think"}`,
				`{"type":"REASONING_MESSAGE_CONTENT","messageId":"r1","delta":"ing"}`, `{"type":"REASONING_MESSAGE_END","messageId":"r1"}`},
			want: `[{"id":"r1","role":"reasoning","content":"thinking"}]`,
		},
		{
			name:   "a relay's prelude for text after a tool call",
			reason: "the snapshot may hold the assistant message with its calls and no text: the START opens it",
			events: []string{`{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"a1","role":"assistant","toolCalls":[]}]}`,
				`{"type":"TEXT_MESSAGE_START","messageId":"a1"}`, `{"type":"TEXT_MESSAGE_CONTENT","messageId":"a1","delta":"so far"}`},
			want: `[{"id":"a1","role":"assistant","toolCalls":[],"content":"so far"}]`,
		},
		{
			name:   "a relay's prelude for an open chunk stream",
			reason: "a chunk with the id opens the viewer's lane stream; the live chunks without an id go on with it",
			events: []string{`{"type":"MESSAGES_SNAPSHOT","messages":[]}`,
				`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","delta":"Hel"}`, `{"type":"TEXT_MESSAGE_CHUNK","delta":"lo"}`},
			want: `[{"id":"m1","role":"assistant","content":"Hello"}]`,
		},
	})
}

// TestConstructsCheckpoint checks that a checkpoint carries the open
// constructs: a Consumer restored mid-message goes on with it, and one
// restored after its end does not.
func TestConstructsCheckpoint(t *testing.T) {
	c := New(nil)
	for _, ev := range []string{
		`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`,
		`{"type":"TEXT_MESSAGE_START","messageId":"m1"}`,
		`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"f","parentMessageId":"m1"}`,
		`{"type":"REASONING_MESSAGE_START","messageId":"r1","role":"reasoning"}`,
	} {
		require.NoError(t, c.Apply([]byte(ev)))
	}
	cp := string(c.Checkpoint())
	assert.Contains(t, cp, `"open":[{"kind":"text message","id":"m1"},{"kind":"tool call","id":"c1"},{"kind":"reasoning message","id":"r1"}]`)
	r, err := Restore([]byte(cp), nil)
	require.NoError(t, err)
	warnings := warningsOf(r)
	for _, ev := range []string{
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"a"}`,
		`{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{}"}`,
		`{"type":"REASONING_MESSAGE_CONTENT","messageId":"r1","delta":"b"}`,
		`{"type":"TEXT_MESSAGE_END","messageId":"m1"}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"c"}`,
	} {
		require.NoError(t, r.Apply([]byte(ev)))
	}
	require.Len(t, warnings(), 1, "only the content after the end is skipped")
	assert.Equal(t, `[{"id":"m1","role":"assistant","content":"a","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"id":"r1","role":"reasoning","content":"b"}]`,
		messagesJSON(r))
}

// TestRestoreRefusesUnreachable checks that Restore refuses open
// constructs, chunk streams and run phases that no stream could make.
func TestRestoreRefusesUnreachable(t *testing.T) {
	c := New(nil)
	for _, ev := range []string{
		`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`,
		`{"type":"TEXT_MESSAGE_START","messageId":"m1"}`,
		`{"type":"REASONING_MESSAGE_START","messageId":"r1","role":"reasoning"}`,
		`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"f","parentMessageId":"m1"}`,
		`{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"m1","role":"assistant","content":"","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":""}}]},{"id":"r1","role":"reasoning","content":""},{"id":"u1","role":"user","content":[1]},{"id":"u2","role":"user","content":"x","toolCalls":[{"id":"c9"}]}]}`,
	} {
		require.NoError(t, c.Apply([]byte(ev)))
	}
	good := string(c.Checkpoint())
	_, err := Restore([]byte(good), nil)
	require.NoError(t, err, "the checkpoint itself restores")
	const open = `"open":[{"kind":"text message","id":"m1"},{"kind":"reasoning message","id":"r1"},{"kind":"tool call","id":"c1"}]`
	require.Contains(t, good, open)
	withOpen := func(list string) string { return strings.Replace(good, open, `"open":[`+list+`]`, 1) }
	withChunks := func(list string) string { return strings.Replace(good, `"chunks":[]`, `"chunks":[`+list+`]`, 1) }
	endedWithStream := strings.Replace(withChunks(`{"lane":"","kind":"TEXT_MESSAGE_CHUNK","id":"m1","role":"assistant"}`), open, `"open":[]`, 1)
	endedWithStream = strings.Replace(endedWithStream, `"run":"started"`, `"run":"error"`, 1)
	tests := []struct {
		name, checkpoint, reason string
	}{
		{"open message not held", withOpen(`{"kind":"text message","id":"zz"}`), "an open construct's message is held"},
		{"open text over a reasoning message", withOpen(`{"kind":"text message","id":"r1"}`), "text events do not write reasoning"},
		{"open reasoning over an assistant message", withOpen(`{"kind":"reasoning message","id":"m1"}`), "reasoning events write only reasoning"},
		{"open text over content parts", withOpen(`{"kind":"text message","id":"u1"}`), "text is never appended over parts"},
		{"open tool call not held", withOpen(`{"kind":"tool call","id":"c2"}`), "an open call is held"},
		{"open tool call in a user message", withOpen(`{"kind":"tool call","id":"c9"}`), "calls live in assistant messages"},
		{"open twice", withOpen(`{"kind":"text message","id":"m1"},{"kind":"text message","id":"m1"}`), "one construct opens once"},
		{"unknown kind", withOpen(`{"kind":"poem","id":"m1"}`), "three kinds"},
		{"open after the run finished", strings.Replace(good, `"run":"started"`, `"run":"finished"`, 1), "RUN_FINISHED closes every construct"},
		{"chunk stream after the run ended", endedWithStream, "RUN_ERROR closes every chunk stream"},
		{"text stream without a role", withChunks(`{"lane":"","kind":"TEXT_MESSAGE_CHUNK","id":"m1"}`), "opening a text stream gives it a role"},
		{"text stream of a role no text has", withChunks(`{"lane":"","kind":"TEXT_MESSAGE_CHUNK","id":"m1","role":"tool"}`), "a text message's role"},
		{"text stream with a parent", withChunks(`{"lane":"","kind":"TEXT_MESSAGE_CHUNK","id":"m1","role":"assistant","parent":"p"}`), "only tool calls have parents"},
		{"reasoning stream with a role", withChunks(`{"lane":"","kind":"REASONING_MESSAGE_CHUNK","id":"r1","role":"reasoning"}`), "reasoning chunks carry no role"},
		{"tool stream without a name", withChunks(`{"lane":"","kind":"TOOL_CALL_CHUNK","id":"c1"}`), "opening a tool stream needs a toolCallName"},
		{"two streams of one construct", withChunks(`{"lane":"","kind":"TEXT_MESSAGE_CHUNK","id":"m1","role":"assistant"},{"lane":"s","kind":"TEXT_MESSAGE_CHUNK","id":"m1","role":"assistant"}`),
			"a chunk naming an open stream's id goes to its lane"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.NotEqual(t, good, tt.checkpoint, "the row changes the checkpoint")
			_, err := Restore([]byte(tt.checkpoint), nil)
			assert.ErrorIs(t, err, errBadCheckpoint, tt.reason)
		})
	}
	ok := withChunks(`{"lane":"","kind":"TEXT_MESSAGE_CHUNK","id":"m1","role":"assistant"},{"lane":"s","kind":"TOOL_CALL_CHUNK","id":"c1","name":"f","parent":"m1"}`)
	_, err = Restore([]byte(ok), nil)
	assert.NoError(t, err, "streams as chunks open them")
}
