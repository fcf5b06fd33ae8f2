// Tests of the thread ids a Relay takes and refuses, and of run inputs it takes as they are.

package relay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/aguistate/aguistate"
	"github.com/aguistate/aguistate/internal/agenttest"
	"github.com/aguistate/aguistate/relay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runInput returns a run input of thread, run r, with messages.
func runInput(t *testing.T, thread string, messages ...map[string]any) []byte {
	if messages == nil {
		messages = []map[string]any{}
	}
	b, err := json.Marshal(map[string]any{"threadId": thread, "runId": "r", "messages": messages})
	require.NoError(t, err)
	return b
}

// TestRelayThreadIDs: a POST whose thread id no GET could name, or longer
// than relay.MaxThreadID, is refused with 400 and a message that names the
// problem; any other id runs and can be viewed. (JSON text carries no
// invalid UTF-8: storetest tests such ids on every store.)
func TestRelayThreadIDs(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", relay.MaxThreadID/2) // relay.MaxThreadID bytes
	tests := []struct {
		name, id string
		refused  string // what the 400's body says; "" when the id runs
	}{
		{"dot", ".", "cannot be named in a URL path"},
		{"dot dot", "..", "cannot be named in a URL path"},
		{"too long", long + "x", "is longer than 1024 bytes"},
		{"too long, quoted at a character", "x" + long, "is longer than 1024 bytes"},
		{"longest", long, ""},
		{"NUL", "a\x00b", ""},
		{"slash", "a/b", ""},
		{"brace", "}x", ""},
		{"three dots", "...", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := agenttest.NewScript(t, agenttest.Echo([][]byte{
				[]byte(`{"type":"RUN_STARTED","threadId":"x","runId":"r"}`),
				[]byte(`{"type":"RUN_FINISHED","threadId":"x","runId":"r"}`),
			}))
			_, base := newRelay(t, a, relay.Options{})
			resp, err := http.Post(base+"/agent", "application/json", bytes.NewReader(runInput(t, tc.id)))
			require.NoError(t, err)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if tc.refused != "" {
				assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
				assert.Contains(t, string(body), tc.refused)
				assert.Less(t, len(body), 200, "the id is quoted cut short")
				assert.NotContains(t, string(body), `\x`, "cut at the start of a character")
				assert.Empty(t, a.Inputs(), "the agent is not called")
				return
			}
			require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
			code, events := get(t, base+"/threads/"+url.PathEscape(tc.id)+"/events", "")
			require.Equal(t, http.StatusOK, code)
			assert.NotEmpty(t, events, "the thread can be viewed")
		})
	}
}

// TestRelayMessageWithoutID: a run input whose message has no id (as
// recorded clients send) runs; the message is not recorded.
func TestRelayMessageWithoutID(t *testing.T) {
	t.Parallel()
	a := newAgent(t, [][]byte{
		[]byte(`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`),
		[]byte(`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`),
	})
	_, base := newRelay(t, a, relay.Options{})
	status, events := post(t, base, runInput(t, "t",
		map[string]any{"role": "user", "content": "no id"},
		map[string]any{"id": "u2", "role": "user", "content": "with an id"}))
	require.Equal(t, http.StatusOK, status)
	require.NotEmpty(t, events)
	code, body := getThread(t, base, "t")
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, `"u2"`, "the message with an id is recorded")
	assert.NotContains(t, body, "no id", "the message without one is not")
}

// TestRelayThreadIDBytes runs a thread whose id has a lone surrogate
// escape, which decodes to bytes that are no UTF-8: the run's record names
// the thread by the bytes it is stored under, where encoding/json used to
// write U+FFFD in their place.
func TestRelayThreadIDBytes(t *testing.T) {
	t.Parallel()
	const id = "a\xed\xa0\x80b" // "a\ud800b", decoded
	for _, agentStarts := range []bool{true, false} {
		events := [][]byte{[]byte(`{"type":"RUN_FINISHED","threadId":"a\ud800b","runId":"r\ud800"}`)}
		if agentStarts {
			events = append([][]byte{[]byte(`{"type":"RUN_STARTED","threadId":"a\ud800b","runId":"r\ud800"}`)}, events...)
		}
		store := relay.NewMemory(nil)
		_, base := newRelay(t, newAgent(t, events), relay.Options{Store: store})
		status, _ := post(t, base, []byte(`{"threadId":"a\ud800b","runId":"r\ud800","messages":[]}`))
		require.Equal(t, http.StatusOK, status)
		var start struct {
			ThreadID string          `json:"threadId"`
			Input    json.RawMessage `json:"input"`
		}
		for e, err := range store.Read(context.Background(), id, 0) {
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(e.Event, &start))
			break
		}
		var in aguistate.RunAgentInput
		require.NoError(t, in.UnmarshalJSON(start.Input), "agent starts: %v", agentStarts)
		assert.Equal(t, id, in.ThreadID, "agent starts: %v: the record's thread id is the store's", agentStarts)
		assert.Equal(t, "r\xed\xa0\x80", in.RunID)
		code, _ := getThread(t, base, url.PathEscape(id))
		assert.Equal(t, http.StatusOK, code)
	}
}
