// Tests of the JSON Lines framing.

package framing

import (
	"io"
	"strings"
	"testing"
)

func TestReadJSONLines(t *testing.T) {
	t.Parallel()
	runReadCases(t, []readCase{
		{name: "lf", reason: "one payload per LF-terminated line",
			in: "{\"a\":1}\n{\"b\":2}\n", format: JSONLines, want: []string{`{"a":1}`, `{"b":2}`}},
		{name: "crlf", reason: "the CR of CRLF is trimmed",
			in: "{\"a\":1}\r\n{\"b\":2}\r\n", format: JSONLines, want: []string{`{"a":1}`, `{"b":2}`}},
		{name: "no-final-newline", reason: "a last line without LF counts",
			in: "{\"a\":1}\n{\"b\":2}", format: JSONLines, want: []string{`{"a":1}`, `{"b":2}`}},
		{name: "blank-lines", reason: "blank and whitespace-only lines are skipped",
			in: "\n\n{}\n \t\r\n\n[]\n\n", format: JSONLines, want: []string{"{}", "[]"}},
		{name: "trim", reason: "leading and trailing ASCII whitespace is trimmed, inner kept",
			in: " \t{\"a\": 1} \f\r\n", format: JSONLines, want: []string{`{"a": 1}`}},
		{name: "not-validated", reason: "lines are split, not parsed",
			in: "{not json\nhello\n", format: JSONLines, want: []string{"{not json", "hello"}},
		{name: "cut-short", reason: "a last line without LF that is not JSON was cut short",
			in: "{\"a\":1}\n{\"b\":", format: JSONLines, want: []string{`{"a":1}`}, wantErr: io.ErrUnexpectedEOF, wantEvent: 2},
		{name: "cut-short-crlf", reason: "trailing white space does not end a line",
			in: "{\"a\":1}\r\n{\"b\" \r", format: JSONLines, want: []string{`{"a":1}`}, wantErr: io.ErrUnexpectedEOF, wantEvent: 2},
		{name: "bom", reason: "a leading BOM is dropped",
			in: "\xEF\xBB\xBF{}\n", format: JSONLines, want: []string{"{}"}},
		{name: "empty", reason: "an empty stream yields nothing",
			in: "", format: JSONLines},
		{name: "at-limit", reason: "a line of exactly maxSize bytes is fine",
			in: "12345\n123\n", format: JSONLines, max: 5, want: []string{"12345", "123"}},
		{name: "at-limit-trailing-ws", reason: "whitespace past maxSize is trimmed, not counted",
			in: "  12345   \t\r\n1\n", format: JSONLines, max: 5, want: []string{"12345", "1"}},
		{name: "at-limit-no-newline", reason: "the limit holds for a last line without LF",
			in: "1\n12345  ", format: JSONLines, max: 5, want: []string{"1", "12345"}},
		{name: "past-limit", reason: "one byte past maxSize fails",
			in: "1\n123456\n", format: JSONLines, max: 5, want: []string{"1"}, wantErr: ErrTooLarge, wantEvent: 2},
		{name: "past-limit-after-space", reason: "inner whitespace counts",
			in: "12345 6\n", format: JSONLines, max: 5, wantErr: ErrTooLarge, wantEvent: 1},
		{name: "past-limit-no-newline", reason: "a long last line without LF fails",
			in: strings.Repeat("x", 100), format: JSONLines, max: 10, wantErr: ErrTooLarge, wantEvent: 1},
	})
}
