// Tests of Read: format detection, reader errors, stopping, limits, buffer reuse, the shared streams.

package framing

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadAuto(t *testing.T) {
	t.Parallel()
	runReadCases(t, []readCase{
		{name: "sse", reason: "a data line means SSE",
			in: "data: {\"a\":1}\n\n", want: []string{`{"a":1}`}},
		{name: "sse-comment", reason: "a comment first means SSE",
			in: ": hi\n\ndata: 1\n\n", want: []string{"1"}},
		{name: "sse-id-first", reason: "any field name means SSE",
			in: "id: 1\ndata: 1\n\n", want: []string{"1"}},
		{name: "sse-leading-blank-lines", reason: "leading line ends are blank lines, harmless in SSE",
			in: "\r\n\ndata: 1\n\n", want: []string{"1"}},
		{name: "sse-leading-space", reason: "a line starting with a space is an ignored field, even after detection",
			in: "  data: 1\n\ndata: 2\n\n", want: []string{"2"}},
		{name: "sse-space-then-newline", reason: "whitespace on an earlier line does not affect the next",
			in: " \ndata: 1\n\n", want: []string{"1"}},
		{name: "sse-bom", reason: "BOM then SSE",
			in: "\xEF\xBB\xBFdata: 1\n\n", want: []string{"1"}},
		{name: "jsonl", reason: "'{' first means JSON Lines",
			in: "{\"a\":1}\n{\"b\":2}\n", want: []string{`{"a":1}`, `{"b":2}`}},
		{name: "jsonl-leading-ws", reason: "leading whitespace is skipped before detection",
			in: " \r\n\t{\"a\":1}\n", want: []string{`{"a":1}`}},
		{name: "jsonl-bom", reason: "BOM then JSON Lines",
			in: "\xEF\xBB\xBF{\"a\":1}", want: []string{`{"a":1}`}},
		{name: "array", reason: "'[' first means a JSON array",
			in: `[{"a":1},{"b":2}]`, want: []string{`{"a":1}`, `{"b":2}`}},
		{name: "array-leading-ws", reason: "leading whitespace is skipped before detection",
			in: "\n\n  [1]", want: []string{"1"}},
		{name: "array-bom", reason: "BOM then a JSON array",
			in: "\xEF\xBB\xBF [1]", want: []string{"1"}},
		{name: "empty", reason: "an empty stream yields nothing",
			in: ""},
		{name: "whitespace-only", reason: "a whitespace-only stream yields nothing",
			in: " \r\n\t\n"},
		{name: "bom-only", reason: "a BOM alone is an empty stream",
			in: "\xEF\xBB\xBF"},
	})
}

