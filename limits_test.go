// Tests of every limit, at it and one past it, and of the patch work bound.

package aguistate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLimits checks every limit of Options exactly at the limit (accepted)
// and one past it (a fatal ErrLimit that changes nothing).
func TestLimits(t *testing.T) {
	t.Parallel()
	nested := func(depth int) string { return strings.Repeat("[", depth) + strings.Repeat("]", depth) }
	ops := func(n int) string {
		s := make([]string, n)
		for i := range s {
			s[i] = `{"op":"test","path":"","value":{}}`
		}
		return `{"type":"STATE_DELTA","delta":[` + strings.Join(s, ",") + `]}`
	}
	messages := func(n int) string {
		s := make([]string, n)
		for i := range s {
			s[i] = fmt.Sprintf(`{"id":"m%d","role":"user"}`, i)
		}
		return `{"type":"MESSAGES_SNAPSHOT","messages":[` + strings.Join(s, ",") + `]}`
	}
	// A state {"a":"xxx…"} is len(x)+8 bytes of JSON text.
	stateOfSize := func(size int) string {
		return `{"type":"STATE_SNAPSHOT","snapshot":{"a":"` + strings.Repeat("x", size-8) + `"}}`
	}
	// custom returns a CUSTOM event of exactly size bytes.
	custom := func(size int) string {
		const head, tail = `{"type":"CUSTOM","name":"n","value":"`, `"}`
		return head + strings.Repeat("x", size-len(head)-len(tail)) + tail
	}
	// A run's scopes are held as a checkpoint writes them.
	scopes := len(`{"name":"s"}`) + len(`{"messageId":"r","subagentRunId":"a"}`)
	subagent := `{"type":"SUBAGENT_STARTED","subagentRunId":"a","name":"n","description":"` + strings.Repeat("x", 100) + `"}`
	// {"id":"m","role":"assistant","content":""} is the message before any text.
	base := len(`{"id":"m","role":"assistant","content":""}`)
	tests := []struct {
		name     string
		opts     Options
		setup    []string
		at, past string
		reason   string
	}{
		{name: "event size", opts: Options{MaxEventSize: 100},
			at: custom(100), past: custom(101),
			reason: "MaxEventSize bounds the JSON text of one event"},
		{name: "state depth through a snapshot", opts: Options{MaxDepth: 10},
			at: `{"type":"STATE_SNAPSHOT","snapshot":` + nested(10) + `}`, past: `{"type":"STATE_SNAPSHOT","snapshot":` + nested(11) + `}`,
			reason: "MaxDepth bounds the state, not the event around it"},
		{name: "state depth through a run input", opts: Options{MaxDepth: 10},
			at:     `{"type":"RUN_STARTED","threadId":"t","runId":"r","input":{"state":` + nested(10) + `}}`,
			past:   `{"type":"RUN_STARTED","threadId":"t","runId":"r","input":{"state":` + nested(11) + `}}`,
			reason: "the input's state is bounded as a snapshot's"},
		{name: "message depth", opts: Options{MaxDepth: 10},
			at:     `{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"m","role":"user","content":` + nested(9) + `}]}`,
			past:   `{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"m","role":"user","content":` + nested(10) + `}]}`,
			reason: "MaxDepth bounds each message, which is one level around its content"},
		{name: "run input message depth", opts: Options{MaxDepth: 10},
			at:     `{"type":"RUN_STARTED","threadId":"t","runId":"r","input":{"messages":[{"id":"m","role":"user","content":` + nested(9) + `}]}}`,
			past:   `{"type":"RUN_STARTED","threadId":"t","runId":"r","input":{"messages":[{"id":"n","role":"user","content":` + nested(10) + `}]}}`,
			reason: "the deepest envelope: three levels around the message"},
		{name: "event depth", opts: Options{MaxDepth: 10},
			at: `{"type":"CUSTOM","name":"n","value":` + nested(12) + `}`, past: `{"type":"CUSTOM","name":"n","value":` + nested(13) + `}`,
			reason: "an event may nest three levels more than the values it carries"},
		{name: "state depth through a patch", opts: Options{MaxDepth: 10},
			setup:  []string{`{"type":"STATE_SNAPSHOT","snapshot":{"a":` + nested(8) + `}}`},
			at:     `{"type":"STATE_DELTA","delta":[{"op":"copy","from":"/a","path":"/a/-"}]}`,
			past:   `{"type":"STATE_DELTA","delta":[{"op":"copy","from":"/a","path":"/a/-"}]}`,
			reason: "copying an array into itself nests the state one level deeper each time"},
		{name: "patch operations", opts: Options{MaxPatchOps: 5},
			at: ops(5), past: ops(6), reason: "MaxPatchOps bounds one patch"},
		{name: "state size", opts: Options{MaxStateSize: 64},
			at: stateOfSize(64), past: stateOfSize(65), reason: "MaxStateSize bounds the state's JSON text"},
		{name: "state size through copies", opts: Options{MaxStateSize: 64},
			setup:  []string{`{"type":"STATE_SNAPSHOT","snapshot":{"a":"0123456789"}}`},
			at:     `{"type":"STATE_DELTA","delta":[{"op":"copy","from":"/a","path":"/b"},{"op":"copy","from":"/a","path":"/c"}]}`,
			past:   `{"type":"STATE_DELTA","delta":[{"op":"copy","from":"","path":"/x"},{"op":"copy","from":"","path":"/y"}]}`,
			reason: "checked after every operation, so doubling copies stop at once"},
		{name: "messages", opts: Options{MaxMessages: 3},
			at: messages(3), past: messages(4), reason: "MaxMessages bounds the list"},
		{name: "message size", opts: Options{MaxMessageSize: 60},
			setup:  []string{`{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}`},
			at:     `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"` + strings.Repeat("x", 60-base) + `"}`,
			past:   `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"y"}`,
			reason: "MaxMessageSize bounds a message's text as it streams"},
		{name: "run input message without an id", opts: Options{MaxMessageSize: 40},
			at:     `{"type":"RUN_STARTED","threadId":"t","runId":"r","input":{"messages":[{"role":"user","content":"` + strings.Repeat("x", 40-28) + `"}]}}`,
			past:   `{"type":"RUN_STARTED","threadId":"t","runId":"r","input":{"messages":[{"role":"user","content":"` + strings.Repeat("x", 41-28) + `"}]}}`,
			reason: "messages without an id are measured too"},
		{name: "total message size", opts: Options{MaxTotalMessageSize: 2*base + 16},
			setup: []string{`{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}`,
				`{"type":"TEXT_MESSAGE_START","messageId":"n","role":"assistant"}`},
			at:     `{"type":"TEXT_MESSAGE_CONTENT","messageId":"n","delta":"` + strings.Repeat("x", 16) + `"}`,
			past:   `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"y"}`,
			reason: "MaxTotalMessageSize bounds all the messages held together"},
		{name: "chunk lanes", opts: Options{MaxChunkLanes: 2},
			setup:  []string{`{"type":"TEXT_MESSAGE_CHUNK","messageId":"a","subagentRunId":"a","delta":"x"}`},
			at:     `{"type":"TEXT_MESSAGE_CHUNK","messageId":"b","subagentRunId":"b","delta":"x"}`,
			past:   `{"type":"TOOL_CALL_CHUNK","toolCallId":"c","toolCallName":"f","subagentRunId":"c","delta":"x"}`,
			reason: "MaxChunkLanes bounds the lanes with an open chunk stream"},
		{name: "scope size: steps and spans", opts: Options{MaxScopeSize: scopes},
			setup:  []string{`{"type":"STEP_STARTED","stepName":"s"}`, `{"type":"STEP_STARTED","stepName":"s"}`},
			at:     `{"type":"REASONING_START","messageId":"r","subagentRunId":"a"}`,
			past:   `{"type":"STEP_STARTED","stepName":""}`,
			reason: "MaxScopeSize bounds the open steps and spans, each at least 11 bytes, so their number too"},
		{name: "scope size: a subagent", opts: Options{MaxScopeSize: len(`{"event":,"done":false}`) + len(subagent)},
			setup:  []string{`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`},
			at:     subagent,
			past:   `{"type":"SUBAGENT_STARTED","subagentRunId":"b"}`,
			reason: "a subagent is held with its SUBAGENT_STARTED as it came, until the run ends"},
		{name: "scope size: one large subagent", opts: Options{MaxScopeSize: len(`{"event":,"done":false}`) + len(subagent)},
			at:     `{"type":"RUN_STARTED","threadId":"t","runId":"r"}`,
			past:   strings.Replace(subagent, `"n"`, `"no"`, 1),
			reason: "one SUBAGENT_STARTED a byte larger than the limit is refused"},
		{name: "activity content through a patch", opts: Options{MaxMessageSize: 100},
			setup:  []string{`{"type":"ACTIVITY_SNAPSHOT","messageId":"x","activityType":"T","content":{"a":"0123456789"}}`},
			at:     `{"type":"ACTIVITY_DELTA","messageId":"x","activityType":"T","patch":[{"op":"copy","from":"/a","path":"/b"}]}`,
			past:   `{"type":"ACTIVITY_DELTA","messageId":"x","activityType":"T","patch":[{"op":"copy","from":"","path":"/c"}]}`,
			reason: "an activity's content cannot grow past MaxMessageSize either"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := New(&tt.opts)
			for _, ev := range tt.setup {
				require.NoError(t, c.Apply([]byte(ev)), "setup")
			}
			require.NoError(t, c.Apply([]byte(tt.at)), "at the limit: %s", tt.reason)
			before := snapshot(c)
			err := c.Apply([]byte(tt.past))
			require.ErrorIs(t, err, ErrLimit, "one past the limit: %s", tt.reason)
			var ee *EventError
			require.ErrorAs(t, err, &ee)
			assert.Equal(t, len(tt.setup)+2, ee.Position)
			assert.Equal(t, before, snapshot(c), "the Consumer is unchanged")
		})
	}
}

