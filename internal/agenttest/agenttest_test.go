// Tests of the fake agent: its holds.

package agenttest

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHold holds a run at two indices: each release lets it past one, and
// a run held at the second index is still waiting when its client leaves.
func TestHold(t *testing.T) {
	a := New(t, [][]byte{[]byte(`{"n":0}`), []byte(`{"n":1}`), []byte(`{"n":2}`), []byte(`{"n":3}`)})
	release := a.Hold(1, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.URL, strings.NewReader(`{}`))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	events := bufio.NewScanner(resp.Body)
	next := func() string {
		for events.Scan() {
			if data, ok := strings.CutPrefix(events.Text(), "data: "); ok {
				return data
			}
		}
		return "end: " + events.Err().Error()
	}

	assert.Equal(t, `{"n":0}`, next())
	release()
	assert.Equal(t, `{"n":1}`, next())
	assert.Equal(t, `{"n":2}`, next())
	cancel() // the run waits before {"n":3}: it ends as gone
	for deadline := time.Now().Add(5 * time.Second); a.Gone() == 0; time.Sleep(5 * time.Millisecond) {
		require.True(t, time.Now().Before(deadline), "the run is still held at index 3 when its client leaves")
	}
	release()
	release() // past the last: nothing

	a.Hold() // no hold: the next run streams at once
	resp, err = http.Post(a.URL, "application/json", strings.NewReader(`{}`))
	require.NoError(t, err)
	defer resp.Body.Close()
	events = bufio.NewScanner(resp.Body)
	for n := range 4 {
		assert.Contains(t, next(), `"n":`, "event %d", n)
	}
}
