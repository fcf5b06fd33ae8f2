// Tests of the run events: inputs, interrupts, malformed runs.

package aguistate

import (
	"encoding/json"
	"errors"
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
			events: []string{finish, start, `{"type":"STEP_STARTED","stepName":"s"}`, `{"type":"STEP_FINISHED","stepName":"s"}`},
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
				`{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"interrupt","interrupts":[{"id":"i"}]}}`,
				`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`, ev},
			want: held, fatal: err})
	}
	runEventCases(t, cases)
}

// TestRunLifecycle checks the run lifecycle (issue 7, point 5), as the
// reference client's verifyEvents has it: after RUN_FINISHED only
// RUN_STARTED and RUN_ERROR, after RUN_ERROR only RUN_STARTED; and a
// RUN_FINISHED ends the run its RUN_STARTED started.
func TestRunLifecycle(t *testing.T) {
	const (
		start    = `{"type":"RUN_STARTED","threadId":"t","runId":"r"}`
		start2   = `{"type":"RUN_STARTED","threadId":"t","runId":"r2"}`
		finish   = `{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`
		failed   = `{"type":"RUN_ERROR","message":"boom"}`
		text     = `{"type":"TEXT_MESSAGE_START","messageId":"m1"}`
		m1       = `[{"id":"m1","role":"assistant","content":""}]`
		afterFin = `run "r" ended with RUN_FINISHED; only RUN_STARTED (a new run) or RUN_ERROR may follow it`
		afterErr = `run "r" ended with RUN_ERROR; only RUN_STARTED (a new run) may follow it`
	)
	cases := []eventCase{
		{name: "bare stream", reason: "before any RUN_STARTED every event is taken, RUN_FINISHED of any run included",
			events: []string{text, `{"type":"RUN_FINISHED","threadId":"x","runId":"y"}`}, want: m1},
		{name: "RUN_ERROR first", reason: "verifyEvents lets a stream begin with RUN_ERROR; then only RUN_STARTED",
			events: []string{failed, text}, want: `[]`, fatal: ErrMalformedEvent,
			fatalText: `run "" ended with RUN_ERROR; only RUN_STARTED (a new run) may follow it`},
		{name: "RUN_ERROR after RUN_FINISHED", reason: "verifyEvents allows it",
			events: []string{start, finish, failed}, want: `[]`},
		{name: "nothing but RUN_STARTED after that RUN_ERROR", reason: "RUN_ERROR ends the run for good",
			events: []string{start, finish, failed, `{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`}, want: `[]`,
			fatal: ErrMalformedEvent, fatalText: afterErr},
		{name: "a new run after RUN_FINISHED", reason: "RUN_STARTED begins the next run",
			events: []string{start, finish, start2, text, `{"type":"RUN_FINISHED","threadId":"t","runId":"r2"}`}, want: m1},
		{name: "a new run after RUN_ERROR", reason: "RUN_STARTED begins the next run",
			events: []string{start, failed, start2, text}, want: m1},
		{name: "RUN_STARTED while a run is active", reason: "it ends the active run and starts its own (verifyEvents throws)",
			events: []string{start, start2, text, `{"type":"RUN_FINISHED","threadId":"t","runId":"r2"}`}, want: m1},
		{name: "RUN_FINISHED of another run", reason: "a RUN_FINISHED ends the run its RUN_STARTED started",
			events: []string{start, text, `{"type":"RUN_FINISHED","threadId":"t","runId":"r9"}`}, want: m1,
			fatal: ErrMalformedEvent, fatalText: `it ends run "r9" of thread "t", but the run that RUN_STARTED started is "r" of thread "t"`},
		{name: "RUN_FINISHED of another thread", reason: "a RUN_FINISHED ends the run its RUN_STARTED started",
			events: []string{start, `{"type":"RUN_FINISHED","threadId":"t9","runId":"r"}`}, want: `[]`,
			fatal: ErrMalformedEvent, fatalText: `thread "t9"`},
		{name: "RUN_STARTED's own run id, not its input's", reason: "the input may name the run id the client asked for; the run is the event's",
			events: []string{`{"type":"RUN_STARTED","threadId":"t","runId":"r","input":{"threadId":"t","runId":"b"}}`, finish}, want: `[]`},
		{name: "RUN_STARTED of another thread than its input's", reason: "an agent does not move the client's thread elsewhere",
			events: []string{`{"type":"RUN_STARTED","threadId":"t","runId":"r","input":{"threadId":"a","runId":"r"}}`}, want: `[]`,
			fatal: ErrMalformedEvent, fatalText: `its input is of thread "a"`},
		{name: "RUN_STARTED of another thread", reason: "a Consumer holds one thread",
			events: []string{start, finish, `{"type":"RUN_STARTED","threadId":"t9","runId":"r2"}`}, want: `[]`,
			fatal: ErrMalformedEvent, fatalText: `holds thread "t"`},
		{name: "RUN_FINISHED twice", reason: "the run is over", events: []string{start, finish, finish}, want: `[]`,
			fatal: ErrMalformedEvent, fatalText: afterFin},
		{name: "RUN_ERROR twice", reason: "the run is over", events: []string{start, failed, failed}, want: `[]`,
			fatal: ErrMalformedEvent, fatalText: afterErr},
	}
	for _, ev := range []string{
		text,
		`{"type":"STATE_SNAPSHOT","snapshot":{}}`,
		`{"type":"STATE_DELTA","delta":[]}`,
		`{"type":"MESSAGES_SNAPSHOT","messages":[]}`,
		`{"type":"TOOL_CALL_START","toolCallId":"c","toolCallName":"f"}`,
		`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","delta":"x"}`,
		`{"type":"ACTIVITY_SNAPSHOT","messageId":"a","activityType":"p","content":{}}`,
		`{"type":"STEP_STARTED","stepName":"s"}`,
		`{"type":"CUSTOM","name":"n","value":1}`,
		`{"type":"RAW","event":{}}`,
		`{"type":"SOMETHING_NEW"}`,
	} {
		cases = append(cases,
			eventCase{name: "after RUN_FINISHED: " + ev, reason: "only RUN_STARTED or RUN_ERROR may follow RUN_FINISHED",
				events: []string{start, finish, ev}, want: `[]`, fatal: ErrMalformedEvent, fatalText: afterFin},
			eventCase{name: "after RUN_ERROR: " + ev, reason: "only RUN_STARTED may follow RUN_ERROR",
				events: []string{start, failed, ev}, want: `[]`, fatal: ErrMalformedEvent, fatalText: afterErr})
	}
	runEventCases(t, cases)
}