// TestReadGap checks the bound on the bytes read between two events that
// are not part of an event: comments, blank lines, other fields, keep-alives
// and white space, in each framing, with a limit of 100 bytes.
func TestReadGap(t *testing.T) {
	t.Parallel()
	const gap = 100
	filler := func(unit string, n int) string { return strings.Repeat(unit, n/len(unit)) }
	pretty := "data: [\n" + filler("data: 1,\n", 3*gap) + "data: 1]\n\n"
	runReadCases(t, []readCase{
		{name: "sse-comments-fit", reason: "a gap of the limit is allowed: the comments and the data field's name",
			in: filler(":\n", gap-6) + "data: 1\n\n", format: SSE, gap: gap, want: []string{"1"}},
		{name: "sse-comments", reason: "comments past the limit end the stream",
			in: filler(":\n", 2*gap) + "data: 1\n\n", format: SSE, gap: gap, wantErr: ErrGap, wantEvent: 1},
		{name: "sse-blank-lines", reason: "blank lines are part of the gap",
			in: "data: 1\n\n" + filler("\n", 2*gap) + "data: 2\n\n", format: SSE, gap: gap, want: []string{"1"}, wantErr: ErrGap, wantEvent: 2},
		{name: "sse-fields", reason: "fields other than data are part of the gap",
			in: filler("event: x\n", 2*gap) + "data: 1\n\n", format: SSE, gap: gap, wantErr: ErrGap, wantEvent: 1},
		{name: "sse-keep-alives", reason: "an event of white space is a keep-alive: its bytes are part of the gap",
			in: filler("data: \n\n", 2*gap) + "data: 1\n\n", format: SSE, gap: gap, want: strings.Split(filler(",", gap/8-1), ","), wantErr: ErrGap, wantEvent: gap/8 + 1},
		{name: "sse-each-gap", reason: "each event ends the gap",
			in: strings.Repeat(":\n"+filler("\n", gap-10)+"data: 1\n\n", 3), format: SSE, gap: gap, want: []string{"1", "1", "1"}},
		{name: "sse-fields-of-an-event", reason: "the fields after an event's data are part of the gap",
			in: "data: 1\n" + filler("id: 7\n", 2*gap) + "\ndata: 2\n\n", format: SSE, gap: gap, wantErr: ErrGap, wantEvent: 1},
		{name: "sse-pretty", reason: "the data lines of an event with text are not: an event may span many lines",
			in: pretty, format: SSE, gap: gap, want: []string{"[\n" + filler("1,\n", 3*gap/9*3) + "1]"}},
		{name: "jsonl-blank-lines", reason: "blank lines and white space are part of the gap",
			in: "{}\n" + filler(" \n", 2*gap) + "{}\n", format: JSONLines, gap: gap, want: []string{"{}"}, wantErr: ErrGap, wantEvent: 2},
		{name: "jsonl-fit", reason: "a gap of the limit is allowed",
			in: "{}\n" + filler(" ", gap-1) + "{}\n", format: JSONLines, gap: gap, want: []string{"{}", "{}"}},
		{name: "jsonl-trailing-space", reason: "white space after a line's text is part of the gap",
			in: "[1]" + filler(" ", 2*gap) + "\n[2]\n", format: JSONLines, max: 10, gap: gap, wantErr: ErrGap, wantEvent: 1},
		{name: "sse-leading-space", reason: "white space before an event's text is part of the gap",
			in: "data:" + filler(" ", 2*gap) + "1\n\n", format: SSE, gap: gap, wantErr: ErrGap, wantEvent: 1},
		{name: "array-space", reason: "white space between elements is part of the gap",
			in: "[1," + filler(" ", 2*gap) + "2]", format: JSONArray, gap: gap, want: []string{"1"}, wantErr: ErrGap, wantEvent: 2},
		{name: "array-fit", reason: "a gap of the limit is allowed",
			in: "[1," + filler(" ", gap-5) + "2]", format: JSONArray, gap: gap, want: []string{"1", "2"}},
		{name: "auto-leading-space", reason: "white space before detection is part of the gap",
			in: filler(" ", 2*gap) + "[1]", format: Auto, gap: gap, wantErr: ErrGap, wantEvent: 1},
	})
}

func TestReadUnknownFormat(t *testing.T) {
	t.Parallel()
	got := collect(t, strings.NewReader("data: 1\n\n"), Format(42), 0)
	require.Error(t, got.Err)
	var e *Error
	require.ErrorAs(t, got.Err, &e)
	assert.Equal(t, 1, e.Event)
	assert.Equal(t, "event 1: unknown format 42", got.Err.Error())
}

// TestReadIOError checks that a reader's error ends the iteration, unchanged
// inside an *Error that counts the payloads before it.
func TestReadIOError(t *testing.T) {
	t.Parallel()
	errBoom := errors.New("boom")
	cases := []struct {
		name, reason, in string
		format           Format
		want             []string
	}{
		{"sse", "error after one event", "data: a\n\ndata: b\n", SSE, []string{"a"}},
		{"sse-mid-prefix", "error while classifying a short line", "data: a\n\nda", SSE, []string{"a"}},
		{"sse-auto", "error after one auto-detected event", "data: a\n\n", Auto, []string{"a"}},
		{"jsonl", "error after one line", "{}\n{", JSONLines, []string{"{}"}},
		{"array", "error inside the array", "[1,", JSONArray, []string{"1"}},
		{"array-end", "error where trailing whitespace is checked", "[1]", JSONArray, []string{"1"}},
		{"detect", "error before detection", "  ", Auto, nil},
		{"empty", "error at once", "", SSE, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, rk := range readerKinds {
				t.Run(rk.name, func(t *testing.T) {
					r := io.MultiReader(rk.wrap(tc.in), iotest.ErrReader(errBoom))
					got := collect(t, r, tc.format, 0)
					assert.Equal(t, tc.want, got.Payloads, tc.reason)
					require.Error(t, got.Err, tc.reason)
					var e *Error
					require.ErrorAs(t, got.Err, &e)
					assert.Equal(t, &Error{Event: len(tc.want) + 1, Err: errBoom}, e, tc.reason)
				})
			}
		})
	}
}

