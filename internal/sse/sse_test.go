package sse

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadSSE(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 100)
	runReadCases(t, []readCase{
		{name: "lf", reason: "LF ends lines and a blank line dispatches",
			in: "data: a\n\ndata: b\n\n", format: FormatSSE, want: []string{"a", "b"}},
		{name: "cr", reason: "a lone CR ends a line",
			in: "data: a\r\rdata: b\r\r", format: FormatSSE, want: []string{"a", "b"}},
		{name: "crlf", reason: "CRLF is one line end, not a line end plus a blank line",
			in: "data: a\r\n\r\ndata: b\r\n\r\n", format: FormatSSE, want: []string{"a", "b"}},
		{name: "crlf-multiline", reason: "CRLF between data lines must not dispatch early",
			in: "data: a\r\ndata: b\r\n\r\n", format: FormatSSE, want: []string{"a\nb"}},
		{name: "mixed-line-ends", reason: "LF, CR and CRLF may be mixed in one stream",
			in: "data: a\r\ndata: b\rdata: c\n\r\n", format: FormatSSE, want: []string{"a\nb\nc"}},
		{name: "cr-cr-lf", reason: "CR CR LF is a line end then a blank line (CRLF)",
			in: "data: a\r\r\ndata: b\n\n", format: FormatSSE, want: []string{"a", "b"}},
		{name: "no-space", reason: "the space after the colon is optional",
			in: "data:a\n\n", format: FormatSSE, want: []string{"a"}},
		{name: "two-spaces", reason: "only one leading space is dropped from the value",
			in: "data:  a\n\n", format: FormatSSE, want: []string{" a"}},
		{name: "tab-kept", reason: "a tab after the colon is part of the value",
			in: "data:\ta\n\n", format: FormatSSE, want: []string{"\ta"}},
		{name: "colon-in-value", reason: "only the first colon separates field and value",
			in: "data: {\"a\":\"b:c\"}\n\n", format: FormatSSE, want: []string{`{"a":"b:c"}`}},
		{name: "multiline", reason: "data lines of one event are joined with LF",
			in: "data: [1,\ndata: 2]\ndata:\n\n", format: FormatSSE, want: []string{"[1,\n2]\n"}},
		{name: "empty-data-colon", reason: "an event whose data is empty yields an empty payload",
			in: "data:\n\n", format: FormatSSE, want: []string{""}},
		{name: "data-no-colon", reason: "a line 'data' with no colon is the data field with an empty value",
			in: "data\n\ndata\ndata\n\n", format: FormatSSE, want: []string{"", "\n"}},
		{name: "no-data", reason: "an event without data fields is not dispatched",
			in: "event: ping\nid: 7\n\ndata: a\n\n", format: FormatSSE, want: []string{"a"}},
		{name: "comments", reason: "lines starting with ':' are comments",
			in: ": hello\ndata: a\n:\n: data: no\n\n", format: FormatSSE, want: []string{"a"}},
		{name: "other-fields", reason: "id, event, retry and unknown fields are skipped but do not break parsing",
			in: "id: 1\nevent: x\nretry: 10\nfoo: bar\nfoo\nid\ndata: a\nretry: x\n\n", format: FormatSSE, want: []string{"a"}},
		{name: "near-data-names", reason: "field names are exact and case-sensitive",
			in: "dat: a\ndataa: b\ndata : c\nDATA: d\n data: e\n\n", format: FormatSSE},
		{name: "bom", reason: "one leading UTF-8 BOM is dropped",
			in: "\xEF\xBB\xBFdata: a\n\n", format: FormatSSE, want: []string{"a"}},
		{name: "bom-twice", reason: "only one BOM is dropped; the second belongs to the field name",
			in: "\xEF\xBB\xBF\xEF\xBB\xBFdata: a\n\ndata: b\n\n", format: FormatSSE, want: []string{"b"}},
		{name: "partial-at-eof", reason: "an event without its blank line is dropped at EOF",
			in: "data: a\n\ndata: b\n", format: FormatSSE, want: []string{"a"}},
		{name: "partial-line-at-eof", reason: "an unterminated last line is dropped too",
			in: "data: a\n\ndata: b", format: FormatSSE, want: []string{"a"}},
		{name: "partial-short-line-at-eof", reason: "a short unterminated last line ends cleanly",
			in: "data: a\n\nda", format: FormatSSE, want: []string{"a"}},
		{name: "blank-runs", reason: "runs of blank lines dispatch nothing extra",
			in: "\n\n\r\ndata: a\n\n\n\n\r\rdata: b\n\n\n", format: FormatSSE, want: []string{"a", "b"}},
		{name: "empty", reason: "an empty stream yields nothing",
			in: "", format: FormatSSE},
		{name: "json-looking", reason: "explicit SSE does not detect JSON: '[1]' is a field name",
			in: "[1]\n\n", format: FormatSSE},
		{name: "at-limit", reason: "a payload of exactly maxSize bytes is fine",
			in: "data: 12345\n\n", format: FormatSSE, max: 5, want: []string{"12345"}},
		{name: "multiline-at-limit", reason: "the joining LF counts; the final one does not",
			in: "data: 12\ndata: 34\n\n", format: FormatSSE, max: 5, want: []string{"12\n34"}},
		{name: "past-limit", reason: "one byte past maxSize fails with ErrTooLarge",
			in: "data: 123456\n\n", format: FormatSSE, max: 5, wantErr: ErrTooLarge, wantEvent: 1},
		{name: "multiline-past-limit", reason: "the limit applies to the joined payload",
			in: "data: 12\ndata: 345\n\n", format: FormatSSE, max: 5, wantErr: ErrTooLarge, wantEvent: 1},
		{name: "second-past-limit", reason: "Error.Event counts the payload that failed",
			in: "data: a\n\ndata: b\n\ndata: 123456\n\n", format: FormatSSE, max: 5,
			want: []string{"a", "b"}, wantErr: ErrTooLarge, wantEvent: 3},
		{name: "huge-data-line-no-newline", reason: "a data line without end fails once it passes maxSize",
			in: "data: " + long, format: FormatSSE, max: 10, wantErr: ErrTooLarge, wantEvent: 1},
		{name: "huge-comment-no-newline", reason: "any line longer than maxSize plus 64 bytes fails",
			in: ": " + long, format: FormatSSE, max: 10, wantErr: ErrTooLarge, wantEvent: 1},
		{name: "long-comment-within-allowance", reason: "a skipped line may exceed maxSize by the allowance",
			in: ": " + long[:70] + "\ndata: a\n\n", format: FormatSSE, max: 10, want: []string{"a"}},
	})
}

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

