// Helpers shared by the tests: collecting a Read, table rows, the shared data folder.

package framing

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// result is everything one range over Read produced: copies of the payloads
// and the final error, if any.
type result struct {
	Payloads []string
	IDs      []string // the last event ID at each payload
	Fields   Fields   // at the end
	Err      error
}

// collect ranges over ReadFields and checks the iterator contract on the way: no
// payload comes with an error, and nothing comes after an error.
func collect(t testing.TB, r io.Reader, f Format, max int) result {
	t.Helper()
	return collectLimited(t, r, f, max, 0)
}

// collectLimited is collect with a bound on the gap between events.
func collectLimited(t testing.TB, r io.Reader, f Format, max, gap int) result {
	t.Helper()
	var res result
	var fields Fields
	for p, err := range ReadFields(r, f, max, gap, &fields) {
		if res.Err != nil {
			t.Fatalf("yielded (%q, %v) after error %v", p, err, res.Err)
		}
		if err != nil {
			if p != nil {
				t.Fatalf("yielded payload %q together with error %v", p, err)
			}
			res.Err = err
			continue
		}
		if p == nil {
			t.Fatalf("yielded a nil payload without error")
		}
		res.Payloads = append(res.Payloads, string(p))
		res.IDs = append(res.IDs, fields.LastEventID)
	}
	res.Fields = fields
	return res
}

// readerKinds wraps an input in readers that deliver it in different pieces,
// so that line ends and fields fall across buffer fills.
var readerKinds = []struct {
	name string
	wrap func(string) io.Reader
}{
	{"whole", func(s string) io.Reader { return strings.NewReader(s) }},
	{"one-byte", func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) }},
	{"half", func(s string) io.Reader { return iotest.HalfReader(strings.NewReader(s)) }},
	{"data-err", func(s string) io.Reader { return iotest.DataErrReader(strings.NewReader(s)) }},
}

// readCase is one row of the format tables.
type readCase struct {
	name      string
	reason    string
	in        string
	format    Format
	max       int
	gap       int      // the maxGap of ReadFields
	want      []string // payloads before the error, if any
	wantErr   error    // sentinel the error must wrap, or nil for success
	wantEvent int      // Error.Event when wantErr is set
}

func runReadCases(t *testing.T, cases []readCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, rk := range readerKinds {
				t.Run(rk.name, func(t *testing.T) {
					got := collectLimited(t, rk.wrap(tc.in), tc.format, tc.max, tc.gap)
					checkResult(t, tc, got)
				})
			}
		})
	}
}

func checkResult(t *testing.T, tc readCase, got result) {
	t.Helper()
	assert.Equal(t, tc.want, got.Payloads, "payloads: %s", tc.reason)
	if tc.wantErr == nil {
		assert.NoError(t, got.Err, tc.reason)
		return
	}
	require.Error(t, got.Err, tc.reason)
	assert.ErrorIs(t, got.Err, tc.wantErr, tc.reason)
	var e *Error
	require.ErrorAs(t, got.Err, &e, tc.reason)
	assert.Equal(t, tc.wantEvent, e.Event, "Error.Event: %s (%v)", tc.reason, got.Err)
	assert.NotContains(t, got.Err.Error(), "aguistate", "the caller adds the prefix: %q", got.Err)
}

// sharedDir returns the project's shared folder (../shared next to the
// checkout). It skips the test when the folder is missing, unless CI is set.
func sharedDir(t testing.TB, sub string) string {
	t.Helper()
	dir := filepath.Join("..", "..", "..", "shared", sub)
	if _, err := os.Stat(dir); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("../shared not found: %v", err)
		}
		t.Skipf("../shared not found: %v", err)
	}
	return dir
}

// nonBlankLines counts lines that are not only ASCII whitespace.
func nonBlankLines(b []byte) int {
	n := 0
	for _, line := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(line)) > 0 {
			n++
		}
	}
	return n
}
