// Tests of stopping a run: the route, what the client and viewers get, and Stop.

package relay_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/aguistate/aguistate"
	"github.com/aguistate/aguistate/relay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// typesOf returns the type of each event.
func typesOf(t testing.TB, events [][]byte) []string {
	var types []string
	for _, ev := range events {
		var e struct{ Type string }
		require.NoError(t, json.Unmarshal(ev, &e))
		types = append(types, e.Type)
	}
	return types
}

// logTypes returns the type of each event of thread's log in store.
func logTypes(t testing.TB, store relay.Store, thread string) []string {
	var events [][]byte
	for e, err := range store.Read(context.Background(), thread, 0) {
		require.NoError(t, err)
		events = append(events, e.Event)
	}
	return typesOf(t, events)
}

// waitFor waits until cond holds, for at most 10 s.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10 s in vain for this: %s", what)
		}
	}
}

// TestRelayStop stops a run in the middle, with Stop as a Go client calls
// it: the agent's request is cancelled; the run ends with RUN_FINISHED,
// outcome "cancelled", which the client that POSTed it and a viewer get
// and the log records; the thread takes a new run at once. A thread with
// no run in progress answers 409 (ErrNotRunning); a thread without events,
// 404.
func TestRelayStop(t *testing.T) {
	t.Parallel()
	a := newAgent(t, [][]byte{
		[]byte(`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`),
		[]byte(`{"type":"STATE_SNAPSHOT","snapshot":{"step":1}}`),
		[]byte(`{"type":"STATE_SNAPSHOT","snapshot":{"step":2}}`),
		[]byte(`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`),
	})
	release := a.Hold(2)
	defer release()
	store := relay.NewMemory(nil)
	_, base := newRelay(t, a, relay.Options{Store: store})
	agent := &aguistate.Agent{URL: base + "/agent"}

	c := aguistate.New(nil)
	require.NoError(t, c.StartRun(aguistate.RunAgentInput{ThreadID: "t"}))
	applied := make(chan struct{})
	c.Subscribe(func(ch aguistate.Change) {
		if ch.Event.Type == "STATE_SNAPSHOT" {
			close(applied)
		}
	})
	type result struct {
		res aguistate.RunResult
		err error
	}
	ran := make(chan result, 1)
	go func() {
		res, err := c.RunAgent(testContext(t), agent, &aguistate.RunOptions{RunID: "r"})
		ran <- result{res, err}
	}()
	<-applied
	viewer := openSSE(t, http.MethodGet, base+"/threads/t/events", nil, "", 1)
	<-viewer.first

	require.NoError(t, relay.Stop(testContext(t), agent, "t"))
	got := <-ran
	require.NoError(t, got.err)
	assert.Equal(t, "cancelled", got.res.Outcome, "RunAgent reads the outcome")
	assert.Equal(t, `{"step":1}`, c.State().String(), "the agent's events after the stop are not recorded")
	waitFor(t, "the agent's request is cancelled", func() bool { return a.Gone() == 1 })
	seen := viewer.wait(t)
	assert.JSONEq(t, `{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"cancelled"}}`, seen[len(seen)-1].data,
		"a viewer gets the run's end")
	assert.Equal(t, []string{"RUN_STARTED", "STATE_SNAPSHOT", "RUN_FINISHED"}, logTypes(t, store, "t"))

	assert.ErrorIs(t, relay.Stop(testContext(t), agent, "t"), relay.ErrNotRunning, "no run in progress: 409")
	var he *aguistate.HTTPError
	require.ErrorAs(t, relay.Stop(testContext(t), agent, "nope"), &he)
	assert.Equal(t, http.StatusNotFound, he.StatusCode)

	release()
	status, events := post(t, base, []byte(`{"threadId":"t","runId":"r2","messages":[]}`))
	assert.Equal(t, http.StatusOK, status, "the thread takes a new run")
	assert.Equal(t, "RUN_FINISHED", typesOf(t, dataOf(events))[len(events)-1])
}

// TestRelayStopBeforeFirstEvent stops a run whose agent has not answered
// yet: the run's start and its RUN_FINISHED (cancelled) are recorded, and
// its client gets them.
func TestRelayStopBeforeFirstEvent(t *testing.T) {
	t.Parallel()
	a := newAgent(t, [][]byte{[]byte(`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`)})
	release := a.Hold(0)
	defer release()
	store := relay.NewMemory(nil)
	_, base := newRelay(t, a, relay.Options{Store: store})
	stream := openSSE(t, http.MethodPost, base+"/agent", []byte(`{"threadId":"t","runId":"r","messages":[]}`), "", 2)
	waitFor(t, "the agent has the run", func() bool { return len(a.Inputs()) == 1 })

	status, _, body := send(t, http.MethodPost, base+"/threads/t/stop", "", nil)
	require.Equal(t, http.StatusAccepted, status, body)
	events := stream.wait(t)
	assert.Equal(t, []string{"RUN_STARTED", "RUN_FINISHED"}, typesOf(t, dataOf(events)))
	assert.Equal(t, []string{"RUN_STARTED", "RUN_FINISHED"}, logTypes(t, store, "t"))
	assert.JSONEq(t, `{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"cancelled"}}`, events[1].data)
}

// TestStopURL checks the route Stop derives from the Agent's URL, and that
// it refuses a URL that is not a relay's /agent route.
func TestStopURL(t *testing.T) {
	t.Parallel()
	var path string
	srv := serveFunc(t, func(w http.ResponseWriter, req *http.Request) {
		path = req.URL.EscapedPath()
		w.WriteHeader(http.StatusAccepted)
	})
	require.NoError(t, relay.Stop(context.Background(), &aguistate.Agent{URL: srv + "/v1/agent"}, "a/b c"))
	assert.Equal(t, "/v1/threads/a%2Fb%20c/stop", path)
	err := relay.Stop(context.Background(), &aguistate.Agent{URL: srv + "/run"}, "t")
	assert.ErrorContains(t, err, "is not a relay's /agent route")
	assert.Error(t, relay.Stop(context.Background(), nil, "t"))
}

// TestRelayStopOrphan stops a run that no relay runs (its relay stopped
// before it ended, and its lease expired): the relay that gets the stop
// ends it with RUN_FINISHED, outcome "cancelled".
func TestRelayStopOrphan(t *testing.T) {
	t.Parallel()
	store := relay.NewMemory(nil)
	require.NoError(t, store.Append(context.Background(), "t", 1, []byte(`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`)))
	_, base := newRelay(t, newAgent(t, nil), relay.Options{Store: store})
	status, _, body := send(t, http.MethodPost, base+"/threads/t/stop", "", nil)
	require.Equal(t, http.StatusAccepted, status, body)
	assert.Equal(t, []string{"RUN_STARTED", "RUN_FINISHED"}, logTypes(t, store, "t"))
	status, _, _ = send(t, http.MethodPost, base+"/threads/t/stop", "", nil)
	assert.Equal(t, http.StatusConflict, status)
}
