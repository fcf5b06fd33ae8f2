// Tests of Shutdown (new runs refused, runs in progress let end, viewers of other runs sent
// away) and of GET /healthz.

package relay_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/aguistate/aguistate/relay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// health returns the status and body of GET /healthz at base, with no
// token.
func health(t *testing.T, base string) (int, string) {
	t.Helper()
	status, _, body := send(t, http.MethodGet, base+"/healthz", "", nil)
	return status, body
}

// TestRelayShutdown shuts a relay down during a run: at once a new run
// gets 503 with Retry-After and /healthz 503, and a viewer of a run that
// the relay does not run is sent away; the run goes on, and its client
// and viewer get its last events (when it ends before ctx), or the relay
// ends it with AGUISTATE_RELAY_STOPPED once ctx ends, and Shutdown returns
// ctx's error.
func TestRelayShutdown(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, reason string
		wait         time.Duration // Shutdown's ctx
		release      bool          // the agent ends the run during the drain
		err          error
		last         string
	}{
		{"runs end", "the run ends before ctx", time.Minute, true, nil, `{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`},
		{"deadline", "ctx ends first", 200 * time.Millisecond, false, context.DeadlineExceeded,
			`{"type":"RUN_ERROR","message":"the relay stopped before the run ended","code":"AGUISTATE_RELAY_STOPPED"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			a := newAgent(t, [][]byte{
				[]byte(`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`),
				[]byte(`{"type":"STATE_SNAPSHOT","snapshot":{"step":1}}`),
				[]byte(`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`),
			})
			release := a.Hold(2)
			defer release()
			store := relay.NewMemory(nil)
			require.NoError(t, store.Append(ctx, "elsewhere", 1, []byte(`{"type":"RUN_STARTED","threadId":"elsewhere","runId":"r"}`)))
			require.NoError(t, store.Lease(ctx, "elsewhere", "another relay", "r", time.Minute))
			r, base := newRelay(t, a, relay.Options{Store: store})
			status, _ := health(t, base)
			require.Equal(t, http.StatusOK, status)

			client := openSSE(t, http.MethodPost, base+"/agent", []byte(`{"threadId":"t","runId":"r","messages":[]}`), "", 2)
			<-client.first
			viewer := openSSE(t, http.MethodGet, base+"/threads/t/events", nil, "", 2)
			<-viewer.first
			away := openSSE(t, http.MethodGet, base+"/threads/elsewhere/events", nil, "", 1)
			<-away.first

			shut := make(chan error, 1)
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), tc.wait)
				defer cancel()
				shut <- r.Shutdown(ctx)
			}()
			waitFor(t, "/healthz says the relay drains", func() bool {
				status, body := health(t, base)
				return status == http.StatusServiceUnavailable && body == "draining\n"
			})
			status, header, body := send(t, http.MethodPost, base+"/agent", "", []byte(`{"threadId":"n","runId":"r","messages":[]}`))
			assert.Equal(t, http.StatusServiceUnavailable, status, "a new run: %s", body)
			assert.Equal(t, "1", header.Get("Retry-After"))
			status, _, body = send(t, http.MethodGet, base+"/threads", "", nil)
			assert.Equal(t, http.StatusOK, status, "the relay lists threads while it drains: %s", body)
			sent := away.wait(t) // before the run ends, or the test fails
			assert.Equal(t, "1", sent[len(sent)-1].id, "a viewer of a run that another relay runs is sent away after its prelude")
			select {
			case err := <-shut:
				t.Fatalf("Shutdown returned %v during the run", err)
			case <-time.After(50 * time.Millisecond):
			}

			if tc.release {
				release()
			}
			select {
			case err := <-shut:
				assert.Equal(t, tc.err, err, tc.reason)
			case <-time.After(time.Minute):
				t.Fatal("Shutdown did not return")
			}
			for name, s := range map[string]*sseStream{"the run's client": client, "its viewer": viewer} {
				events := s.wait(t)
				require.NotEmpty(t, events)
				assert.JSONEq(t, tc.last, events[len(events)-1].data, "%s gets the run's end: %s", name, tc.reason)
			}
			assert.Equal(t, 1, len(a.Inputs()), "the new run never reached the agent")
			status, body = health(t, base)
			assert.Equal(t, http.StatusServiceUnavailable, status)
			assert.Equal(t, "closed\n", body)
			status, _, _ = send(t, http.MethodGet, base+"/threads", "", nil)
			assert.Equal(t, http.StatusServiceUnavailable, status, "a closed relay lists nothing")
		})
	}
}

// failingList is a store whose listing fails, as a store that does not
// answer does.
type failingList struct{ relay.Store }

func (failingList) Threads(context.Context, string, int) ([]relay.ThreadInfo, string, error) {
	return nil, "", errors.New("dial tcp 10.1.2.3:6379: connection refused")
}

// TestRelayHealth checks GET /healthz: 200 while the relay serves and its
// store answers, 503 when the store fails and once closed; the Authorize
// hook is never asked, and a refused token changes nothing.
func TestRelayHealth(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, reason string
		store        relay.Store
		close        bool
		status       int
		body         string
	}{
		{"serving", "the store answers", relay.NewMemory(nil), false, http.StatusOK, "ok\n"},
		{"store down", "the store's listing fails; its error goes to the log alone", failingList{relay.NewMemory(nil)}, false,
			http.StatusServiceUnavailable, "the store failed\n"},
		{"closed", "a closed relay serves nothing", relay.NewMemory(nil), true, http.StatusServiceUnavailable, "closed\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := &recorder{}
			r, base := newRelay(t, newAgent(t, nil), relay.Options{Store: tc.store, Authorize: h.authorize})
			if tc.close {
				require.NoError(t, r.Close())
			}
			for _, auth := range []string{"", "Bearer bad"} {
				status, header, body := send(t, http.MethodGet, base+"/healthz", auth, nil)
				assert.Equal(t, tc.status, status, tc.reason)
				assert.Equal(t, tc.body, body, tc.reason)
				assert.Equal(t, "no-store", header.Get("Cache-Control"))
			}
			assert.Empty(t, h.take(), "the hook is not asked")
		})
	}
}
