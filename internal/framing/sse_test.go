// Tests of the server-sent events framing.

package framing

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"
	"time"
)

func TestReadSSE(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 100)
	runReadCases(t, []readCase{
		{name: "lf", reason: "LF ends lines and a blank line dispatches",
			in: "data: a\n\ndata: b\n\n", format: SSE, want: []string{"a", "b"}},
		{name: "cr", reason: "a lone CR ends a line",
			in: "data: a\r\rdata: b\r\r", format: SSE, want: []string{"a", "b"}},
		{name: "crlf", reason: "CRLF is one line end, not a line end plus a blank line",
			in: "data: a\r\n\r\ndata: b\r\n\r\n", format: SSE, want: []string{"a", "b"}},
		{name: "crlf-multiline", reason: "CRLF between data lines must not dispatch early",
			in: "data: a\r\ndata: b\r\n\r\n", format: SSE, want: []string{"a\nb"}},
		{name: "mixed-line-ends", reason: "LF, CR and CRLF may be mixed in one stream",
			in: "data: a\r\ndata: b\rdata: c\n\r\n", format: SSE, want: []string{"a\nb\nc"}},
		{name: "cr-cr-lf", reason: "CR CR LF is a line end then a blank line (CRLF)",
			in: "data: a\r\r\ndata: b\n\n", format: SSE, want: []string{"a", "b"}},
		{name: "no-space", reason: "the space after the colon is optional",
			in: "data:a\n\n", format: SSE, want: []string{"a"}},
		{name: "two-spaces", reason: "only one leading space is dropped from the value",
			in: "data:  a\n\n", format: SSE, want: []string{" a"}},
		{name: "tab-kept", reason: "a tab after the colon is part of the value",
			in: "data:\ta\n\n", format: SSE, want: []string{"\ta"}},
		{name: "colon-in-value", reason: "only the first colon separates field and value",
			in: "data: {\"a\":\"b:c\"}\n\n", format: SSE, want: []string{`{"a":"b:c"}`}},
		{name: "multiline", reason: "data lines of one event are joined with LF",
			in: "data: [1,\ndata: 2]\ndata:\n\n", format: SSE, want: []string{"[1,\n2]\n"}},
		{name: "empty-data-colon", reason: "an event whose data is empty yields an empty payload",
			in: "data:\n\n", format: SSE, want: []string{""}},
		{name: "data-no-colon", reason: "a line 'data' with no colon is the data field with an empty value",
			in: "data\n\ndata\ndata\n\n", format: SSE, want: []string{"", "\n"}},
		{name: "no-data", reason: "an event without data fields is not dispatched",
			in: "event: ping\nid: 7\n\ndata: a\n\n", format: SSE, want: []string{"a"}},
		{name: "comments", reason: "lines starting with ':' are comments",
			in: ": hello\ndata: a\n:\n: data: no\n\n", format: SSE, want: []string{"a"}},
		{name: "other-fields", reason: "id, event, retry and unknown fields are skipped but do not break parsing",
			in: "id: 1\nevent: x\nretry: 10\nfoo: bar\nfoo\nid\ndata: a\nretry: x\n\n", format: SSE, want: []string{"a"}},
		{name: "near-data-names", reason: "field names are exact and case-sensitive",
			in: "dat: a\ndataa: b\ndata : c\nDATA: d\n data: e\n\n", format: SSE},
		{name: "bom", reason: "one leading UTF-8 BOM is dropped",
			in: "\xEF\xBB\xBFdata: a\n\n", format: SSE, want: []string{"a"}},
		{name: "bom-twice", reason: "only one BOM is dropped; the second belongs to the field name",
			in: "\xEF\xBB\xBF\xEF\xBB\xBFdata: a\n\ndata: b\n\n", format: SSE, want: []string{"b"}},
		{name: "partial-at-eof", reason: "an event without its blank line whose data is not JSON was cut short",
			in: "data: a\n\ndata: b\n", format: SSE, want: []string{"a"}, wantErr: io.ErrUnexpectedEOF, wantEvent: 2},
		{name: "json-at-eof", reason: "an event without its blank line whose data is whole JSON is yielded, as the reference client does",
			in: "data: a\n\ndata: {\"b\":1}\n", format: SSE, want: []string{"a", `{"b":1}`}},
		{name: "json-line-at-eof", reason: "the same without the line end",
			in: "data: a\n\ndata: [1,\ndata: 2]", format: SSE, want: []string{"a", "[1,\n2]"}},
		{name: "cut-json-at-eof", reason: "JSON cut short is not yielded",
			in: "data: {\"b\":1}\n\ndata: {\"b\":", format: SSE, want: []string{`{"b":1}`}, wantErr: io.ErrUnexpectedEOF, wantEvent: 2},
		{name: "empty-data-at-eof", reason: "empty data at the end is nothing lost",
			in: "data: a\n\ndata:\n", format: SSE, want: []string{"a"}},
		{name: "partial-line-at-eof", reason: "an unterminated data line was cut short",
			in: "data: a\n\ndata: b", format: SSE, want: []string{"a"}, wantErr: io.ErrUnexpectedEOF, wantEvent: 2},
		{name: "partial-empty-data-at-eof", reason: "a data line cut right after its colon was cut short",
			in: "data: a\n\ndata:", format: SSE, want: []string{"a"}, wantErr: io.ErrUnexpectedEOF, wantEvent: 2},
		{name: "partial-short-line-at-eof", reason: "a short unterminated line that begins like data was cut short",
			in: "data: a\n\nda", format: SSE, want: []string{"a"}, wantErr: io.ErrUnexpectedEOF, wantEvent: 2},
		{name: "partial-data-then-comment-at-eof", reason: "undispatched data is cut short whatever line ends the stream",
			in: "data: a\n: c", format: SSE, wantErr: io.ErrUnexpectedEOF, wantEvent: 1},
		{name: "comment-at-eof", reason: "an unterminated comment or other field outside an event ends cleanly",
			in: "data: a\n\n: ping", format: SSE, want: []string{"a"}},
		{name: "field-at-eof", reason: "an id field outside an event is no event",
			in: "data: a\n\nid: 7\n", format: SSE, want: []string{"a"}},
		{name: "blank-runs", reason: "runs of blank lines dispatch nothing extra",
			in: "\n\n\r\ndata: a\n\n\n\n\r\rdata: b\n\n\n", format: SSE, want: []string{"a", "b"}},
		{name: "empty", reason: "an empty stream yields nothing",
			in: "", format: SSE},
		{name: "json-looking", reason: "explicit SSE does not detect JSON: '[1]' is a field name",
			in: "[1]\n\n", format: SSE},
		{name: "at-limit", reason: "a payload of exactly maxSize bytes is fine",
			in: "data: 12345\n\n", format: SSE, max: 5, want: []string{"12345"}},
		{name: "multiline-at-limit", reason: "the joining LF counts; the final one does not",
			in: "data: 12\ndata: 34\n\n", format: SSE, max: 5, want: []string{"12\n34"}},
		{name: "past-limit", reason: "one byte past maxSize fails with ErrTooLarge",
			in: "data: 123456\n\n", format: SSE, max: 5, wantErr: ErrTooLarge, wantEvent: 1},
		{name: "multiline-past-limit", reason: "the limit applies to the joined payload",
			in: "data: 12\ndata: 345\n\n", format: SSE, max: 5, wantErr: ErrTooLarge, wantEvent: 1},
		{name: "second-past-limit", reason: "Error.Event counts the payload that failed",
			in: "data: a\n\ndata: b\n\ndata: 123456\n\n", format: SSE, max: 5,
			want: []string{"a", "b"}, wantErr: ErrTooLarge, wantEvent: 3},
		{name: "huge-data-line-no-newline", reason: "a data line without end fails once it passes maxSize",
			in: "data: " + long, format: SSE, max: 10, wantErr: ErrTooLarge, wantEvent: 1},
		{name: "huge-comment-no-newline", reason: "any line longer than maxSize plus 64 bytes fails",
			in: ": " + long, format: SSE, max: 10, wantErr: ErrTooLarge, wantEvent: 1},
		{name: "long-comment-within-allowance", reason: "a skipped line may exceed maxSize by the allowance",
			in: ": " + long[:70] + "\ndata: a\n\n", format: SSE, max: 10, want: []string{"a"}},
	})
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
		for _, err := range Read(bytes.NewReader(in), SSE, 0) {
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

// TestReadFields checks the id and retry fields (WHATWG): the last event ID
// is the last id field's value when an event is dispatched, and persists
// across events; retry takes ASCII digits only.
func TestReadFields(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, reason, in string
		ids              []string // LastEventID at each payload
		last             string   // LastEventID at the end
		sawID            bool
		retry            time.Duration
	}{
		{name: "ids", reason: "each event names its id",
			in: "id: 1\ndata: a\n\nid: 2\ndata: b\n\n", ids: []string{"1", "2"}, last: "2", sawID: true},
		{name: "persists", reason: "the buffer is not reset: an event without id keeps the last one",
			in: "id: 7\ndata: a\n\ndata: b\n\n", ids: []string{"7", "7"}, last: "7", sawID: true},
		{name: "empty id", reason: "an id field without a value sets the last event ID to empty",
			in: "id: 7\ndata: a\n\nid\ndata: b\n\nid:\ndata: c\n\nid: 9\ndata: d\n\n", ids: []string{"7", "", "", "9"}, last: "9", sawID: true},
		{name: "after data", reason: "an id after the data of the same event names that event",
			in: "data: a\nid: 3\n\n", ids: []string{"3"}, last: "3", sawID: true},
		{name: "no data", reason: "an event without data still sets the last event ID when dispatched",
			in: "data: a\n\nid: 4\n\n", ids: []string{""}, last: "4", sawID: true},
		{name: "not dispatched", reason: "an id of an event cut short before its blank line is not taken",
			in: "id: 1\ndata: a\n\nid: 2\n", ids: []string{"1"}, last: "1", sawID: true},
		{name: "json at eof", reason: "an event dispatched at EOF takes its id",
			in: "id: 1\ndata: a\n\nid: 2\ndata: {}", ids: []string{"1", "2"}, last: "2", sawID: true},
		{name: "nul", reason: "an id holding NUL is ignored",
			in: "id: 1\ndata: a\n\nid: x\x00y\ndata: b\n\n", ids: []string{"1", "1"}, last: "1", sawID: true},
		{name: "spaces", reason: "one space after the colon is dropped, others kept",
			in: "id:  5 \ndata: a\n\n", ids: []string{" 5 "}, last: " 5 ", sawID: true},
		{name: "crlf", reason: "CR and CRLF end an id line",
			in: "id: 1\r\ndata: a\r\n\r\nid: 2\rdata: b\r\r", ids: []string{"1", "2"}, last: "2", sawID: true},
		{name: "retry", reason: "retry takes ASCII digits, in milliseconds",
			in: "retry: 2500\ndata: a\n\n", ids: []string{""}, retry: 2500 * time.Millisecond},
		{name: "bad retry", reason: "a retry with anything but digits is ignored, and so is an empty one",
			in: "retry: 100\nretry: 1x\nretry: -5\nretry\nretry: 2.5\ndata: a\n\n", ids: []string{""}, retry: 100 * time.Millisecond},
		{name: "huge retry", reason: "a retry too large for a Duration is the largest",
			in: "retry: 99999999999999999999999\n\n", retry: time.Duration(math.MaxInt64)},
		{name: "near names", reason: "field names are exact",
			in: "ids: 1\nidx\nretryy: 5\nID: 2\n id: 3\ndata: a\n\n", ids: []string{""}},
		{name: "no ids", reason: "a stream without id fields has none",
			in: "data: a\n\n", ids: []string{""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var f Fields
			var ids []string
			for _, err := range ReadFields(strings.NewReader(tt.in), SSE, 0, 0, &f) {
				if err != nil {
					t.Fatalf("%s: %v", tt.reason, err)
				}
				ids = append(ids, f.LastEventID)
			}
			if fmt.Sprint(ids) != fmt.Sprint(tt.ids) || f.LastEventID != tt.last || f.IDs != tt.sawID || f.Retry != tt.retry {
				t.Errorf("%s:\ngot  ids %q, last %q, sawID %v, retry %v\nwant ids %q, last %q, sawID %v, retry %v",
					tt.reason, ids, f.LastEventID, f.IDs, f.Retry, tt.ids, tt.last, tt.sawID, tt.retry)
			}
		})
	}

	// A new stream's last event ID buffer starts empty, whatever the last
	// event ID string was: a dispatch before its first id field sets it to
	// "" (a reconnected EventSource does the same).
	for in, want := range map[string][]string{
		"retry: 5\nid: 8\ndata: a\n\n": {"8", "8"},
		": c\n\nid: 9\ndata: b\n\n":    {"9", "9"},
		": c\n\n":                      {"", ""},
		"data: a\n\n":                  {"", ""},
		"":                             {"7"},
	} {
		f := Fields{LastEventID: "7"}
		var got []string
		for _, err := range ReadFields(strings.NewReader(in), SSE, 0, 0, &f) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, f.LastEventID)
		}
		got = append(got, f.LastEventID)
		if len(got) > len(want) || fmt.Sprint(got) != fmt.Sprint(want[:len(got)]) {
			t.Errorf("%q from a last event ID of 7: got %q, want %q", in, got, want)
		}
	}

	long := "id: " + strings.Repeat("x", 200) + "\ndata: a\n\n"
	for _, err := range ReadFields(strings.NewReader(long), SSE, 100, 0, nil) {
		if !errors.Is(err, ErrTooLarge) {
			t.Errorf("an id longer than maxSize: %v, want ErrTooLarge", err)
		}
	}
}
