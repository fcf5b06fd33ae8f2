// Tests of what a Relay records and serves.

package relay_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"

	"github.com/aguistate/aguistate/relay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRelayRecords runs every recorded stream through a relay: the POST
// streams the run's events with their positions as ids, starting with a
// RUN_STARTED that records the input; the thread is what those events
// make; a viewer joins after the run by prelude, or by Last-Event-ID.
func TestRelayRecords(t *testing.T) {
	t.Parallel()
	for _, s := range recordedStreams(t) {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			a := newAgent(t, s.events)
			_, base := newRelay(t, a, relay.Options{})
			status, events := post(t, base, s.input)
			require.Equal(t, http.StatusOK, status)
			require.NotEmpty(t, events)
			for i, e := range events {
				assert.Equal(t, strconv.Itoa(i+1), e.id, "event %d carries its position", i+1)
			}
			var start struct {
				Type  string
				Input struct{ ThreadID, RunID string }
			}
			require.NoError(t, json.Unmarshal([]byte(events[0].data), &start))
			assert.Equal(t, "RUN_STARTED", start.Type)
			assert.NotEmpty(t, start.Input.RunID, "the run's input is recorded")
			assert.Equal(t, string(a.Inputs()[0]), string(s.input), "the agent gets the input as it was sent")

			thread := consumerOf(t, dataOf(events))
			id := thread.ThreadID()
			code, body := getThread(t, base, id)
			require.Equal(t, http.StatusOK, code)
			assert.JSONEq(t, threadJSON(t, thread), body, "GET /threads/{threadId}")

			n := len(events)
			code, prelude := get(t, base+"/threads/"+id+"/events", "")
			require.Equal(t, http.StatusOK, code)
			require.NotEmpty(t, prelude)
			assert.Equal(t, "", prelude[0].id, "the prelude's first event resets the id")
			assert.Equal(t, strconv.Itoa(n), prelude[len(prelude)-1].id, "its last names the position it brings the viewer to")
			assert.JSONEq(t, threadJSON(t, thread), threadJSON(t, consumerOf(t, dataOf(prelude))), "the prelude makes the thread")

			code, _ = get(t, base+"/threads/"+id+"/events", strconv.Itoa(n))
			assert.Equal(t, http.StatusNoContent, code, "nothing after the last event of an ended run")
			for k := 0; k < n; k++ {
				var rest []sseEvent
				for last := strconv.Itoa(k); ; last = rest[len(rest)-1].id {
					code, more := get(t, base+"/threads/"+id+"/events", last)
					if code == http.StatusNoContent {
						break
					}
					require.Equal(t, http.StatusOK, code)
					require.NotEmpty(t, more)
					assert.True(t, endsRun(more[len(more)-1].data), "a viewer's stream ends with its run")
					rest = append(rest, more...)
				}
				assert.Equal(t, events[k:], rest, "Last-Event-ID %d replays the rest of the log, run by run", k)
			}
			code, _ = get(t, base+"/threads/nope/events", "")
			assert.Equal(t, http.StatusNotFound, code)
			code, _ = getThread(t, base, "nope")
			assert.Equal(t, http.StatusNotFound, code)
		})
	}
}
