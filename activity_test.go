// Tests of the activity events.

package aguistate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestActivityReference runs the reference-client cases for activity
// messages.
func TestActivityReference(t *testing.T) {
	runEventCases(t, []eventCase{
		{
			name:     "27-activity-snapshot",
			reason:   "reference case 27: same messages; its last event (replace false over the user message u1) changes nothing there silently, and we warn ErrNoTarget (write rule: activity events write only activity messages)",
			messages: `[{"id":"u1","role":"user","content":"hi"},{"id":"act1","role":"activity","activityType":"plan","content":{"s":1},"metadata":{"keep":1},"subagentRunId":"old"},{"id":"act2","role":"activity","activityType":"plan","content":{"s":2}}]`,
			events: []string{
				`{"type":"ACTIVITY_SNAPSHOT","messageId":"act1","activityType":"plan2","content":{"s":10}}`,
				`{"type":"ACTIVITY_SNAPSHOT","messageId":"act2","activityType":"plan","content":{"s":20},"replace":false}`,
				`{"type":"ACTIVITY_SNAPSHOT","messageId":"act3","activityType":"new","content":{"n":1},"replace":false,"subagentRunId":"sub1","timestamp":9}`,
				`{"type":"ACTIVITY_SNAPSHOT","messageId":"u1","activityType":"hijack","content":{"h":1},"replace":false}`,
			},
			want:     `[{"id":"u1","role":"user","content":"hi"},{"id":"act1","role":"activity","activityType":"plan2","content":{"s":10},"metadata":{"keep":1}},{"id":"act2","role":"activity","activityType":"plan","content":{"s":2}},{"id":"act3","role":"activity","activityType":"new","content":{"n":1},"subagentRunId":"sub1"}]`,
			warn:     []error{ErrNoTarget},
			warnText: []string{`message "u1" has the role "user", and activity events write only into "activity" messages`},
		},
		{
			name:     "28-activity-snapshot-over-non-activity",
			reason:   "reference case 28 replaces the user message with an activity message; the write rule keeps it (issue 8, kind 1)",
			messages: `[{"id":"u1","role":"user","content":"hi"}]`,
			events: []string{
				`{"type":"ACTIVITY_SNAPSHOT","messageId":"u1","activityType":"hijack","content":{"h":1}}`,
			},
			want:     `[{"id":"u1","role":"user","content":"hi"}]`,
			warn:     []error{ErrNoTarget},
			warnText: []string{`message "u1" has the role "user", and activity events write only into "activity" messages`},
		},
		{
			name:     "29-activity-delta",
			reason:   "reference case 29: same messages; the reference ignores an ACTIVITY_DELTA for an unknown id silently, we warn ErrNoTarget (decision 3)",
			messages: `[{"id":"act1","role":"activity","activityType":"plan","content":{"steps":["a"]}},{"id":"u1","role":"user","content":"hi"}]`,
			events: []string{
				`{"type":"ACTIVITY_DELTA","messageId":"act1","activityType":"plan-v2","patch":[{"op":"add","path":"/steps/-","value":"b"}]}`,
				`{"type":"ACTIVITY_DELTA","messageId":"act1","activityType":"plan-v3","patch":[{"op":"replace","path":"/nope/x","value":1}]}`,
				`{"type":"ACTIVITY_DELTA","messageId":"missing","activityType":"p","patch":[]}`,
				`{"type":"ACTIVITY_DELTA","messageId":"u1","activityType":"p","patch":[]}`,
			},
			want: `[{"id":"act1","role":"activity","activityType":"plan-v2","content":{"steps":["a","b"]}},{"id":"u1","role":"user","content":"hi"}]`,
			warn: []error{ErrPatchFailed, ErrNoTarget, ErrNoTarget},
		},
		{
			name:     "58-activity-delta-multi-op-atomic",
			reason:   "reference case 58: same output",
			messages: `[{"id":"act1","role":"activity","activityType":"plan","content":{"a":1}}]`,
			events: []string{
				`{"type":"ACTIVITY_DELTA","messageId":"act1","activityType":"plan","patch":[{"op":"replace","path":"/a","value":2},{"op":"remove","path":"/zz"}]}`,
			},
			want: `[{"id":"act1","role":"activity","activityType":"plan","content":{"a":1}}]`,
			warn: []error{ErrPatchFailed},
		},
		{
			name:     "60-activity-snapshot-metadata-subagent",
			reason:   "reference case 60: same messages; the last event names the user message u1, which the reference leaves silently and we warn about (write rule)",
			messages: `[{"id":"a","role":"activity","activityType":"p","content":{"v":1},"metadata":{"x":1}},{"id":"b","role":"activity","activityType":"p","content":{"v":1}},{"id":"u1","role":"user","content":"hi"}]`,
			events: []string{
				`{"type":"ACTIVITY_SNAPSHOT","messageId":"a","activityType":"p","content":{"v":2},"replace":false,"metadata":{"y":2}}`,
				`{"type":"ACTIVITY_SNAPSHOT","messageId":"b","activityType":"q","content":{"v":3},"subagentRunId":"s1","metadata":{"z":3}}`,
				`{"type":"ACTIVITY_SNAPSHOT","messageId":"u1","activityType":"q","content":{},"replace":false,"metadata":{"w":1}}`,
			},
			want: `[{"id":"a","role":"activity","activityType":"p","content":{"v":1},"metadata":{"x":1,"y":2}},{"id":"b","role":"activity","activityType":"q","content":{"v":3},"subagentRunId":"s1","metadata":{"z":3}},{"id":"u1","role":"user","content":"hi"}]`,
			warn: []error{ErrNoTarget},
		},
	})
}