// TestRunning checks Running through a run's lifecycle.
func TestRunning(t *testing.T) {
	c := New(nil)
	assert.False(t, c.Running(), "no run yet")
	require.NoError(t, startRun(c, `{"threadId":"t","runId":"r"}`))
	assert.False(t, c.Running(), "a run input starts no run: the agent's RUN_STARTED does")
	for _, step := range []struct {
		event   string
		running bool
	}{
		{`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`, true},
		{`{"type":"STATE_SNAPSHOT","snapshot":{}}`, true},
		{`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`, false},
		{`{"type":"RUN_STARTED","threadId":"t","runId":"r2"}`, true},
		{`{"type":"RUN_ERROR","message":"boom"}`, false},
	} {
		require.NoError(t, c.Apply([]byte(step.event)))
		assert.Equal(t, step.running, c.Running(), step.event)
	}
}

// TestRunLifecycleRestored checks that a checkpoint keeps where the run
// lifecycle stands.
func TestRunLifecycleRestored(t *testing.T) {
	c := New(nil)
	require.NoError(t, c.Apply([]byte(`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`)))
	require.NoError(t, c.Apply([]byte(`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`)))
	r, err := Restore(c.Checkpoint(), nil)
	require.NoError(t, err)
	err = r.Apply([]byte(`{"type":"STATE_DELTA","delta":[]}`))
	assert.ErrorIs(t, err, ErrMalformedEvent, "the restored run has finished")
	assert.NoError(t, r.Apply([]byte(`{"type":"RUN_STARTED","threadId":"t","runId":"r2"}`)))
	assert.NoError(t, r.Apply([]byte(`{"type":"STATE_DELTA","delta":[]}`)))
}