// TestInterruptDepth checks that MaxDepth bounds each interrupt, as it
// does the state and each message.
func TestInterruptDepth(t *testing.T) {
	t.Parallel()
	finish := func(depth int) string {
		return `{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"interrupt","interrupts":[{"id":"i","x":` +
			strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}]}}`
	}
	c := New(&Options{MaxDepth: 10})
	require.NoError(t, c.Apply([]byte(finish(9))), "an interrupt 10 deep")
	c = New(&Options{MaxDepth: 10})
	assert.ErrorIs(t, c.Apply([]byte(finish(10))), ErrLimit, "an interrupt 11 deep")
	assert.Nil(t, c.Interrupts())
}

// TestDeepNestingDoesNotOverflow feeds 100,000 nested arrays as an event and
// as a run input.
func TestDeepNestingDoesNotOverflow(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000)
	c := New(nil)
	assert.ErrorIs(t, c.Apply([]byte(`{"type":"STATE_SNAPSHOT","snapshot":`+deep+`}`)), ErrLimit)
	assert.ErrorIs(t, startRun(c, `{"state":`+deep+`}`), ErrLimit)
	assert.Equal(t, `{}`, c.State().String())
}

// TestPatchWorkIsBounded checks that a patch of legal size cannot make the
// engine do quadratic work. A copy seals what the patch has built, so an
// edit after it copies its whole path again: alternating copies with edits
// at the bottom of a deep state runs out of the work budget (ErrLimit),
// while the same edits without the copies, which change in place what the
// patch owns, apply.
func TestPatchWorkIsBounded(t *testing.T) {
	t.Parallel()
	const depth, width, edits = 200, 60, 100
	level := make([]string, width)
	for i := range level {
		level[i] = fmt.Sprintf(`"m%d":%d`, i, i)
	}
	members := strings.Join(level, ",")
	snapshot := `{"type":"STATE_SNAPSHOT","snapshot":` + strings.Repeat(`{`+members+`,"k":`, depth) + `0` + strings.Repeat(`}`, depth) + `}`
	path := strings.Repeat("/k", depth)
	patch := func(copies bool) string {
		var ops []string
		for i := range edits {
			if copies {
				ops = append(ops, `{"op":"copy","from":"/m0","path":"/m1"}`)
			}
			ops = append(ops, fmt.Sprintf(`{"op":"replace","path":"%s","value":%d}`, path, i))
		}
		return `{"type":"STATE_DELTA","delta":[` + strings.Join(ops, ",") + `]}`
	}
	opts := &Options{MaxStateSize: 10 << 20} // each edit after a copy copies 200 objects of 60 members: 100 of them pass 10 MB
	c := New(opts)
	require.NoError(t, c.Apply([]byte(snapshot)))
	before := c.State().String()
	err := c.Apply([]byte(patch(true)))
	require.ErrorIs(t, err, ErrLimit, "quadratic work is refused")
	assert.Contains(t, err.Error(), "more than 10485760 bytes of work")
	assert.Equal(t, before, c.State().String(), "nothing was applied")
	require.NoError(t, c.Apply([]byte(patch(false))), "edits that change in place what the patch owns are cheap")
}

// TestPatchWorkCountsEverything checks the work that is not an edit's
// copies: comparing long numbers in test operations, and copying the path
// of a wide array after each copy operation.
func TestPatchWorkCountsEverything(t *testing.T) {
	t.Parallel()
	opts := &Options{MaxStateSize: 1 << 20}
	tests := []struct {
		name, snapshot, op string
	}{
		{"long numbers", `{"n":1` + strings.Repeat("0", 100_000) + `}`, `{"op":"test","path":"/n","value":1e100000}`},
		{"copies of a wide array", `{"a":[` + strings.Repeat("0,", 100_000) + `0]}`, `{"op":"copy","from":"/a/0","path":"/b"},{"op":"add","path":"/a/0","value":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := New(opts)
			require.NoError(t, c.Apply([]byte(`{"type":"STATE_SNAPSHOT","snapshot":`+tt.snapshot+`}`)))
			ops := strings.TrimSuffix(strings.Repeat(tt.op+",", 1000), ",")
			err := c.Apply([]byte(`{"type":"STATE_DELTA","delta":[` + ops + `]}`))
			assert.ErrorIs(t, err, ErrLimit)
		})
	}
}
