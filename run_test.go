package aguistate

import "testing"

// TestRunReference runs the reference-client cases for run events.
func TestRunReference(t *testing.T) {
	runEventCases(t, []eventCase{
		{
			name:     "01-run-started-no-input",
			reason:   "reference case 01: same output",
			state:    `{"a":1}`,
			messages: `[{"id":"u1","role":"user","content":"hi"}]`,
			events: []string{
				`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`,
			},
			want: `[{"id":"u1","role":"user","content":"hi"}]`,
		},
		{
			name:     "02-run-started-with-input",
			reason:   "reference case 02 keeps the state {\"a\":1} (it ignores input.state) and drops \"subagentRunId\": null from input messages; we make input.state the state (decision 5; spec STATE_DELTA: \"at the start of a run, the input's state\") and keep messages verbatim (Message: every field kept verbatim)",
			state:    `{"a":1}`,
			messages: `[{"id":"u1","role":"user","content":"hi"}]`,
			events: []string{
				`{"type":"RUN_STARTED","threadId":"t","runId":"r","input":{"threadId":"t","runId":"r","state":{"b":2},"messages":[{"id":"u1","role":"user","content":"CHANGED"},{"id":"u2","role":"user","content":"new","subagentRunId":null},{"id":"act","role":"activity","activityType":"x","content":{"k":1}}],"tools":[],"context":[]}}`,
			},
			want:      `[{"id":"u1","role":"user","content":"hi"},{"id":"u2","role":"user","content":"new","subagentRunId":null},{"id":"act","role":"activity","activityType":"x","content":{"k":1}}]`,
			wantState: `{"b":2}`,
		},
		{
			name:     "05-run-error-steps",
			reason:   "reference case 05: same output",
			state:    `{"a":1}`,
			messages: `[{"id":"u1","role":"user","content":"hi"}]`,
			events: []string{
				`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`,
				`{"type":"STEP_STARTED","stepName":"s"}`,
				`{"type":"STEP_FINISHED","stepName":"s"}`,
				`{"type":"RUN_ERROR","message":"boom","code":"E"}`,
			},
			want: `[{"id":"u1","role":"user","content":"hi"}]`,
		},
		{
			name:   "49-run-started-input-dup-ids",
			reason: "reference case 49: same output",
			events: []string{
				`{"type":"RUN_STARTED","threadId":"t","runId":"r","input":{"threadId":"t","runId":"r","messages":[{"id":"x","role":"user","content":"1"},{"id":"x","role":"user","content":"2"}]}}`,
				`{"type":"RUN_STARTED","threadId":"t","runId":"r2","input":{"threadId":"t","runId":"r2","messages":[{"id":"x","role":"user","content":"3"},{"id":"y","role":"assistant","content":"4"}]}}`,
			},
			want: `[{"id":"x","role":"user","content":"1"},{"id":"y","role":"assistant","content":"4"}]`,
		},
	})
}