// TestRunInputWithoutIDs checks that an input's messages without an id
// are matched to the held ones by JSON text, so that StartRun of the
// Consumer's own NextInput adds nothing (issue 8, kind 3).
func TestRunInputWithoutIDs(t *testing.T) {
	const hi, yes = `{"role":"user","content":"hi"}`, `{"role":"user","content":"yes"}`
	tests := []struct {
		name, reason string
		inputs       []string
		want         string
	}{
		{"the same input twice", "the second run's input restates the first's messages",
			[]string{`[` + hi + `]`, `[` + hi + `]`}, `[` + hi + `]`},
		{"a new message", "a message without an id that is not held is appended",
			[]string{`[` + hi + `]`, `[` + hi + `,` + yes + `]`}, `[` + hi + `,` + yes + `]`},
		{"the same words again", "as many are held as the input has; one more is appended",
			[]string{`[` + hi + `]`, `[` + hi + `,` + hi + `]`}, `[` + hi + `,` + hi + `]`},
		{"ids and no ids", "messages with an id match by id",
			[]string{`[{"id":"a","role":"user","content":"x"},` + hi + `]`, `[{"id":"a","role":"user","content":"changed"},` + hi + `]`},
			`[{"id":"a","role":"user","content":"x"},` + hi + `]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New(nil)
			for _, in := range tt.inputs {
				require.NoError(t, startRun(c, `{"messages":`+in+`}`))
			}
			assert.Equal(t, tt.want, messagesJSON(c), tt.reason)
			next, err := json.Marshal(c.NextInput(nil))
			require.NoError(t, err)
			require.NoError(t, startRun(c, string(next)))
			assert.Equal(t, tt.want, messagesJSON(c), "StartRun(NextInput()) adds nothing")
		})
	}
}

// TestRunStartedRejectedState checks that a RUN_STARTED whose input's
// state ValidateState refuses still starts its run, without that state.
func TestRunStartedRejectedState(t *testing.T) {
	c := New(&Options{ValidateState: func(s Value) error {
		if s.node().Get("bad") != nil {
			return errors.New("bad")
		}
		return nil
	}})
	warnings := warningsOf(c)
	for _, ev := range []string{
		`{"type":"RUN_STARTED","threadId":"t","runId":"r1"}`,
		`{"type":"RUN_FINISHED","threadId":"t","runId":"r1"}`,
		`{"type":"RUN_STARTED","threadId":"t","runId":"r2","input":{"state":{"bad":1},"messages":[{"id":"u1","role":"user","content":"hi"}]}}`,
		`{"type":"TEXT_MESSAGE_START","messageId":"m1"}`,
		`{"type":"RUN_FINISHED","threadId":"t","runId":"r2"}`,
	} {
		require.NoError(t, c.Apply([]byte(ev)), "the run applies")
	}
	require.Len(t, warnings(), 1)
	assert.ErrorIs(t, warnings()[0], ErrStateRejected)
	assert.Equal(t, `{}`, c.State().String(), "the refused state is not committed")
	assert.True(t, c.Diverged())
	assert.Equal(t, `[{"id":"u1","role":"user","content":"hi"},{"id":"m1","role":"assistant","content":""}]`, messagesJSON(c))
}

// TestRunStartedProtocolVersion checks the producer's declared protocol
// version: a newer major version, or a value outside MAJOR.MINOR, is a
// warning wrapping ErrProtocolVersion, and the run starts all the same.
func TestRunStartedProtocolVersion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, version string // version: the member's JSON, "" for none
		warn          bool
		reason        string
	}{
		{"none", "", false, "a producer from before the protocol carried a version"},
		{"ours", `"1.0"`, false, "the version this package speaks"},
		{"newer minor", `"1.7"`, false, "a newer minor version adds what this package keeps verbatim"},
		{"older", `"0.9"`, false, "an older version is read as it is"},
		{"newer major", `"2.0"`, true, "a newer major version may mean other things"},
		{"much newer major", `"10.0"`, true, "compared as numbers, not as text"},
		{"zero-padded", `"01.0"`, false, "01 is the major version 1"},
		{"three parts", `"1.0.0"`, true, "outside the grammar: taken for a newer version, as in the reference"},
		{"no minor", `"1"`, true, "outside the grammar"},
		{"empty", `""`, true, "outside the grammar"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := New(nil)
			warnings := warningsOf(c)
			ev := `{"type":"RUN_STARTED","threadId":"t","runId":"r"}`
			if tt.version != "" {
				ev = `{"type":"RUN_STARTED","threadId":"t","runId":"r","protocolVersion":` + tt.version + `}`
			}
			require.NoError(t, c.Apply([]byte(ev)))
			assert.True(t, c.Running(), "the run starts")
			if !tt.warn {
				assert.Empty(t, warnings(), tt.reason)
				return
			}
			require.Len(t, warnings(), 1, tt.reason)
			assert.ErrorIs(t, warnings()[0], ErrProtocolVersion)
			assert.NotErrorIs(t, warnings()[0], ErrNoTarget)
			assert.Contains(t, warnings()[0].Error(), tt.version)
		})
	}
	c := New(nil)
	err := c.Apply([]byte(`{"type":"RUN_STARTED","threadId":"t","runId":"r","protocolVersion":1}`))
	assert.ErrorIs(t, err, ErrMalformedEvent, "a protocolVersion that is not a string is malformed, as the schema says")
}
