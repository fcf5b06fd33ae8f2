package aguistate

import "testing"

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
