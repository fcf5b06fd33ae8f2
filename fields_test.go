// Tests of the member reader that event handlers use.

package aguistate

import (
	"testing"

	"github.com/aguistate/aguistate/internal/jsonv"
	"github.com/stretchr/testify/assert"
)

func TestFields(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		read func(f *fields)
		want string // the error's text, or "" for none
	}{
		{"required string", func(f *fields) { f.str("s") }, ""},
		{"missing", func(f *fields) { f.str("nope") }, `malformed event: "nope" is missing or not a string`},
		{"wrong kind", func(f *fields) { f.opt("s", jsonv.Object) }, `malformed event: "s" is a string, not an object`},
		{"null is absent", func(f *fields) { f.opt("n", jsonv.Object) }, ""},
		{"empty id", func(f *fields) { f.id("e") }, `malformed event: "e" is empty`},
		{"boolean", func(f *fields) { f.optBool("b", false) }, ""},
		{"not a boolean", func(f *fields) { f.optBool("a", false) }, `malformed event: "a" is an array, not a boolean`},
		{"one of kinds", func(f *fields) { f.of("s", jsonv.True, jsonv.False) }, `malformed event: "s" is missing or not a boolean`},
		{"first failure kept", func(f *fields) { f.str("x"); f.str("y") }, `malformed event: "x" is missing or not a string`},
	}
	ev := mustParse(t, `{"s":"x","n":null,"e":"","b":true,"a":[]}`)
	for _, tt := range tests {
		f := eventFields(ev)
		tt.read(f)
		if tt.want == "" {
			assert.NoError(t, f.err, tt.name)
		} else {
			assert.EqualError(t, f.err, tt.want, tt.name)
			assert.ErrorIs(t, f.err, ErrMalformedEvent, tt.name)
		}
	}
}
