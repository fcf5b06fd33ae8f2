// Tests of the state events: STATE_SNAPSHOT and STATE_DELTA.

package aguistate

import "testing"

func TestStateEvents(t *testing.T) {
	runEventCases(t, []eventCase{
		{name: "snapshot of any value", reason: "spec, Data Types: the state is any JSON value",
			state: `{"a":1}`, events: []string{`{"type":"STATE_SNAPSHOT","snapshot":[1,"x",null]}`}, want: `[]`, wantState: `[1,"x",null]`},
		{name: "snapshot null", reason: "null is a state too",
			events: []string{`{"type":"STATE_SNAPSHOT","snapshot":null}`}, want: `[]`, wantState: `null`},
		{name: "snapshot replaces, no merge", reason: "spec, STATE_SNAPSHOT: replace wholesale",
			state: `{"a":1,"b":2}`, events: []string{`{"type":"STATE_SNAPSHOT","snapshot":{"c":3}}`}, want: `[]`, wantState: `{"c":3}`},
		{name: "delta all or nothing", reason: "spec, STATE_DELTA: atomic; the failed second operation undoes the first",
			state: `{"a":1}`, events: []string{`{"type":"STATE_DELTA","delta":[{"op":"replace","path":"/a","value":2},{"op":"remove","path":"/x"}]}`},
			want: `[]`, warn: []error{ErrPatchFailed}},
		{name: "delta applies", reason: "RFC 6902 in order",
			state: `{"a":[1]}`, events: []string{`{"type":"STATE_DELTA","delta":[{"op":"add","path":"/a/-","value":2},{"op":"copy","from":"/a","path":"/b"}]}`},
			want: `[]`, wantState: `{"a":[1,2],"b":[1,2]}`},
		{name: "snapshot missing", reason: "the snapshot member is required",
			state: `{"a":1}`, events: []string{`{"type":"STATE_SNAPSHOT"}`}, want: `[]`, fatal: ErrMalformedEvent},
		{name: "delta missing", reason: "a missing patch is a malformed patch (spec, Error Handling)",
			state: `{"a":1}`, events: []string{`{"type":"STATE_DELTA"}`}, want: `[]`, fatal: errMalformedPatch},
		{name: "delta not a patch", reason: "an operation without a value is malformed, and nothing applies",
			state: `{"a":1}`, events: []string{`{"type":"STATE_DELTA","delta":[{"op":"remove","path":"/a"},{"op":"add","path":"/b"}]}`}, want: `[]`, fatal: errMalformedPatch},
	})
}
