package aguistate

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// vector is one file of ../shared/vectors (format in its README).
type vector struct {
	Name  string `json:"name"`
	About string `json:"about"`
	Input struct {
		State    json.RawMessage `json:"state"`
		Messages json.RawMessage `json:"messages"`
	} `json:"input"`
	Events []json.RawMessage `json:"events"`
	Expect struct {
		State    json.RawMessage `json:"state"`
		Messages json.RawMessage `json:"messages"`
		Skipped  int             `json:"skipped"`
		FatalAt  *int            `json:"fatalAt"`
	} `json:"expect"`
}

// TestVectors runs every shared semantics vector and requires the expected
// state, messages, skipped count and fatal position.
func TestVectors(t *testing.T) {
	dir := sharedDir(t, "vectors")
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		var v vector
		require.NoError(t, json.Unmarshal(data, &v))
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			skipped := 0
			c := New(nil)
			c.Subscribe(func(ch Change) {
				if ch.Warning != nil {
					assert.ErrorIs(t, ch.Warning, ErrPatchFailed)
					skipped++
				}
			})
			input := `{"state":` + string(v.Input.State) + `,"messages":` + string(v.Input.Messages) + `}`
			require.NoError(t, c.StartRun([]byte(input)))
			fatalAt := -1
			for i, ev := range v.Events {
				if err := c.Apply(ev); err != nil {
					var ee *EventError
					require.ErrorAs(t, err, &ee)
					assert.Equal(t, i+1, ee.Index, "position in the error")
					assert.True(t, errors.Is(err, ErrMalformedEvent) || errors.Is(err, ErrMalformedPatch) ||
						errors.Is(err, ErrMalformedMessages), "fatal error class: %v", err)
					fatalAt = i
					break
				}
			}
			want := -1
			if v.Expect.FatalAt != nil {
				want = *v.Expect.FatalAt
			}
			assert.Equal(t, want, fatalAt, "fatal position (-1: none); %s", v.About)
			assert.Equal(t, v.Expect.Skipped, skipped, "skipped events")
			assertJSONEqual(t, mustParse(t, string(v.Expect.State)), c.State().node(), "state")
			assertJSONEqual(t, mustParse(t, string(v.Expect.Messages)), encodeMessages(c.Messages()), "messages")
		})
	}
}
