// Tests of runs that must end (an agent that hangs, a run too long) and of the request to the
// agent (its headers and redirects).

package relay_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aguistate/aguistate"
	"github.com/aguistate/aguistate/relay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runThread runs thread t through the relay at base, for at most 10 s, and
// returns the error of RunAgent.
func runThread(t *testing.T, base, runID string) (aguistate.RunResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := aguistate.New(nil)
	require.NoError(t, c.StartRun(aguistate.RunAgentInput{ThreadID: "t"}))
	return c.RunAgent(ctx, &aguistate.Agent{URL: base + "/agent"}, &aguistate.RunOptions{RunID: runID})
}

// TestRelayRunsEnd runs agents that never end their run: one that sends
// RUN_STARTED and then nothing ends after IdleTimeout, one that sends
// keep-alive comments for ever ends after MaxRun, each with a RUN_ERROR
// whose code says which; the thread then takes a new run. An agent that
// never answers gets its POST a 504.
func TestRelayRunsEnd(t *testing.T) {
	t.Parallel()
	start := `{"type":"RUN_STARTED","threadId":"t","runId":"r1"}`
	tests := []struct {
		name, reason string
		opts         relay.Options
		agent        func(w http.ResponseWriter, req *http.Request)
		code         string // the RUN_ERROR's code, or ""
		status       int    // the POST's status when the run does not start
	}{
		{name: "idle", reason: "an agent that hangs after RUN_STARTED",
			opts: relay.Options{IdleTimeout: 200 * time.Millisecond},
			agent: func(w http.ResponseWriter, req *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprintf(w, "data: %s\n\n", start)
				w.(http.Flusher).Flush()
				<-req.Context().Done()
			},
			code: relay.CodeIdleTimeout},
		{name: "max run", reason: "an agent that sends keep-alives for ever",
			opts: relay.Options{MaxRun: 300 * time.Millisecond, IdleTimeout: time.Minute},
			agent: func(w http.ResponseWriter, req *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprintf(w, "data: %s\n\n", start)
				for {
					w.(http.Flusher).Flush()
					select {
					case <-req.Context().Done():
						return
					case <-time.After(20 * time.Millisecond):
						fmt.Fprint(w, ": keep-alive\n\n")
					}
				}
			},
			code: relay.CodeRunTimeout},
		{name: "no answer", reason: "an agent that never answers",
			opts: relay.Options{IdleTimeout: 200 * time.Millisecond},
			agent: func(w http.ResponseWriter, req *http.Request) {
				_, _ = io.Copy(io.Discard, req.Body) // then net/http sees the relay go
				<-req.Context().Done()
			},
			status: http.StatusGatewayTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var calls atomic.Int32
			agent := serveFunc(t, func(w http.ResponseWriter, req *http.Request) {
				if calls.Add(1) == 1 {
					tt.agent(w, req)
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprint(w, "data: {\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r2\"}\n\n"+
					"data: {\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r2\"}\n\n")
			})
			store := relay.NewMemory(nil)
			o := tt.opts
			o.Store = store
			r := relay.New(&aguistate.Agent{URL: agent}, &o)
			base := serve(t, r)

			_, err := runThread(t, base, "r1")
			if tt.status != 0 {
				var he *aguistate.HTTPError
				require.ErrorAs(t, err, &he, tt.reason)
				assert.Equal(t, tt.status, he.StatusCode, tt.reason)
				assert.Empty(t, logTypes(t, store, "t"), "nothing is recorded")
			} else {
				var re *aguistate.RunError
				require.ErrorAs(t, err, &re, tt.reason)
				assert.Equal(t, tt.code, re.Code, tt.reason)
				assert.Equal(t, []string{"RUN_STARTED", "RUN_ERROR"}, logTypes(t, store, "t"))
			}
			res, err := runThread(t, base, "r2")
			require.NoError(t, err, "%s: the thread is free again", tt.reason)
			assert.Equal(t, "success", res.Outcome)
		})
	}
}

// TestRelayRedirect runs a thread against an agent that redirects its run
// to another origin: the relay does not follow it (the other origin gets
// neither the run input nor the headers) and answers 502; with
// FollowCrossOrigin set on its Agent it does.
func TestRelayRedirect(t *testing.T) {
	t.Parallel()
	var otherHits atomic.Int32
	other := serveFunc(t, func(w http.ResponseWriter, req *http.Request) {
		otherHits.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n\n"+
			"data: {\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\"}\n\n")
	})
	origin := serveFunc(t, func(w http.ResponseWriter, req *http.Request) {
		http.Redirect(w, req, other+"/run", http.StatusTemporaryRedirect)
	})
	for _, follow := range []bool{false, true} {
		r := relay.New(&aguistate.Agent{URL: origin, Header: http.Header{"Authorization": {"Bearer key"}}, FollowCrossOrigin: follow}, nil)
		base := serve(t, r)
		_, err := runThread(t, base, "r")
		if !follow {
			var he *aguistate.HTTPError
			require.ErrorAs(t, err, &he)
			assert.Equal(t, http.StatusBadGateway, he.StatusCode)
			assert.Equal(t, int32(0), otherHits.Load(), "the other origin got nothing")
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, int32(1), otherHits.Load())
	}
}

