// Tests of the record of a run: what the log holds of the run's input, whatever the agent's
// first event.

package relay_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/aguistate/aguistate/internal/agenttest"
	"github.com/aguistate/aguistate/relay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRelayRecordFirstEvent runs agents whose first event is a
// RUN_STARTED, or another event that a member named "TYPE" or "Type"
// (no AG-UI member; encoding/json would take it for "type") makes look
// like one: the run's record (its RUN_STARTED with the input's message)
// is in the log either way, and the thread holds the user's message.
func TestRelayRecordFirstEvent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, reason string
		first        string
		events       int // in the log
	}{
		{"run started", "the agent's RUN_STARTED carries the record",
			`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`,
			2},
		{"text", "the relay makes the RUN_STARTED",
			`{"type":"TEXT_MESSAGE_START","messageId":"a","role":"assistant"}`,
			3},
		{"text with TYPE", "a member TYPE is not the type: the relay makes the RUN_STARTED",
			`{"type":"TEXT_MESSAGE_START","messageId":"a","role":"assistant","TYPE":"RUN_STARTED"}`,
			3},
		{"run started with Type", "a member Type does not hide the agent's RUN_STARTED",
			`{"type":"RUN_STARTED","threadId":"t","runId":"r","Type":"x"}`,
			2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := agenttest.New(t, [][]byte{
				[]byte(tt.first),
				[]byte(`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`),
			})
			store := relay.NewMemory(nil)
			_, base := newRelay(t, a, relay.Options{Store: store})
			status, _ := post(t, base, []byte(`{"threadId":"t","runId":"r","messages":[{"id":"u1","role":"user","content":"hi"}]}`))
			require.Equal(t, http.StatusOK, status)
			var log [][]byte
			for e, err := range store.Read(context.Background(), "t", 0) {
				require.NoError(t, err)
				log = append(log, e.Event)
			}
			assert.Len(t, log, tt.events, tt.reason)
			assert.Regexp(t, `^\{"type":"RUN_STARTED",.*"input":\{"threadId":"t","runId":"r","messages":\[\{"id":"u1"`, string(log[0]), "%s: the record", tt.reason)
			code, thread := getThread(t, base, "t")
			require.Equal(t, http.StatusOK, code)
			assert.Contains(t, thread, `"u1"`, "%s: the input's message is recorded", tt.reason)
		})
	}
}

// TestRelayRecordState POSTs run inputs with members whose names differ
// from "state" only in case (which encoding/json takes for it, and the
// agent does not): the thread records the state the agent got.
func TestRelayRecordState(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, reason string
		input, state string
	}{
		{"state", "the input's state", `{"threadId":"t","runId":"r","messages":[],"state":{"a":1}}`, `{"a":1}`},
		{"STATE after", "a member STATE is not the state", `{"threadId":"t","runId":"r","messages":[],"state":{"a":1},"STATE":{"evil":1}}`, `{"a":1}`},
		{"State alone", "a member State is no state", `{"threadId":"t","runId":"r","messages":[],"State":{"evil":1}}`, `{}`},
		{"null", "a null state is a state", `{"threadId":"t","runId":"r","messages":[],"state":null}`, `null`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := agenttest.New(t, [][]byte{
				[]byte(`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`),
				[]byte(`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`),
			})
			_, base := newRelay(t, a, relay.Options{})
			status, _ := post(t, base, []byte(tt.input))
			require.Equal(t, http.StatusOK, status)
			code, thread := getThread(t, base, "t")
			require.Equal(t, http.StatusOK, code)
			assert.JSONEq(t, `{"state":`+tt.state+`,"messages":[]}`, thread, tt.reason)
		})
	}
}

// TestRelayAgentOtherThread runs an agent whose RUN_STARTED names another
// thread than the run input's: the relay does not record the run under the
// input's thread as the agent's (which moved its clients to the agent's
// thread), and answers 502 naming the event; nothing is recorded.
func TestRelayAgentOtherThread(t *testing.T) {
	t.Parallel()
	a := newAgent(t, [][]byte{
		[]byte(`{"type":"RUN_STARTED","threadId":"other","runId":"r1"}`),
		[]byte(`{"type":"RUN_FINISHED","threadId":"other","runId":"r1"}`),
	})
	store := relay.NewMemory(nil)
	_, base := newRelay(t, a, relay.Options{Store: store})
	status, _, body := send(t, http.MethodPost, base+"/agent", "", []byte(`{"threadId":"t","runId":"r1","messages":[]}`))
	assert.Equal(t, http.StatusBadGateway, status)
	assert.Contains(t, body, `RUN_STARTED`)
	assert.Contains(t, body, `thread "other"`)
	assert.Empty(t, logTypes(t, store, "t"), "nothing is recorded")
}

// TestRelayRecordMemberNames runs an agent whose RUN_STARTED has member
// names with lone surrogate escapes: the record keeps them as the agent
// wrote them, as the reference client (JSON.parse, then JSON.stringify)
// does. The record used to hold U+FFFD for each.
func TestRelayRecordMemberNames(t *testing.T) {
	t.Parallel()
	a := agenttest.New(t, [][]byte{
		[]byte(`{"type":"RUN_STARTED","threadId":"t","runId":"r","\ud800":1,"x\udc00y":{"\udfff":2}}`),
		[]byte(`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`),
	})
	store := relay.NewMemory(nil)
	_, base := newRelay(t, a, relay.Options{Store: store})
	status, _ := post(t, base, []byte(`{"threadId":"t","runId":"r","messages":[]}`))
	require.Equal(t, http.StatusOK, status)
	var record []byte
	for e, err := range store.Read(context.Background(), "t", 0) {
		require.NoError(t, err)
		record = e.Event
		break
	}
	assert.Equal(t, `{"type":"RUN_STARTED","threadId":"t","runId":"r","\ud800":1,"x\udc00y":{"\udfff":2},"input":{"threadId":"t","runId":"r","messages":[]}}`, string(record))
}