// TestReadStop checks that breaking out of the loop stops reading without
// further yields (the runtime panics if yield is called after false).
func TestReadStop(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, reason, in string
	}{
		{"sse", "stop at a dispatch", "data: 1\n\ndata: 2\n\n"},
		{"jsonl", "stop at a line", "{}\n{}\n"},
		{"jsonl-long", "stop at a line gathered across reads", "{}"},
		{"array", "stop at an element", "[1,2]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			n := 0
			for p, err := range Read(iotest.OneByteReader(strings.NewReader(tc.in)), Auto, 0) {
				require.NoError(t, err, tc.reason)
				require.NotNil(t, p, tc.reason)
				n++
				break
			}
			assert.Equal(t, 1, n, tc.reason)
		})
	}
}

func TestReadDefaultLimit(t *testing.T) {
	t.Parallel()
	const limit = 16 << 20
	for _, tc := range []struct {
		name, reason string
		size         int
		wantErr      bool
	}{
		{"at", "16 MiB is allowed by default", limit, false},
		{"past", "16 MiB plus one fails by default", limit + 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := "data: " + strings.Repeat("x", tc.size) + "\n\n"
			var sizes []int
			var gotErr error
			for p, err := range Read(strings.NewReader(in), SSE, 0) {
				if err != nil {
					gotErr = err
					break
				}
				sizes = append(sizes, len(p))
			}
			if !tc.wantErr {
				require.NoError(t, gotErr, tc.reason)
				assert.Equal(t, []int{tc.size}, sizes, tc.reason)
				return
			}
			assert.Empty(t, sizes, tc.reason)
			assert.ErrorIs(t, gotErr, ErrTooLarge, tc.reason)
			assert.EqualError(t, gotErr, "event 1: the event is longer than 16777216 bytes", tc.reason)
		})
	}
}

// TestSharedStreams reads the recorded AG-UI streams in ../shared/streams:
// every payload must be JSON, one per data line (.sse) or non-blank line
// (.jsonl).
func TestSharedStreams(t *testing.T) {
	t.Parallel()
	dir := sharedDir(t, "streams")
	var files []string
	for _, pat := range []string{"*.sse", "*.jsonl"} {
		m, err := filepath.Glob(filepath.Join(dir, pat))
		require.NoError(t, err)
		files = append(files, m...)
	}
	require.NotEmpty(t, files, "no *.sse or *.jsonl files in %s", dir)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			raw, err := os.ReadFile(file)
			require.NoError(t, err)
			format, wantN := JSONLines, nonBlankLines(raw)
			if strings.HasSuffix(file, ".sse") {
				format, wantN = SSE, 0
				for _, line := range bytes.Split(raw, []byte("\n")) {
					if bytes.HasPrefix(line, []byte("data:")) {
						wantN++
					}
				}
			}
			require.Positive(t, wantN)
			for _, f := range []Format{Auto, format} {
				for _, rk := range readerKinds {
					got := collect(t, rk.wrap(string(raw)), f, 0)
					require.NoError(t, got.Err, "format %d, reader %s", f, rk.name)
					assert.Len(t, got.Payloads, wantN, "format %d, reader %s", f, rk.name)
					for i, p := range got.Payloads {
						assert.True(t, json.Valid([]byte(p)), "payload %d is not JSON: %q", i+1, p)
					}
				}
			}
		})
	}
}

// TestReadReusesBuffer documents that a payload is a view valid only until
// the next step, and checks that keeping a copy is enough.
func TestReadReusesBuffer(t *testing.T) {
	t.Parallel()
	var kept [][]byte
	var copies []string
	for p, err := range Read(strings.NewReader("data: aaaa\n\ndata: bb\n\n"), SSE, 0) {
		require.NoError(t, err)
		kept = append(kept, p)
		copies = append(copies, string(p))
	}
	assert.Equal(t, []string{"aaaa", "bb"}, copies)
	require.Len(t, kept, 2)
	assert.Equal(t, "bb", string(kept[1]), "the last view is intact after the loop")
}
