// FuzzRead: each framing against a plain reference reader.

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

const bom = "\xEF\xBB\xBF"

// refSSE is a tiny, slow reference for SSE: normalise line ends to
// LF, split, and apply the field rules, dropping the unterminated tail.
func refSSE(in string) []string {
	in = strings.TrimPrefix(in, bom)
	in = strings.ReplaceAll(in, "\r\n", "\n")
	in = strings.ReplaceAll(in, "\r", "\n")
	lines := strings.Split(in, "\n")
	lines = lines[:len(lines)-1] // the part after the last line end is not a line
	var out []string
	var data strings.Builder
	for _, line := range lines {
		if line == "" {
			if data.Len() > 0 {
				out = append(out, strings.TrimSuffix(data.String(), "\n"))
				data.Reset()
			}
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		if field == "data" {
			data.WriteString(value + "\n")
		}
	}
	return out
}

// refSSEEnd returns what a reference SSE reader does at the end of in:
// the data of an event no blank line dispatched (with an unterminated data
// line), and whether the stream was cut short. That data is an event when
// it is whole JSON; other data, or a last line that begins like a data
// line but is too short to tell, was cut short.
func refSSEEnd(in string) (last string, cut bool) {
	in = strings.TrimPrefix(in, bom)
	in = strings.ReplaceAll(in, "\r\n", "\n")
	in = strings.ReplaceAll(in, "\r", "\n")
	lines := strings.Split(in, "\n")
	tail := lines[len(lines)-1]
	var data []string
	for _, line := range lines[:len(lines)-1] {
		field, value, _ := strings.Cut(line, ":")
		switch {
		case line == "":
			data = nil
		case line[0] != ':' && field == "data":
			data = append(data, strings.TrimPrefix(value, " "))
		}
	}
	switch {
	case tail != "" && len(tail) < 6 && strings.HasPrefix("data: ", tail):
		return "", true
	case len(tail) >= 6 && strings.HasPrefix(tail, "data:"):
		data = append(data, strings.TrimPrefix(tail[5:], " "))
	}
	pending := strings.Join(data, "\n")
	switch {
	case pending == "":
		return "", false
	case !json.Valid([]byte(pending)):
		return "", true
	}
	return pending, false
}

// refJSONLines is a reference for JSONLines.
func refJSONLines(in string) []string {
	var out []string
	for _, line := range strings.Split(strings.TrimPrefix(in, bom), "\n") {
		if line = strings.Trim(line, " \t\n\r\f"); line != "" {
			out = append(out, line)
		}
	}
	return out
}

// refJSONArray is a reference for JSONArray built on encoding/json.
// ok is false when the input is not one valid JSON array.
func refJSONArray(in string) (out []string, ok bool) {
	in = strings.TrimPrefix(in, bom)
	if !json.Valid([]byte(in)) || !strings.HasPrefix(strings.TrimLeft(in, " \t\r\n"), "[") {
		return nil, false
	}
	var raws []json.RawMessage
	if err := json.Unmarshal([]byte(in), &raws); err != nil {
		return nil, false
	}
	for _, r := range raws {
		out = append(out, string(r))
	}
	return out, true
}

// detectRef is a reference for Auto's choice. It also returns the
// input as the chosen reader sees it.
func detectRef(in string) (Format, string) {
	rest := strings.TrimLeft(strings.TrimPrefix(in, bom), " \t\n\r\f")
	switch {
	case rest == "":
		return formatNone, ""
	case rest[0] == '[':
		return JSONArray, rest
	case rest[0] == '{':
		return JSONLines, rest
	}
	return SSE, in
}

func fuzzSeeds(f *testing.F) {
	add := func(data []byte) {
		for format := range uint8(4) {
			f.Add(data, format, uint16(0))
			f.Add(data, format, uint16(8))
		}
	}
	for _, s := range []string{
		"", bom, "data: a\n\n", "data:a\r\rdata: b\r\n\r\n", "data\n\ndata:\n\n", ": c\nid: 1\n\n",
		" data: x\n\ndata: y\n\n", "data: 12345678\n\ndata: 123456789\n\n", ": " + strings.Repeat("x", 80),
		"{\"a\":1}\r\n\n {}  \n[]", "12345678   \n123456789\n",
		`[1,{"a":"]"},"\\",[[]]]`, "[1,]", "[1] x", `[{"a" 1}]`, "[", "\f[1]",
	} {
		add([]byte(s))
	}
	var files []string
	for _, dir := range []string{"testdata", filepath.Join("..", "..", "..", "shared", "streams")} {
		for _, pat := range []string{"*.sse", "*.jsonl", "*.json"} {
			m, _ := filepath.Glob(filepath.Join(dir, pat))
			files = append(files, m...)
		}
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		require.NoError(f, err)
		add(data)
	}
}

func FuzzRead(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte, format uint8, maxSize uint16) {
		fm := Format(format % 4)
		limit := int(maxSize)
		if limit == 0 {
			limit = defaultMaxSize
		}
		got := collect(t, bytes.NewReader(data), fm, int(maxSize))
		slow := collect(t, iotest.OneByteReader(bytes.NewReader(data)), fm, int(maxSize))
		require.Equal(t, got.Payloads, slow.Payloads, "one-byte reads change the payloads")
		require.Equal(t, errText(got.Err), errText(slow.Err), "one-byte reads change the error")
		require.Equal(t, got.IDs, slow.IDs, "one-byte reads change the ids")
		require.Equal(t, got.Fields, slow.Fields, "one-byte reads change the fields")

		for i, p := range got.Payloads {
			require.LessOrEqual(t, len(p), limit, "payload %d exceeds maxSize", i+1)
		}
		failed := 0 // the Event of a too-large error, else 0
		if got.Err != nil {
			var e *Error
			require.ErrorAs(t, got.Err, &e, "error %T is not *Error", got.Err)
			require.True(t, errors.Is(got.Err, ErrTooLarge) || errors.Is(got.Err, ErrSyntax) || errors.Is(got.Err, io.ErrUnexpectedEOF),
				"unexpected error %v", got.Err)
			require.Equal(t, len(got.Payloads)+1, e.Event, "Error.Event")
			require.True(t, strings.HasPrefix(got.Err.Error(), "event "), got.Err.Error())
			if errors.Is(got.Err, ErrTooLarge) {
				failed = e.Event
			}
		}

		in := string(data)
		if fm == Auto {
			fm, in = detectRef(in)
		}
		switch fm {
		case formatNone:
			assert.Empty(t, got.Payloads)
			assert.NoError(t, got.Err)
		case SSE:
			want := refSSE(in)
			assert.NotErrorIs(t, got.Err, ErrSyntax)
			last, cut := refSSEEnd(in)
			if last != "" {
				want = append(want, last)
			}
			if failed == 0 {
				assert.Equal(t, cut, errors.Is(got.Err, io.ErrUnexpectedEOF), "cut short")
			}
			checkPrefix(t, want, got, failed)
		case JSONLines:
			want := refJSONLines(in)
			assert.NotErrorIs(t, got.Err, ErrSyntax)
			if errors.Is(got.Err, io.ErrUnexpectedEOF) {
				require.NotEmpty(t, want, "cut short with no line")
				last := want[len(want)-1]
				assert.False(t, json.Valid([]byte(last)), "a valid last line %q was taken as cut short", last)
				assert.False(t, strings.HasSuffix(strings.TrimRight(in, " \t\r\f"), "\n"), "a terminated last line was taken as cut short")
				want = want[:len(want)-1]
			}
			checkPrefix(t, want, got, failed)
			if failed > 0 {
				assert.Greater(t, len(want[failed-1]), limit, "the failed line is not too large")
			}
		case JSONArray:
			for i, p := range got.Payloads {
				assert.True(t, json.Valid([]byte(p)), "payload %d is not JSON: %q", i+1, p)
			}
			want, ok := refJSONArray(in)
			if errors.Is(got.Err, io.ErrUnexpectedEOF) {
				assert.False(t, ok, "a whole array was taken as cut short")
			}
			if !ok {
				assert.Error(t, got.Err, "accepted an input that is not one JSON array")
				return
			}
			assert.NotErrorIs(t, got.Err, ErrSyntax, "rejected a valid array")
			checkPrefix(t, want, got, failed)
			if failed > 0 {
				assert.Greater(t, len(want[failed-1]), limit, "the failed element is not too large")
			}
		}
	})
}

// checkPrefix checks got against a reference: equal when there was no error,
// a prefix of it when event failed (too large).
func checkPrefix(t *testing.T, want []string, got result, failed int) {
	t.Helper()
	if failed == 0 {
		assert.Equal(t, orNil(want), got.Payloads)
		return
	}
	require.GreaterOrEqual(t, len(want), failed-1, "the reference has fewer payloads than were yielded")
	assert.Equal(t, orNil(want[:failed-1]), got.Payloads)
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// orNil maps an empty slice to nil, as collect leaves it.
func orNil(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}