// TestActivityEvents checks every field of the activity events.
func TestActivityEvents(t *testing.T) {
	runEventCases(t, []eventCase{
		{
			name:   "snapshot with every field",
			reason: "key order id, role, activityType, content, subagentRunId, metadata; numbers kept exactly",
			events: []string{`{"type":"ACTIVITY_SNAPSHOT","messageId":"a","activityType":"p","content":{"n":1e2,"big":12345678901234567890},"subagentRunId":"s","metadata":{"m":1},"replace":null,"timestamp":1}`},
			want:   `[{"id":"a","role":"activity","activityType":"p","content":{"n":1e2,"big":12345678901234567890},"subagentRunId":"s","metadata":{"m":1}}]`,
		},
		{
			name:     "delta on an activity without content",
			reason:   "the patch applies to {}; content is appended and activityType replaced in place; metadata merged",
			messages: `[{"id":"a","role":"activity","activityType":"p"}]`,
			events:   []string{`{"type":"ACTIVITY_DELTA","messageId":"a","activityType":"q","patch":[{"op":"add","path":"/x","value":1.10}],"metadata":{"k":1}}`},
			want:     `[{"id":"a","role":"activity","activityType":"q","metadata":{"k":1},"content":{"x":1.10}}]`,
		},
		{
			name:     "failed delta keeps metadata out",
			reason:   "a failing patch leaves the message unchanged, metadata included (the reference merges the metadata first and keeps it)",
			messages: `[{"id":"a","role":"activity","activityType":"p","content":{}}]`,
			events:   []string{`{"type":"ACTIVITY_DELTA","messageId":"a","activityType":"q","patch":[{"op":"remove","path":"/x"}],"metadata":{"k":1}}`},
			want:     `[{"id":"a","role":"activity","activityType":"p","content":{}}]`,
			warn:     []error{ErrPatchFailed},
		},
	})
}

// TestActivityMalformed checks that an activity event with a required field
// missing or of the wrong type, or a malformed patch, is fatal and changes
// nothing.
func TestActivityMalformed(t *testing.T) {
	held := `[{"id":"a","role":"activity","activityType":"p","content":{"x":1}}]`
	var cases []eventCase
	for ev, err := range map[string]error{
		`{"type":"ACTIVITY_SNAPSHOT","activityType":"p","content":{}}`:                             ErrMalformedEvent,
		`{"type":"ACTIVITY_SNAPSHOT","messageId":"a","content":{}}`:                                ErrMalformedEvent,
		`{"type":"ACTIVITY_SNAPSHOT","messageId":"a","activityType":"p"}`:                          ErrMalformedEvent,
		`{"type":"ACTIVITY_SNAPSHOT","messageId":"a","activityType":"p","content":null}`:           ErrMalformedEvent,
		`{"type":"ACTIVITY_SNAPSHOT","messageId":"a","activityType":"p","content":[1]}`:            ErrMalformedEvent,
		`{"type":"ACTIVITY_SNAPSHOT","messageId":"a","activityType":"p","content":{},"replace":1}`: ErrMalformedEvent,
		`{"type":"ACTIVITY_DELTA","messageId":"a","activityType":"p"}`:                             errMalformedPatch,
		`{"type":"ACTIVITY_DELTA","messageId":"a","activityType":"p","patch":{}}`:                  errMalformedPatch,
		`{"type":"ACTIVITY_DELTA","messageId":"a","activityType":"p","patch":[{"op":"nope"}]}`:     errMalformedPatch,
		`{"type":"ACTIVITY_DELTA","messageId":"zz","activityType":"p","patch":[{"op":"add"}]}`:     errMalformedPatch,
		`{"type":"ACTIVITY_DELTA","activityType":"p","patch":[]}`:                                  ErrMalformedEvent,
		`{"type":"ACTIVITY_DELTA","messageId":"a","patch":[]}`:                                     ErrMalformedEvent,
	} {
		cases = append(cases, eventCase{name: ev, reason: "a required field is missing or of the wrong type",
			messages: held, events: []string{ev}, want: held, fatal: err})
	}
	runEventCases(t, cases)
}

