package relay_test

import (
	"context"
	"iter"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/aguistate/aguistate/internal/agenttest"
	"github.com/aguistate/aguistate/relay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// wholeReads is a store that counts the reads of a log from its start
// (after position 0).
type wholeReads struct {
	relay.Store
	reads atomic.Int64
}

func (s *wholeReads) Read(ctx context.Context, thread string, after int64) iter.Seq2[relay.Entry, error] {
	if after == 0 {
		s.reads.Add(1)
	}
	return s.Store.Read(ctx, thread, after)
}

// TestRelayReconnectReadsNoLog reconnects twice by POST (the input sent
// again, with a Last-Event-ID) to a run whose agent named it otherwise
// than the input's runId, on relay B while relay A runs it and a viewer
// of B follows it: B knows the input that started the run from the events
// it applied, and reads no log for it. Each such POST used to read the log
// from KeepEvents before the last checkpoint, under the thread's lock.
func TestRelayReconnectReadsNoLog(t *testing.T) {
	t.Parallel()
	a := agenttest.NewScript(t, agenttest.Echo([][]byte{
		[]byte(`{"type":"RUN_STARTED","threadId":"t","runId":"agents-run"}`),
		[]byte(`{"type":"STATE_SNAPSHOT","snapshot":{"n":1}}`),
		[]byte(`{"type":"RUN_FINISHED","threadId":"t","runId":"agents-run"}`),
	}))
	release := a.Hold(2)
	mem := relay.NewMemory(nil)
	counted := &wholeReads{Store: mem}
	_, baseA := newRelay(t, a, relay.Options{Store: mem})
	_, baseB := newRelay(t, a, relay.Options{Store: counted})
	input := []byte(`{"threadId":"t","runId":"clients-run","messages":[]}`)
	first := openSSE(t, http.MethodPost, baseA+"/agent", input, "", 2)
	<-first.first
	viewer := openSSE(t, http.MethodGet, baseB+"/threads/t/events", nil, "", 1)
	<-viewer.first // B holds the thread while the viewer follows it
	counted.reads.Store(0)
	var again []*sseStream
	for range 2 {
		s := openSSE(t, http.MethodPost, baseB+"/agent", input, "1", 1)
		<-s.first
		again = append(again, s)
	}
	release()
	for i, s := range again {
		assert.Equal(t, []string{"STATE_SNAPSHOT", "RUN_FINISHED"}, typesOf(t, dataOf(s.wait(t))), "reconnect %d", i)
	}
	first.wait(t)
	viewer.wait(t)
	assert.Zero(t, counted.reads.Load(), "reads of the log from its start")
	assert.Len(t, a.Inputs(), 1, "the agent ran once")
}

// TestRelayReconnectExactInput runs a run whose agent's RUN_STARTED has an
// "INPUT" member besides "input" (which the relay sets to its record of the
// run's input), then POSTs, with a Last-Event-ID, to a relay that holds
// nothing of the thread: the runId of "input" is a reconnect, served from
// the log; that of "INPUT" a new run, which reaches the agent. encoding/json
// took the last of the two, case-insensitively.
func TestRelayReconnectExactInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, runID string
		agentRuns   int
	}{
		{"the input's runId", "clients-run", 1},
		{"another member's runId", "other-run", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := agenttest.NewScript(t, agenttest.Echo([][]byte{
				[]byte(`{"type":"RUN_STARTED","threadId":"t","runId":"agents-run","input":{"threadId":"t","runId":"x"},` +
					`"INPUT":{"threadId":"t","runId":"other-run"}}`),
				[]byte(`{"type":"RUN_FINISHED","threadId":"t","runId":"agents-run"}`),
			}))
			mem := relay.NewMemory(nil)
			_, base := newRelay(t, a, relay.Options{Store: mem})
			status, _ := post(t, base, []byte(`{"threadId":"t","runId":"clients-run","messages":[]}`))
			require.Equal(t, http.StatusOK, status)
			_, other := newRelay(t, a, relay.Options{Store: mem})
			status, _ = postWith(t, other, []byte(`{"threadId":"t","runId":"`+tt.runID+`","messages":[]}`), "1")
			assert.Equal(t, http.StatusOK, status)
			assert.Len(t, a.Inputs(), tt.agentRuns, "the agent's runs")
		})
	}
}
