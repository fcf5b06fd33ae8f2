package aguistate

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSharedStreams replays every real recorded stream of ../shared/streams
// from the reference client's starting value and requires no fatal error,
// no skipped event, and the reference client's state and messages (by
// value), except where the README's table of differences says otherwise.
func TestSharedStreams(t *testing.T) {
	dir := sharedDir(t, "streams")
	files, err := filepath.Glob(filepath.Join(dir, "*.*"))
	require.NoError(t, err)
	n := 0
	for _, file := range files {
		ext := filepath.Ext(file)
		if ext != ".sse" && ext != ".jsonl" {
			continue
		}
		n++
		name := strings.TrimSuffix(filepath.Base(file), ext)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var initial struct {
				State    json.RawMessage `json:"state"`
				Messages json.RawMessage `json:"messages"`
			}
			readJSON(t, filepath.Join(dir, "expected", name+".initial.json"), &initial)
			var expected struct {
				State    json.RawMessage `json:"state"`
				Messages json.RawMessage `json:"messages"`
			}
			readJSON(t, filepath.Join(dir, "expected", name+".json"), &expected)

			c := New(nil)
			c.Subscribe(func(ch Change) { assert.NoError(t, ch.Warning, "no event is skipped") })
			require.NoError(t, c.StartRun([]byte(`{"state":`+string(initial.State)+`,"messages":`+string(initial.Messages)+`}`)))
			f, err := os.Open(file)
			require.NoError(t, err)
			defer f.Close()
			require.NoError(t, c.Run(context.Background(), f), "replays with no fatal error")
			assertJSONEqual(t, mustParse(t, string(expected.State)), c.State().node(), "state")
			assertJSONEqual(t, mustParse(t, string(expected.Messages)), encodeMessages(c.Messages()), "messages")
		})
	}
	assert.Equal(t, 10, n, "every shared stream is replayed")
}

func readJSON(t testing.TB, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, v), path)
}
