// Golden files: each stream under testdata/streams against its
// NAME.golden.json (go test -run TestGolden -update rewrites them).

package aguistate

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestGolden replays each stream under testdata/streams (from NAME.input.json
// when there is one) and compares the state, messages, warnings and fatal
// error with NAME.golden.json. Run `go test -run TestGolden -update` to
// rewrite the golden files after a deliberate change, and review the diff.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "streams", "*"))
	require.NoError(t, err)
	n := 0
	for _, file := range files {
		ext := filepath.Ext(file)
		if ext != ".sse" && ext != ".jsonl" && !strings.HasSuffix(file, ".events.json") {
			continue
		}
		n++
		name := strings.TrimSuffix(strings.TrimSuffix(file, ext), ".events")
		t.Run(filepath.Base(name), func(t *testing.T) {
			got := replayForGolden(t, name, file)
			golden := name + ".golden.json"
			if *update {
				require.NoError(t, os.WriteFile(golden, got, 0o644))
				return
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "run go test -run TestGolden -update to create it")
			assert.Equal(t, string(want), string(got))
		})
	}
	require.NotZero(t, n, "testdata/streams holds streams")
}

// replayForGolden runs one stream and returns the golden file's content.
func replayForGolden(t *testing.T, name, file string) []byte {
	c := New(nil)
	var warnings []string
	c.Subscribe(func(ch Change) {
		if ch.Warning != nil {
			warnings = append(warnings, ch.Warning.Error())
		}
	})
	if input, err := os.ReadFile(name + ".input.json"); err == nil {
		require.NoError(t, startRun(c, string(input)))
	}
	f, err := os.Open(file)
	require.NoError(t, err)
	defer f.Close()
	out := struct {
		State    Value     `json:"state"`
		Messages []Message `json:"messages"`
		Warnings []string  `json:"warnings"`
		Error    string    `json:"error,omitempty"`
	}{Warnings: []string{}}
	if err := c.Run(context.Background(), f); err != nil {
		out.Error = err.Error()
	}
	out.State, out.Messages = c.State(), c.Messages()
	if out.Messages == nil {
		out.Messages = []Message{}
	}
	out.Warnings = append(out.Warnings, warnings...)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	require.NoError(t, enc.Encode(out))
	return b.Bytes()
}
