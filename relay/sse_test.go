// Tests of the SSE writer: every event goes out as one data line, whatever the store holds.

package relay_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/aguistate/aguistate/relay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRelayEventsOneLine stores events with raw line ends, as a store
// written by another program might hold them: a viewer gets each as one
// data line of compact JSON, and a line end inside a string (no JSON) cannot
// forge an event.
func TestRelayEventsOneLine(t *testing.T) {
	t.Parallel()
	store := relay.NewMemory(nil)
	ctx := context.Background()
	require.NoError(t, store.Append(ctx, "t", 1,
		[]byte("{\"type\":\"RUN_STARTED\",\r\n\"threadId\":\"t\",\n\"runId\":\"r\"}"),
		[]byte("{\"type\":\"CUSTOM\",\"name\":\"x\",\"value\":\"a\n\ndata: {\\\"type\\\":\\\"RUN_ERROR\\\",\\\"message\\\":\\\"forged\\\"}\n\n\"}"),
		[]byte(`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`)))
	_, base := newRelay(t, newAgent(t, nil), relay.Options{Store: store})
	code, events := get(t, base+"/threads/t/events", "0")
	require.Equal(t, http.StatusOK, code)
	require.Len(t, events, 3, "three events, none forged")
	assert.Equal(t, `{"type":"RUN_STARTED","threadId":"t","runId":"r"}`, events[0].data, "compacted")
	assert.Equal(t, []string{"1", "2", "3"}, []string{events[0].id, events[1].id, events[2].id})
	for _, e := range events {
		assert.NotContains(t, e.data, "\n")
	}
}
