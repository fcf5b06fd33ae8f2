// Tests of the chunk events and their lanes.

package aguistate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestChunkReference runs the reference-client cases for chunk events (run
// with the reference's pipeline, which transforms chunks).
func TestChunkReference(t *testing.T) {
	runEventCases(t, []eventCase{
		{
			name:   "13-text-chunk-pipeline",
			reason: "reference case 13 (pipeline): same output",
			events: []string{
				`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`,
				`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","delta":"a"}`,
				`{"type":"TEXT_MESSAGE_CHUNK","delta":"b"}`,
				`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","delta":"c"}`,
				`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m2","role":"user","name":"n","delta":"d"}`,
				`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m3"}`,
				`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`,
			},
			want: `[{"id":"m1","role":"assistant","content":"abc"},{"id":"m2","role":"user","content":"d","name":"n"},{"id":"m3","role":"assistant","content":""}]`,
		},
		{
			name:   "14-text-chunk-first-no-id",
			reason: "reference case 14 (pipeline) errors \"First TEXT_MESSAGE_CHUNK must have a messageId\"; fatal here too (decision 4)",
			events: []string{
				`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`,
				`{"type":"TEXT_MESSAGE_CHUNK","delta":"a"}`,
			},
			want:  `[]`,
			fatal: ErrMalformedEvent,
		},
		{
			name:   "15-chunk-default-mode-error",
			reason: "reference case 15 in default mode errors \"TEXT_MESSAGE_CHUNK must be transformed before being applied\"; a real run transforms chunks first (its pipeline), and we apply that transformation ourselves, so the chunk opens m1",
			events: []string{
				`{"type":"TEXT_MESSAGE_START","messageId":"m0"}`,
				`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","delta":"a"}`,
				`{"type":"TEXT_MESSAGE_START","messageId":"m2"}`,
			},
			want: `[{"id":"m0","role":"assistant","content":""},{"id":"m1","role":"assistant","content":"a"},{"id":"m2","role":"assistant","content":""}]`,
		},
		{
			name:   "16-text-chunk-after-explicit-start",
			reason: "reference case 16 (pipeline) errors \"First TEXT_MESSAGE_CHUNK must have a messageId\": an explicit TEXT_MESSAGE_START opens no chunk stream; fatal here too (decision 4)",
			events: []string{
				`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`,
				`{"type":"TEXT_MESSAGE_START","messageId":"m1"}`,
				`{"type":"TEXT_MESSAGE_CHUNK","delta":"x"}`,
			},
			want:  `[{"id":"m1","role":"assistant","content":""}]`,
			fatal: ErrMalformedEvent,
		},
		{
			name:   "17-text-chunk-role-conflict",
			reason: "reference case 17 (pipeline) errors \"Cannot continue text message 'm1': chunk role 'user' does not match the open stream's role 'assistant'.\"; fatal here too (decision 4)",
			events: []string{
				`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`,
				`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","delta":"a"}`,
				`{"type":"TEXT_MESSAGE_CHUNK","role":"user","delta":"b"}`,
			},
			want:  `[{"id":"m1","role":"assistant","content":"a"}]`,
			fatal: ErrMalformedEvent,
		},
		{
			name:   "25-tool-chunk-pipeline",
			reason: "reference case 25 (pipeline): same output",
			events: []string{
				`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`,
				`{"type":"TOOL_CALL_CHUNK","toolCallId":"c1","toolCallName":"f","parentMessageId":"a1","delta":"{\"a\""}`,
				`{"type":"TOOL_CALL_CHUNK","delta":":1}"}`,
				`{"type":"TOOL_CALL_CHUNK","toolCallId":"c2","toolCallName":"g","delta":"{}"}`,
				`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`,
			},
			want: `[{"id":"a1","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},{"id":"c2","role":"assistant","toolCalls":[{"id":"c2","type":"function","function":{"name":"g","arguments":"{}"}}]}]`,
		},
		{
			name:   "26-tool-chunk-first-no-name",
			reason: "reference case 26 (pipeline) errors \"First TOOL_CALL_CHUNK must have a toolCallName\"; fatal here too (decision 4)",
			events: []string{
				`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`,
				`{"type":"TOOL_CALL_CHUNK","toolCallId":"c1","delta":"{}"}`,
			},
			want:  `[]`,
			fatal: ErrMalformedEvent,
		},
		{
			name:   "32-reasoning-chunk-pipeline",
			reason: "reference case 32 (pipeline): same output",
			events: []string{
				`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`,
				`{"type":"REASONING_MESSAGE_CHUNK","messageId":"r1","delta":"a"}`,
				`{"type":"REASONING_MESSAGE_CHUNK","delta":"b"}`,
				`{"type":"REASONING_MESSAGE_CHUNK","messageId":"r2","delta":"c"}`,
				`{"type":"REASONING_MESSAGE_CHUNK","messageId":"r3"}`,
				`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`,
			},
			want: `[{"id":"r1","role":"reasoning","content":"ab"},{"id":"r2","role":"reasoning","content":"c"},{"id":"r3","role":"reasoning","content":""}]`,
		},
		{
			name:   "32b-reasoning-chunk-closed-by-text-chunk",
			reason: "reference case 32b (pipeline) errors \"First REASONING_MESSAGE_CHUNK must have a messageId\": the text chunk closed the reasoning stream; fatal here too (decision 4)",
			events: []string{
				`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`,
				`{"type":"REASONING_MESSAGE_CHUNK","messageId":"r1","delta":"a"}`,
				`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","delta":"t"}`,
				`{"type":"REASONING_MESSAGE_CHUNK","delta":"c"}`,
			},
			want:  `[{"id":"r1","role":"reasoning","content":"a"},{"id":"m1","role":"assistant","content":"t"}]`,
			fatal: ErrMalformedEvent,
		},
		{
			name:   "48-text-chunk-interleaved-with-tool-chunk",
			reason: "reference case 48 (pipeline): same output; the tool chunk closes text stream m1 and the next text chunk reopens m1, reusing the message",
			events: []string{
				`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`,
				`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","delta":"a"}`,
				`{"type":"TOOL_CALL_CHUNK","toolCallId":"c1","toolCallName":"f","parentMessageId":"m1","delta":"{}"}`,
				`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","delta":"b"}`,
				`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`,
			},
			want: `[{"id":"m1","role":"assistant","content":"ab","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}]`,
		},
		{
			name:   "57-text-chunk-metadata-rawevent",
			reason: "reference case 57 (pipeline): same output; the id-less chunk goes to the one lane (s1) with an open text stream",
			events: []string{
				`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`,
				`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","rawEvent":{"p":1},"metadata":{"k":1},"subagentRunId":"s1"}`,
				`{"type":"TEXT_MESSAGE_CHUNK","delta":"z","metadata":{"k2":2}}`,
				`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`,
			},
			want: `[{"id":"m1","role":"assistant","content":"z","subagentRunId":"s1","metadata":{"k":1,"k2":2}}]`,
		},
	})
}

// TestChunkLanes checks the chunk streams: lanes, continuation rules and
// the events that close a stream.
func TestChunkLanes(t *testing.T) {
	runEventCases(t, []eventCase{
		{
			name:   "two subagent lanes interleaved",
			reason: "each lane has its own stream; a chunk with an open stream's id goes to its lane",
			events: []string{
				`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","subagentRunId":"s1","delta":"a"}`,
				`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m2","subagentRunId":"s2","delta":"x"}`,
				`{"type":"TEXT_MESSAGE_CHUNK","subagentRunId":"s1","delta":"b"}`,
				`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m2","delta":"y"}`,
			},
			want: `[{"id":"m1","role":"assistant","content":"ab","subagentRunId":"s1"},{"id":"m2","role":"assistant","content":"xy","subagentRunId":"s2"}]`,
		},
		{
			name:   "ambiguous chunk",
			reason: "no id, no subagentRunId, no parent stream and two lanes with a text stream: the reference errors",
			events: []string{
				`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","subagentRunId":"s1"}`,
				`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m2","subagentRunId":"s2"}`,
				`{"type":"TEXT_MESSAGE_CHUNK","delta":"?"}`,
			},
			want:  `[{"id":"m1","role":"assistant","content":"","subagentRunId":"s1"},{"id":"m2","role":"assistant","content":"","subagentRunId":"s2"}]`,
			fatal: ErrMalformedEvent,
		},
		{
			name:   "subagent mismatch",
			reason: "m1 is open in lane s1; a chunk for m1 from s2 is an error in the reference",
			events: []string{
				`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","subagentRunId":"s1","delta":"a"}`,
				`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","subagentRunId":"s2","delta":"b"}`,
			},
			want:  `[{"id":"m1","role":"assistant","content":"a","subagentRunId":"s1"}]`,
			fatal: ErrMalformedEvent,
		},
		{
			name:   "name conflict",
			reason: "decision 4: a continuing chunk may repeat the name only with the same value",
			events: []string{
				`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","delta":"a"}`,
				`{"type":"TEXT_MESSAGE_CHUNK","name":"n","delta":"b"}`,
			},
			want:  `[{"id":"m1","role":"assistant","content":"a"}]`,
			fatal: ErrMalformedEvent,
		},
		{
			name:   "parentMessageId conflict",
			reason: "decision 4: a continuing tool chunk may repeat parentMessageId only with the same value",
			events: []string{
				`{"type":"TOOL_CALL_CHUNK","toolCallId":"c1","toolCallName":"f","parentMessageId":"p"}`,
				`{"type":"TOOL_CALL_CHUNK","toolCallId":"c1","toolCallName":"f","parentMessageId":"q","delta":"{}"}`,
			},
			want:  `[{"id":"p","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":""}}]}]`,
			fatal: ErrMalformedEvent,
		},
		{
			name:   "same role and name continue",
			reason: "repeating the stream's role and name is allowed",
			events: []string{
				`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","role":"user","name":"n","delta":"a"}`,
				`{"type":"TEXT_MESSAGE_CHUNK","role":"user","name":"n","delta":"b"}`,
			},
			want: `[{"id":"m1","role":"user","content":"ab","name":"n"}]`,
		},
		{
			name:   "metadata-only chunk",
			reason: "a continuing chunk with metadata and no delta applies an empty CONTENT carrying the metadata",
			events: []string{
				`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","delta":"a"}`,
				`{"type":"TEXT_MESSAGE_CHUNK","metadata":{"k":1}}`,
			},
			want: `[{"id":"m1","role":"assistant","content":"a","metadata":{"k":1}}]`,
		},
		{
			name:   "explicit event closes its own lane",
			reason: "a TEXT_MESSAGE_CONTENT in the parent lane closes the parent stream, so the next id-less chunk must open one",
			events: []string{
				`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","delta":"a"}`,
				`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"b"}`,
				`{"type":"TEXT_MESSAGE_CHUNK","delta":"c"}`,
			},
			want:  `[{"id":"m1","role":"assistant","content":"ab"}]`,
			fatal: ErrMalformedEvent,
		},
		{
			name:   "explicit event of another lane, RAW and ACTIVITY keep the stream",
			reason: "an event closes only its own lane; RAW, ACTIVITY_* and REASONING_ENCRYPTED_VALUE close nothing",
			events: []string{
				`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","delta":"a"}`,
				`{"type":"STEP_STARTED","stepName":"s","subagentRunId":"other"}`,
				`{"type":"RAW","event":{}}`,
				`{"type":"ACTIVITY_SNAPSHOT","messageId":"act","activityType":"p","content":{}}`,
				`{"type":"REASONING_ENCRYPTED_VALUE","subtype":"message","entityId":"m1","encryptedValue":"e"}`,
				`{"type":"TEXT_MESSAGE_CHUNK","delta":"b"}`,
			},
			want: `[{"id":"m1","role":"assistant","content":"ab","encryptedValue":"e"},{"id":"act","role":"activity","activityType":"p","content":{}}]`,
		},
		{
			name:   "RUN_FINISHED closes every lane",
			reason: "RUN_*, MESSAGES_SNAPSHOT close all streams",
			events: []string{
				`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","subagentRunId":"s1","delta":"a"}`,
				`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`,
				`{"type":"TEXT_MESSAGE_CHUNK","subagentRunId":"s1","delta":"b"}`,
			},
			want:  `[{"id":"m1","role":"assistant","content":"a","subagentRunId":"s1"}]`,
			fatal: ErrMalformedEvent,
		},
		{
			name:   "SUBAGENT_FINISHED closes its lane",
			reason: "SUBAGENT_FINISHED and SUBAGENT_ERROR close the subagent's stream",
			events: []string{
				`{"type":"REASONING_MESSAGE_CHUNK","messageId":"r1","subagentRunId":"s1","delta":"a"}`,
				`{"type":"SUBAGENT_FINISHED","subagentRunId":"s1"}`,
				`{"type":"REASONING_MESSAGE_CHUNK","subagentRunId":"s1","delta":"b"}`,
			},
			want:  `[{"id":"r1","role":"reasoning","content":"a","subagentRunId":"s1"}]`,
			fatal: ErrMalformedEvent,
		},
		{
			name:     "tool chunk on an existing call",
			reason:   "the synthesized START is a replay (construct rule), so the ARGS of the same chunk are skipped too: one warning, the first reason",
			messages: `[{"id":"a1","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{"}}]}]`,
			events:   []string{`{"type":"TOOL_CALL_CHUNK","toolCallId":"c1","toolCallName":"f","delta":"}"}`},
			want:     `[{"id":"a1","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{"}}]}]`,
			warn:     []error{ErrNoTarget},
			warnText: []string{`tool call "c1" is held already: a start that names it is a replay`},
		},
		{
			name:   "delta of the wrong type",
			reason: "optional fields may be absent or null, not of another type",
			events: []string{`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","delta":1}`},
			want:   `[]`,
			fatal:  ErrMalformedEvent,
		},
		{
			name:   "explicit event with a subagentRunId of the wrong type",
			reason: "the lane an event closes comes from its subagentRunId, which must be a string",
			events: []string{`{"type":"STEP_STARTED","stepName":"n","subagentRunId":1}`},
			want:   `[]`,
			fatal:  ErrMalformedEvent,
		},
	})
}

// TestChunkFatalKeepsStreams checks that a fatal chunk leaves the open
// streams as they were: the stream it failed to continue is still open.
func TestChunkFatalKeepsStreams(t *testing.T) {
	c := New(nil)
	require.NoError(t, c.Apply([]byte(`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","delta":"a"}`)))
	err := c.Apply([]byte(`{"type":"TEXT_MESSAGE_CHUNK","role":"user","delta":"x"}`))
	require.ErrorIs(t, err, ErrMalformedEvent)
	require.NoError(t, c.Apply([]byte(`{"type":"TEXT_MESSAGE_CHUNK","delta":"b"}`)))
	assert.Equal(t, `[{"id":"m1","role":"assistant","content":"ab"}]`, messagesJSON(c))
}
