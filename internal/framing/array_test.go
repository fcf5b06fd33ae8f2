// Tests of the JSON array framing.

package framing

import (
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadJSONArray(t *testing.T) {
	t.Parallel()
	runReadCases(t, []readCase{
		{name: "objects", reason: "each element is one payload",
			in: `[{"a":1},{"b":[1,2]}]`, format: JSONArray, want: []string{`{"a":1}`, `{"b":[1,2]}`}},
		{name: "whitespace", reason: "whitespace around elements and brackets is not part of payloads",
			in: "\n[ {\"a\" : 1} ,\n\t2 , \"s\" ,true,null,-1.5e3 ]\r\n", format: JSONArray,
			want: []string{`{"a" : 1}`, "2", `"s"`, "true", "null", "-1.5e3"}},
		{name: "empty", reason: "an empty array yields nothing",
			in: " [ \n ] ", format: JSONArray},
		{name: "nested", reason: "brackets inside strings and nested values do not end an element",
			in:     `[{"a":"]}\"[","b":[[{}]]},[[]],"\\","]",[{"x":"}"}]]`,
			format: JSONArray,
			want:   []string{`{"a":"]}\"[","b":[[{}]]}`, `[[]]`, `"\\"`, `"]"`, `[{"x":"}"}]`}},
		{name: "exact-bytes", reason: "numbers and duplicate keys are kept byte for byte",
			in: `[{"n":1.000000000000000000001,"a":1,"a":2,"u":"\u00e9"}]`, format: JSONArray,
			want: []string{`{"n":1.000000000000000000001,"a":1,"a":2,"u":"\u00e9"}`}},
		{name: "bom", reason: "a leading BOM is dropped",
			in: "\xEF\xBB\xBF[1]", format: JSONArray, want: []string{"1"}},
		{name: "not-array-object", reason: "an object is not an array",
			in: `{"a":1}`, format: JSONArray, wantErr: ErrSyntax, wantEvent: 1},
		{name: "not-array-word", reason: "text is not an array",
			in: `data: 1`, format: JSONArray, wantErr: ErrSyntax, wantEvent: 1},
		{name: "empty-stream", reason: "an explicit JSON array stream must hold an array",
			in: "  ", format: JSONArray, wantErr: ErrSyntax, wantEvent: 1},
		{name: "truncated-open", reason: "'[' alone was cut short",
			in: "[", format: JSONArray, wantErr: io.ErrUnexpectedEOF, wantEvent: 1},
		{name: "truncated-after-element", reason: "a stream that ends before ']' was cut short",
			in: `[1,{"a":2}`, format: JSONArray, want: []string{"1", `{"a":2}`}, wantErr: io.ErrUnexpectedEOF, wantEvent: 3},
		{name: "truncated-in-scalar", reason: "a scalar at the end may be cut short: [12 may have been [123]",
			in: "[1,2", format: JSONArray, want: []string{"1"}, wantErr: io.ErrUnexpectedEOF, wantEvent: 2},
		{name: "truncated-after-comma", reason: "a stream that ends after ',' was cut short",
			in: "[1, ", format: JSONArray, want: []string{"1"}, wantErr: io.ErrUnexpectedEOF, wantEvent: 2},
		{name: "truncated-in-element", reason: "an element cut short is not yielded",
			in: `[{"a":1},{"a":`, format: JSONArray, want: []string{`{"a":1}`}, wantErr: io.ErrUnexpectedEOF, wantEvent: 2},
		{name: "truncated-in-string", reason: "a string cut short is not yielded",
			in: `["ab`, format: JSONArray, wantErr: io.ErrUnexpectedEOF, wantEvent: 1},
		{name: "trailing-garbage", reason: "only whitespace may follow ']'",
			in: "[1] x", format: JSONArray, want: []string{"1"}, wantErr: ErrSyntax, wantEvent: 2},
		{name: "trailing-bracket", reason: "a second ']' is garbage",
			in: "[1]]", format: JSONArray, want: []string{"1"}, wantErr: ErrSyntax, wantEvent: 2},
		{name: "two-arrays", reason: "a second array is garbage",
			in: "[1]\n[2]", format: JSONArray, want: []string{"1"}, wantErr: ErrSyntax, wantEvent: 2},
		{name: "trailing-comma", reason: "',' before ']' is a syntax error",
			in: "[1,]", format: JSONArray, want: []string{"1"}, wantErr: ErrSyntax, wantEvent: 2},
		{name: "leading-comma", reason: "',' as the first element is a syntax error",
			in: "[,1]", format: JSONArray, wantErr: ErrSyntax, wantEvent: 1},
		{name: "missing-comma", reason: "elements need ',' between them",
			in: "[1 2]", format: JSONArray, want: []string{"1"}, wantErr: ErrSyntax, wantEvent: 2},
		{name: "invalid-element", reason: "an element that is not JSON is a syntax error",
			in: `[{"a" 1}]`, format: JSONArray, wantErr: ErrSyntax, wantEvent: 1},
		{name: "invalid-literal", reason: "a bad literal is a syntax error",
			in: `[1,tru]`, format: JSONArray, want: []string{"1"}, wantErr: ErrSyntax, wantEvent: 2},
		{name: "mismatched-brackets", reason: "'{' closed by ']' is a syntax error",
			in: `[{"a":1]]`, format: JSONArray, wantErr: ErrSyntax, wantEvent: 1},
		{name: "at-limit", reason: "an element of exactly maxSize bytes is fine",
			in: `[{"a":1},"x"]`, format: JSONArray, max: 7, want: []string{`{"a":1}`, `"x"`}},
		{name: "past-limit", reason: "an element one byte past maxSize fails",
			in: `[1,{"a":12}]`, format: JSONArray, max: 7, want: []string{"1"}, wantErr: ErrTooLarge, wantEvent: 2},
		{name: "past-limit-scalar", reason: "a long number fails too",
			in: "[" + strings.Repeat("1", 100) + "]", format: JSONArray, max: 10, wantErr: ErrTooLarge, wantEvent: 1},
		{name: "past-limit-string-unterminated", reason: "a string without end fails once past maxSize",
			in: `["` + strings.Repeat("a", 100), format: JSONArray, max: 10, wantErr: ErrTooLarge, wantEvent: 1},
	})
}

// TestReadJSONArraySyntaxDetail checks that an invalid element's error also
// carries encoding/json's detail.
func TestReadJSONArraySyntaxDetail(t *testing.T) {
	t.Parallel()
	got := collect(t, strings.NewReader(`[{"a" 1}]`), JSONArray, 0)
	require.Error(t, got.Err)
	var se *json.SyntaxError
	assert.ErrorAs(t, got.Err, &se, "the json.SyntaxError is in the chain")
	assert.ErrorIs(t, got.Err, ErrSyntax)
	assert.True(t, strings.HasPrefix(got.Err.Error(), "event 1: json array: invalid element: "), got.Err.Error())
}