func TestReadUnknownFormat(t *testing.T) {
	t.Parallel()
	got := collect(t, strings.NewReader("data: 1\n\n"), Format(42), 0)
	require.Error(t, got.Err)
	var e *Error
	require.ErrorAs(t, got.Err, &e)
	assert.Equal(t, 1, e.Event)
	assert.Equal(t, "aguistate: event 1: unknown format 42", got.Err.Error())
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
		{"sse", "error after one event", "data: a\n\ndata: b\n", FormatSSE, []string{"a"}},
		{"sse-mid-prefix", "error while classifying a short line", "data: a\n\nda", FormatSSE, []string{"a"}},
		{"sse-auto", "error after one auto-detected event", "data: a\n\n", FormatAuto, []string{"a"}},
		{"jsonl", "error after one line", "{}\n{", FormatJSONLines, []string{"{}"}},
		{"array", "error inside the array", "[1,", FormatJSONArray, []string{"1"}},
		{"array-end", "error where trailing whitespace is checked", "[1]", FormatJSONArray, []string{"1"}},
		{"detect", "error before detection", "  ", FormatAuto, nil},
		{"empty", "error at once", "", FormatSSE, nil},
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
			for p, err := range Read(iotest.OneByteReader(strings.NewReader(tc.in)), FormatAuto, 0) {
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
			for p, err := range Read(strings.NewReader(in), FormatSSE, 0) {
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
			assert.EqualError(t, gotErr, "aguistate: event 1: payload too large: exceeds 16777216 bytes", tc.reason)
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
			format, wantN := FormatJSONLines, nonBlankLines(raw)
			if strings.HasSuffix(file, ".sse") {
				format, wantN = FormatSSE, 0
				for _, line := range bytes.Split(raw, []byte("\n")) {
					if bytes.HasPrefix(line, []byte("data:")) {
						wantN++
					}
				}
			}
			require.Positive(t, wantN)
			for _, f := range []Format{FormatAuto, format} {
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
	for p, err := range Read(strings.NewReader("data: aaaa\n\ndata: bb\n\n"), FormatSSE, 0) {
		require.NoError(t, err)
		kept = append(kept, p)
		copies = append(copies, string(p))
	}
	assert.Equal(t, []string{"aaaa", "bb"}, copies)
	require.Len(t, kept, 2)
	assert.Equal(t, "bb", string(kept[1]), "the last view is intact after the loop")
}

// sseStream builds a synthetic SSE stream of about size bytes, in the shape
// the AG-UI Go server writes.
func sseStream(size int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "id: TEXT_MESSAGE_CONTENT_%d\ndata: {\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"msg-1\",\"delta\":\"%s\"}\n\n",
			i, strings.Repeat("lorem ipsum ", 1+i%20))
	}
	return b.Bytes()
}

func BenchmarkReadSSE(b *testing.B) {
	in := sseStream(10 << 20)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		for _, err := range Read(bytes.NewReader(in), FormatSSE, 0) {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n == 0 {
			b.Fatal("no payloads")
		}
	}
}