// TestActivityWarnings checks that a failing ACTIVITY_DELTA reports the
// *PatchError in Change.Warning and, unlike a failing STATE_DELTA, does not
// mark the state diverged.
func TestActivityWarnings(t *testing.T) {
	c := New(nil)
	var changes []Change
	c.Subscribe(func(ch Change) { changes = append(changes, ch) })
	for _, ev := range []string{
		`{"type":"ACTIVITY_SNAPSHOT","messageId":"a","activityType":"p","content":{}}`,
		`{"type":"ACTIVITY_DELTA","messageId":"a","activityType":"p","patch":[{"op":"replace","path":"/x","value":1}]}`,
		`{"type":"ACTIVITY_DELTA","messageId":"zz","activityType":"p","patch":[]}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"a","delta":"x"}`,
	} {
		require.NoError(t, c.Apply([]byte(ev)))
	}
	require.Len(t, changes, 4)
	assert.Nil(t, changes[0].Warning)
	assert.Equal(t, []string{"a"}, changes[0].Added)
	var pe *PatchError
	require.ErrorAs(t, changes[1].Warning, &pe)
	assert.ErrorIs(t, changes[1].Warning, ErrPatchFailed)
	assert.Equal(t, PatchError{Index: 0, Op: "replace", Path: "/x", Err: pe.Err}, *pe)
	assert.ErrorIs(t, changes[2].Warning, ErrNoTarget)
	assert.ErrorIs(t, changes[3].Warning, ErrNoTarget)
	for i, ch := range changes {
		assert.False(t, ch.Diverged, "change %d", i)
		assert.False(t, ch.MessagesChanged() && ch.Warning != nil, "a skipped event changes no message (change %d)", i)
	}
	assert.False(t, c.Diverged())
}

// TestActivityContentIsAnObject checks the one invariant of an activity's
// content on both paths (issue 8, kind 3): an ACTIVITY_SNAPSHOT whose
// content is not an object is malformed, and an ACTIVITY_DELTA whose result
// is not an object fails to apply (warned, skipped).
func TestActivityContentIsAnObject(t *testing.T) {
	const held = `[{"id":"a","role":"activity","activityType":"p","content":{"x":1}}]`
	var cases []eventCase
	for _, content := range []string{`[1]`, `null`, `"text"`, `1`, `true`} {
		cases = append(cases,
			eventCase{name: "snapshot with content " + content, reason: "an activity's content is an object: the event is malformed",
				messages: held, events: []string{`{"type":"ACTIVITY_SNAPSHOT","messageId":"a","activityType":"p","content":` + content + `}`},
				want: held, fatal: ErrMalformedEvent, fatalText: `"content" is missing or not an object`},
			eventCase{name: "delta to content " + content, reason: "a patch that makes content other than an object fails to apply",
				messages: held, events: []string{`{"type":"ACTIVITY_DELTA","messageId":"a","activityType":"q","patch":[{"op":"replace","path":"","value":` + content + `}]}`},
				want: held, warn: []error{ErrPatchFailed}, warnText: []string{"the activity content would be"}})
	}
	cases = append(cases,
		eventCase{name: "delta to another object", reason: "the whole content may be replaced by an object",
			messages: held, events: []string{`{"type":"ACTIVITY_DELTA","messageId":"a","activityType":"p","patch":[{"op":"replace","path":"","value":{"y":2}}]}`},
			want: `[{"id":"a","role":"activity","activityType":"p","content":{"y":2}}]`},
		eventCase{name: "delta that mends a snapshot's array", reason: "a MESSAGES_SNAPSHOT keeps its messages verbatim; a delta may make their content an object",
			messages: `[{"id":"a","role":"activity","activityType":"p","content":[1]}]`,
			events: []string{`{"type":"ACTIVITY_DELTA","messageId":"a","activityType":"p","patch":[{"op":"add","path":"/-","value":2}]}`,
				`{"type":"ACTIVITY_DELTA","messageId":"a","activityType":"p","patch":[{"op":"replace","path":"","value":{}}]}`},
			want: `[{"id":"a","role":"activity","activityType":"p","content":{}}]`, warn: []error{ErrPatchFailed},
			warnText: []string{"the activity content would be an array, not an object"}},
	)
	runEventCases(t, cases)
}