// TestRelayStoreFull runs threads on a Memory too small for them: a run
// whose record does not fit is answered 503 at once, with nothing recorded;
// a run whose later events do not fit ends at once with a RUN_ERROR of
// code CodeStoreFull, which its client and a viewer that joined it get.
// The relay used to retry the append until the run ended, which it never
// did: the POST hung.
func TestRelayStoreFull(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 2000)
	t.Run("before its first event", func(t *testing.T) {
		t.Parallel()
		a := newAgent(t, [][]byte{
			[]byte(`{"type":"RUN_STARTED","threadId":"t","runId":"r1"}`),
			[]byte(`{"type":"RUN_FINISHED","threadId":"t","runId":"r1"}`),
		})
		store := relay.NewMemory(&relay.MemoryOptions{MaxBytes: 1000})
		_, base := newRelay(t, a, relay.Options{Store: store})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c := aguistate.New(nil)
		require.NoError(t, c.AddMessages(aguistate.UserMessage(big)))
		_, err := c.RunAgent(ctx, &aguistate.Agent{URL: base + "/agent"}, &aguistate.RunOptions{ThreadID: "t", RunID: "r1"})
		var he *aguistate.HTTPError
		require.ErrorAs(t, err, &he, "the record of its input does not fit")
		assert.Equal(t, http.StatusServiceUnavailable, he.StatusCode)
		assert.Contains(t, he.Body, "the store is full")
		assert.Empty(t, logTypes(t, store, "t"), "nothing is recorded")
	})
	t.Run("during the run", func(t *testing.T) {
		t.Parallel()
		store := relay.NewMemory(&relay.MemoryOptions{MaxBytes: 1000})
		stages := make(chan []string, 1)
		agent := stagedAgent(t, []string{`{"type":"RUN_STARTED","threadId":"t","runId":"r1"}`}, stages)
		base := serve(t, relay.New(&aguistate.Agent{URL: agent}, &relay.Options{Store: store}))
		ran := make(chan error, 1)
		go func() {
			_, err := runThread(t, base, "r1")
			ran <- err
		}()
		waitFor(t, "the run's start recorded", func() bool { return len(logTypes(t, store, "t")) > 0 })
		resp, err := http.Get(base + "/threads/t/events")
		require.NoError(t, err)
		defer resp.Body.Close()
		stages <- []string{`{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}`,
			fmt.Sprintf(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":%q}`, big),
			`{"type":"TEXT_MESSAGE_END","messageId":"m"}`, `{"type":"RUN_FINISHED","threadId":"t","runId":"r1"}`}
		viewed, err := readSSE(resp.Body, "")
		require.NoError(t, err)

		var re *aguistate.RunError
		require.ErrorAs(t, <-ran, &re)
		assert.Equal(t, relay.CodeStoreFull, re.Code)
		types := logTypes(t, store, "t")
		assert.Equal(t, "RUN_STARTED", types[0])
		assert.Equal(t, "RUN_ERROR", types[len(types)-1], "the run's end is recorded")
		require.NotEmpty(t, viewed)
		assert.Contains(t, viewed[len(viewed)-1].data, relay.CodeStoreFull, "the viewer sees the run end")
	})
	t.Run("no room left for its end", func(t *testing.T) {
		t.Parallel()
		const maxBytes = 2000
		store := relay.NewMemory(&relay.MemoryOptions{MaxBytes: maxBytes})
		stages := make(chan []string, 2)
		agent := stagedAgent(t, []string{`{"type":"RUN_STARTED","threadId":"t","runId":"r1"}`,
			`{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}`}, stages)
		base := serve(t, relay.New(&aguistate.Agent{URL: agent}, &relay.Options{Store: store}))
		ran := make(chan error, 1)
		go func() {
			_, err := runThread(t, base, "r1")
			ran <- err
		}()
		waitFor(t, "the run's start recorded", func() bool { return len(logTypes(t, store, "t")) >= 2 })
		held := 0
		for e, err := range store.Read(context.Background(), "t", 0) {
			require.NoError(t, err)
			held += len(e.Event)
		}
		content := func(delta string) []string {
			return []string{fmt.Sprintf(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":%q}`, delta)}
		}
		stages <- content(strings.Repeat("x", maxBytes-held-len(content("")[0])-10)) // 10 bytes left
		time.Sleep(100 * time.Millisecond)                                           // appended alone
		stages <- content(strings.Repeat("y", 300))
		var re *aguistate.RunError
		require.ErrorAs(t, <-ran, &re, "the client gets the run's end")
		assert.Equal(t, relay.CodeStoreFull, re.Code)
		types := logTypes(t, store, "t")
		assert.Equal(t, "RUN_ERROR", types[len(types)-1], "the run's end is recorded past MaxBytes")
		status, events := get(t, base+"/threads/t/events", "")
		assert.Equal(t, http.StatusOK, status)
		require.NotEmpty(t, events, "a viewer gets the thread, not a run that never ends")
	})
}

// stagedAgent serves an agent whose run streams the events first, then each
// batch of events the test sends on stages, flushed together, until the
// relay ends the run.
func stagedAgent(t *testing.T, first []string, stages <-chan []string) string {
	return serveFunc(t, func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for batch := first; ; {
			for _, ev := range batch {
				fmt.Fprintf(w, "data: %s\n\n", ev)
			}
			w.(http.Flusher).Flush()
			select {
			case batch = <-stages:
			case <-req.Context().Done():
				return
			}
		}
	})
}
