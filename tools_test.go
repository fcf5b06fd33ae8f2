package aguistate

import "testing"

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
			reason:   "reference case 22 renames the existing tool call to g (and warns); we keep it as it is and skip the START with ErrNoTarget (decision 2); the ARGS still append",
			messages: `[{"id":"a1","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]}]`,
			events: []string{
				`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"f","parentMessageId":"other"}`,
				`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"g"}`,
				`{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"X"}`,
			},
			want: `[{"id":"a1","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":1}X"}}]}]`,
			warn: []error{ErrNoTarget, ErrNoTarget},
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
			reason:   "reference case 47 (pipeline): same messages, silent because the name is unchanged; we warn that the tool call already exists (decision 2)",
			messages: `[{"id":"a1","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}]`,
			events: []string{
				`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`,
				`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"f"}`,
				`{"type":"TOOL_CALL_END","toolCallId":"c1"}`,
				`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`,
			},
			want: `[{"id":"a1","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}]`,
			warn: []error{ErrNoTarget},
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
