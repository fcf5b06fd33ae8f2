// Tests of JSON Pointers: parsing, escaping, evaluation.

package jsonv

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParsePointer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in     string
		want   []string
		err    bool
		reason string
	}{
		{"", nil, false, "the whole document"},
		{"/", []string{""}, false, `the member named ""`},
		{"/a/b", []string{"a", "b"}, false, "two tokens"},
		{"/a~1b/m~0n", []string{"a/b", "m~n"}, false, "RFC 6901 section 4 unescaping"},
		{"/~01", []string{"~1"}, false, "~0 first, so ~01 is ~1"},
		{"//", []string{"", ""}, false, "empty tokens"},
		{"a", nil, true, "must start with /"},
		{"/a~", nil, true, "~ at the end"},
		{"/a~2", nil, true, "~ followed by 2"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParsePointer(tt.in)
			assert.Equal(t, err, CheckPointer(tt.in), "CheckPointer fails as ParsePointer does")
			appended, aerr := AppendTokens([]string{"kept"}, tt.in)
			assert.Equal(t, err, aerr, "AppendTokens fails as ParsePointer does")
			if tt.err {
				assert.ErrorIs(t, err, ErrPointer, tt.reason)
				assert.Equal(t, []string{"kept"}, appended, "a failed append leaves dst as it was")
				return
			}
			assert.NoError(t, err, tt.reason)
			assert.Equal(t, tt.want, got, tt.reason)
			assert.Equal(t, append([]string{"kept"}, tt.want...), appended, "AppendTokens appends after what dst holds")
			assert.Equal(t, tt.in, FormatPointer(got), "formats back")
		})
	}
}

// TestAppendTokensRoom checks that AppendTokens into a dst with room for
// the tokens, and CheckPointer, allocate nothing for a pointer without
// "~", and that a dst without enough room grows.
func TestAppendTokensRoom(t *testing.T) {
	var room [4]string
	allocs := testing.AllocsPerRun(100, func() { _, _ = AppendTokens(room[:0], "/a/b/c") })
	assert.Zero(t, allocs, "dst had room")
	allocs = testing.AllocsPerRun(100, func() { _ = CheckPointer("/a/b~1c/d") })
	assert.Zero(t, allocs, "a check splits nothing")
	small := [3]string{"x", "y"}
	got, err := AppendTokens(small[:2], "/a/b/c")
	assert.NoError(t, err)
	assert.Equal(t, []string{"x", "y", "a", "b", "c"}, got, "past the room, dst grows")
	assert.Equal(t, [3]string{"x", "y", ""}, small, "and the array it had is not written")
}

func TestArrayIndex(t *testing.T) {
	t.Parallel()
	tests := []struct {
		token string
		max   int
		want  int
		ok    bool
	}{
		{"0", 5, 0, true}, {"5", 5, 5, true}, {"6", 5, 0, false}, {"01", 5, 0, false},
		{"-1", 5, 0, false}, {"+1", 5, 0, false}, {"-", 5, 0, false}, {"", 5, 0, false},
		{"1e0", 5, 0, false}, {"99999999999999999999999", 5, 0, false},
	}
	for _, tt := range tests {
		got, ok := ArrayIndex(tt.token, tt.max)
		assert.Equal(t, tt.ok, ok, tt.token)
		assert.Equal(t, tt.want, got, tt.token)
	}
}

func TestEscapeToken(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"a": "a", "a/b": "a~1b", "m~n": "m~0n", "~/": "~0~1", "": ""} {
		assert.Equal(t, want, EscapeToken(in), in)
		got, err := ParsePointer("/" + want)
		assert.NoError(t, err)
		assert.Equal(t, []string{in}, got, "escaping and parsing are inverse")
	}
}

// TestResolve checks pointer evaluation (RFC 6901 section 4) and that the
// error names the first token that names nothing.
func TestResolve(t *testing.T) {
	t.Parallel()
	doc, err := Parse([]byte(`{"a":[10,{"b~/c":true}],"":{"":1},"n":null}`), 0)
	assert.NoError(t, err)
	tests := []struct {
		pointer, want, err, reason string
	}{
		{"", `{"a":[10,{"b~/c":true}],"":{"":1},"n":null}`, "", "the whole document"},
		{"/a/1/b~0~1c", `true`, "", "escaped tokens"},
		{"//", `1`, "", "empty member names"},
		{"/n", `null`, "", "a null member exists"},
		{"/x/y", "", `no member "x" (at "/x")`, "the first missing token is named"},
		{"/a/2", "", `index 2 is out of range for an array of 2 elements (at "/a/2")`, "past the end"},
		{"/a/-", "", `"-" names no element (at "/a/-")`, "no element after the last"},
		{"/a/01", "", `"01" is not an array index (at "/a/01")`, "no leading zero"},
		{"/a/0/x", "", `a number has no member or element "x" (at "/a/0/x")`, "a scalar has no children"},
	}
	for _, tt := range tests {
		tokens, err := ParsePointer(tt.pointer)
		assert.NoError(t, err)
		got, err := Resolve(doc, tokens)
		if tt.err != "" {
			assert.EqualError(t, err, tt.err, tt.reason)
			continue
		}
		if assert.NoError(t, err, tt.reason) {
			assert.Equal(t, tt.want, string(Marshal(got)), tt.reason)
		}
	}
}

func TestInsertIndex(t *testing.T) {
	t.Parallel()
	a, err := Parse([]byte(`[1,2]`), 0)
	assert.NoError(t, err)
	for token, want := range map[string]int{"0": 0, "2": 2, "-": 2} {
		i, err := InsertIndex(a, token)
		assert.NoError(t, err, token)
		assert.Equal(t, want, i, token)
	}
	for _, token := range []string{"3", "01", "-1", "x"} {
		_, err := InsertIndex(a, token)
		assert.Error(t, err, token)
	}
}
