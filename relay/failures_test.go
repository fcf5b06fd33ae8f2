// Tests of agents that fail and of closing a Relay.

package relay_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aguistate/aguistate"
	"github.com/aguistate/aguistate/relay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rawAgent is an agent that answers every run with status and body.
func rawAgent(t *testing.T, status int, contentType, body string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestRelayAgentFailures runs a thread against agents that fail: before
// the run's first event the client gets 502 and nothing is recorded;
// after it the relay ends the run with a RUN_ERROR that says why, and
// records no event that is not one.
func TestRelayAgentFailures(t *testing.T) {
	t.Parallel()
	const start = `{"type":"RUN_STARTED","threadId":"t","runId":"r"}`
	tests := []struct {
		name, reason string
		status       int
		contentType  string
		body         string
		wantStatus   int    // the client's HTTP error, or 0
		wantCode     string // the RUN_ERROR's code, or ""
		wantLog      []string
	}{
		{name: "500", reason: "an agent that fails answers no run", status: 500, contentType: "text/plain", body: "down",
			wantStatus: http.StatusBadGateway},
		{name: "html", reason: "an answer that is no event stream", status: 200, contentType: "text/html", body: "<html>",
			wantStatus: http.StatusBadGateway},
		{name: "empty", reason: "a stream with no event", status: 200, contentType: "text/event-stream", body: "",
			wantStatus: http.StatusBadGateway},
		{name: "cut", reason: "a stream that ends inside the run", status: 200, contentType: "text/event-stream",
			body: "data: " + start + "\n\ndata: {\"type\":\"STATE_SNAPSHOT\",\"snapshot\":{}}\n\n", wantCode: relay.CodeAgentFailed,
			wantLog: []string{"RUN_STARTED", "STATE_SNAPSHOT", "RUN_ERROR"}},
		{name: "fatal", reason: "an event that is not one is not recorded", status: 200, contentType: "text/event-stream",
			body:     "data: " + start + "\n\ndata: {\"type\":\"STATE_DELTA\",\"delta\":{}}\n\ndata: {\"type\":\"STATE_SNAPSHOT\",\"snapshot\":{}}\n\n",
			wantCode: relay.CodeAgentFailed, wantLog: []string{"RUN_STARTED", "RUN_ERROR"}},
		{name: "no RUN_STARTED", reason: "the relay starts the run the agent did not", status: 200, contentType: "application/x-ndjson",
			body:    "{\"type\":\"STATE_SNAPSHOT\",\"snapshot\":{\"a\":1}}\n{\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\"}\n",
			wantLog: []string{"RUN_STARTED", "STATE_SNAPSHOT", "RUN_FINISHED"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			store := relay.NewMemory(nil)
			r := relay.New(&aguistate.Agent{URL: rawAgent(t, tt.status, tt.contentType, tt.body)}, &relay.Options{Store: store})
			srv := httptest.NewServer(r)
			t.Cleanup(func() { srv.Close(); _ = r.Close() })
			c := aguistate.New(nil)
			require.NoError(t, c.StartRun(aguistate.RunAgentInput{ThreadID: "t"}))
			_, err := c.RunAgent(context.Background(), &aguistate.Agent{URL: srv.URL + "/agent"}, &aguistate.RunOptions{RunID: "r"})
			var he *aguistate.HTTPError
			var re *aguistate.RunError
			switch {
			case tt.wantStatus != 0:
				require.ErrorAs(t, err, &he, tt.reason)
				assert.Equal(t, tt.wantStatus, he.StatusCode, tt.reason)
				assert.True(t, strings.HasPrefix(he.Body, "aguistate: "), "a clear error: %q", he.Body)
			case tt.wantCode != "":
				require.ErrorAs(t, err, &re, tt.reason)
				assert.Equal(t, tt.wantCode, re.Code, tt.reason)
			default:
				require.NoError(t, err, tt.reason)
			}
			var types []string
			for e, err := range store.Read(context.Background(), "t", 0) {
				require.NoError(t, err)
				var ev struct{ Type string }
				require.NoError(t, json.Unmarshal(e.Event, &ev))
				types = append(types, ev.Type)
			}
			assert.Equal(t, tt.wantLog, types, tt.reason)
		})
	}
}

// TestRelayClose closes a relay in the middle of a run: the run ends with
// a RUN_ERROR of code CodeRelayStopped, which its client gets; a closed
// relay answers 503.
func TestRelayClose(t *testing.T) {
	t.Parallel()
	a := newAgent(t, [][]byte{
		[]byte(`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`),
		[]byte(`{"type":"STATE_SNAPSHOT","snapshot":{"a":1}}`),
		[]byte(`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`),
	})
	release := a.Hold(2)
	defer release()
	store := relay.NewMemory(nil)
	r := relay.New(&aguistate.Agent{URL: a.URL}, &relay.Options{Store: store})
	srv := httptest.NewServer(r)
	defer srv.Close()
	c := aguistate.New(nil)
	require.NoError(t, c.StartRun(aguistate.RunAgentInput{ThreadID: "t"}))
	applied := make(chan struct{})
	c.Subscribe(func(ch aguistate.Change) {
		if ch.Event.Type == "STATE_SNAPSHOT" {
			close(applied)
		}
	})
	ran := make(chan error, 1)
	go func() {
		_, err := c.RunAgent(context.Background(), &aguistate.Agent{URL: srv.URL + "/agent"}, &aguistate.RunOptions{RunID: "r"})
		ran <- err
	}()
	<-applied
	require.NoError(t, r.Close())
	var re *aguistate.RunError
	require.ErrorAs(t, <-ran, &re)
	assert.Equal(t, relay.CodeRelayStopped, re.Code)
	assert.Equal(t, "aguistate: run failed: the relay stopped before the run ended (code AGUISTATE_RELAY_STOPPED)", re.Error(), "one prefix")
	assert.False(t, c.Running())
	resp, err := http.Get(srv.URL + "/threads/t")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.False(t, errors.Is(err, context.Canceled))
}

// TestRelayBusy starts a second run of a thread while one runs on the
// same relay: it is refused with 409.
func TestRelayBusy(t *testing.T) {
	t.Parallel()
	a := newAgent(t, [][]byte{
		[]byte(`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`),
		[]byte(`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`),
	})
	release := a.Hold(1)
	_, base := newRelay(t, a, relay.Options{})
	first := openSSE(t, http.MethodPost, base+"/agent", []byte(`{"threadId":"t","runId":"r1","messages":[]}`), "", 1)
	<-first.first
	status, _ := post(t, base, []byte(`{"threadId":"t","runId":"r2","messages":[]}`))
	assert.Equal(t, http.StatusConflict, status)
	release()
	first.wait(t)
}
