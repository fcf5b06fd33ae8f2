// Tests of the run events: inputs, interrupts, malformed runs.

package aguistate

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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

// TestInterrupts checks the pending interrupts against the reference
// client's pendingInterrupts.
func TestInterrupts(t *testing.T) {
	const (
		start  = `{"type":"RUN_STARTED","threadId":"t","runId":"r"}`
		finish = `{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"interrupt","interrupts":[{"id":"i1","reason":"x"}]}}`
	)
	cases := []struct {
		name, reason string
		events       []string
		want         string // Interrupts() as a JSON array; "null" for none
	}{
		{
			name:   "03-run-finished-interrupt",
			reason: "reference case 03: each interrupt verbatim, unknown members kept, \"subagentRunId\": null removed",
			events: []string{start, `{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"interrupt","interrupts":[{"id":"i1","reason":"tool_call","toolCallId":"c1","subagentRunId":null,"responseSchema":{"type":"object"},"extra":5},{"id":"i2","reason":"confirm","subagentRunId":"sub1"}]}}`},
			want:   `[{"id":"i1","reason":"tool_call","toolCallId":"c1","responseSchema":{"type":"object"},"extra":5},{"id":"i2","reason":"confirm","subagentRunId":"sub1"}]`,
		},
		{
			name:   "04-run-finished-success-and-result",
			reason: "reference case 04: a success outcome leaves none pending",
			events: []string{start, `{"type":"RUN_FINISHED","threadId":"t","runId":"r","result":{"x":1},"outcome":{"type":"success","pendingToolCallIds":["c9"]}}`},
			want:   `null`,
		},
		{
			name:   "50-run-finished-interrupt-pipeline",
			reason: "reference case 50 (pipeline) strips the unknown member extra; we keep each interrupt verbatim (decision 6), as its default mode does",
			events: []string{start, `{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"interrupt","interrupts":[{"id":"i1","reason":"tool_call","extra":5,"metadata":{"m":1}}]}}`},
			want:   `[{"id":"i1","reason":"tool_call","extra":5,"metadata":{"m":1}}]`,
		},
		{
			name:   "51-run-finished-cancelled-or-bare",
			reason: "reference case 51: a cancelled outcome clears them",
			events: []string{start, finish, start, `{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"cancelled"}}`},
			want:   `null`,
		},
		{
			name:   "61-run-finished-bare-clears",
			reason: "reference case 61: RUN_ERROR leaves them",
			events: []string{start, finish, `{"type":"RUN_ERROR","message":"e"}`},
			want:   `[{"id":"i1","reason":"x"}]`,
		},
		{
			name:   "62-run-finished-bare",
			reason: "reference case 62: a RUN_FINISHED without outcome clears them",
			events: []string{start, finish, start, `{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`},
			want:   `null`,
		},
		{
			name:   "steps and RUN_STARTED keep them",
			reason: "only RUN_FINISHED changes the pending interrupts",
			events: []string{finish, `{"type":"STEP_STARTED","stepName":"s"}`, `{"type":"STEP_FINISHED","stepName":"s"}`, start},
			want:   `[{"id":"i1","reason":"x"}]`,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			con := New(nil)
			for _, ev := range c.events {
				require.NoError(t, con.Apply([]byte(ev)))
			}
			got, err := json.Marshal(con.Interrupts())
			require.NoError(t, err)
			assert.Equal(t, c.want, string(got), c.reason)
		})
	}
}

// TestRunStartedInputState checks decision 5: the input's state becomes the
// state and the baseline of the run's deltas, and ends divergence.
func TestRunStartedInputState(t *testing.T) {
	c := New(nil)
	require.NoError(t, c.Apply([]byte(`{"type":"STATE_DELTA","delta":[{"op":"remove","path":"/x"}]}`)))
	require.True(t, c.Diverged())
	require.NoError(t, c.Apply([]byte(`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`)))
	assert.True(t, c.Diverged(), "a RUN_STARTED without input state keeps the divergence")
	require.NoError(t, c.Apply([]byte(`{"type":"RUN_STARTED","threadId":"t","runId":"r","input":{"threadId":"t","runId":"r","state":{"x":1},"messages":[]}}`)))
	assert.False(t, c.Diverged())
	require.NoError(t, c.Apply([]byte(`{"type":"STATE_DELTA","delta":[{"op":"remove","path":"/x"}]}`)))
	assert.Equal(t, `{}`, c.State().String())
	assert.False(t, c.Diverged())
}

// TestRunMalformed checks that a run or step event with a required field
// missing or of the wrong type is fatal and changes nothing.
func TestRunMalformed(t *testing.T) {
	held := `[{"id":"u1","role":"user","content":"hi"}]`
	var cases []eventCase
	for ev, err := range map[string]error{
		`{"type":"RUN_STARTED","runId":"r"}`:                                                                 ErrMalformedEvent,
		`{"type":"RUN_STARTED","threadId":"t","runId":1}`:                                                    ErrMalformedEvent,
		`{"type":"RUN_STARTED","threadId":"t","runId":"r","parentRunId":1}`:                                  ErrMalformedEvent,
		`{"type":"RUN_STARTED","threadId":"t","runId":"r","input":[]}`:                                       ErrMalformedEvent,
		`{"type":"RUN_STARTED","threadId":"t","runId":"r","input":{"state":{"a":1},"messages":{}}}`:          ErrMalformedEvent,
		`{"type":"RUN_STARTED","threadId":"t","runId":"r","input":{"messages":[{"id":"x"}]}}`:                errMalformedMessages,
		`{"type":"RUN_FINISHED","threadId":"t"}`:                                                             ErrMalformedEvent,
		`{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":"success"}`:                             ErrMalformedEvent,
		`{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{}}`:                                    ErrMalformedEvent,
		`{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"interrupt"}}`:                  ErrMalformedEvent,
		`{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"interrupt","interrupts":[1]}}`: ErrMalformedEvent,
		`{"type":"RUN_ERROR"}`:                     ErrMalformedEvent,
		`{"type":"RUN_ERROR","message":{}}`:        ErrMalformedEvent,
		`{"type":"STEP_STARTED"}`:                  ErrMalformedEvent,
		`{"type":"STEP_FINISHED","stepName":null}`: ErrMalformedEvent,
	} {
		cases = append(cases, eventCase{name: ev, reason: "a required field is missing or of the wrong type",
			messages: held, events: []string{
				`{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"interrupt","interrupts":[{"id":"i"}]}}`, ev},
			want: held, fatal: err})
	}
	runEventCases(t, cases)
}
