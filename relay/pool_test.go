// Tests of the hub's pooled subscription channels: viewers of many threads and tenants that
// come and go, each getting only its own thread's events.

package relay_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aguistate/aguistate/internal/agenttest"
	"github.com/aguistate/aguistate/internal/framing"
	"github.com/aguistate/aguistate/relay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// taggedRun is an agent's script whose events each name the run (its
// input's runId, which names the tenant and the thread too).
func taggedRun(input []byte) [][]byte {
	var in struct{ ThreadID, RunID string }
	_ = json.Unmarshal(input, &in)
	ids := fmt.Sprintf(`"threadId":%q,"runId":%q`, in.ThreadID, in.RunID)
	events := [][]byte{[]byte(`{"type":"RUN_STARTED",` + ids + `}`)}
	for i := range 30 {
		events = append(events, fmt.Appendf(nil, `{"type":"STATE_SNAPSHOT","snapshot":{"run":%q,"i":%d}}`, in.RunID, i))
	}
	return append(events, []byte(`{"type":"RUN_FINISHED",`+ids+`}`))
}

// TestRelaySubChannelsShared runs threads of two tenants at once (the same
// thread ids in each) while viewers of each join and leave, many of them
// mid-run (their subscription's channel goes back to the pool, for the
// next join of any thread): every event a viewer gets with an id is its
// own thread's log entry at that position.
func TestRelaySubChannelsShared(t *testing.T) {
	t.Parallel()
	a := agenttest.NewScript(t, taggedRun)
	a.Pace(time.Millisecond)
	store := relay.NewMemory(nil)
	hook := func(req *http.Request, _ relay.Action, _ string) (relay.Grant, error) {
		return relay.Grant{Tenant: req.Header.Get("X-Tenant")}, nil
	}
	_, base := newRelay(t, a, relay.Options{Store: store, Authorize: hook, ViewerBuffer: 100})

	type got struct {
		tenant, thread string
		events         []sseEvent
	}
	var mu sync.Mutex
	var all []got
	var wg sync.WaitGroup
	for _, tenant := range []string{"a", "b"} {
		for _, thread := range []string{"t1", "t2"} {
			wg.Go(func() {
				for run := range 2 {
					input := fmt.Sprintf(`{"threadId":%q,"runId":"%s-%s-%d","messages":[]}`, thread, tenant, thread, run)
					req, _ := http.NewRequest(http.MethodPost, base+"/agent", strings.NewReader(input))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("X-Tenant", tenant)
					resp, err := http.DefaultClient.Do(req)
					if !assert.NoError(t, err) {
						return
					}
					var vg sync.WaitGroup
					for v := range 12 {
						vg.Go(func() {
							events := view(t, base+"/threads/"+thread+"/events", tenant, 2+v%4*(v%2)) // half of them leave early
							mu.Lock()
							all = append(all, got{tenant, thread, events})
							mu.Unlock()
						})
						time.Sleep(time.Millisecond) // joins spread over the run
					}
					events, err := readSSE(resp.Body, "")
					resp.Body.Close()
					assert.NoError(t, err)
					vg.Wait()
					mu.Lock()
					all = append(all, got{tenant, thread, events})
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	checked := 0
	for _, g := range all {
		log := map[string]string{}
		for e, err := range store.Tenant(g.tenant).Read(context.Background(), g.thread, 0) {
			require.NoError(t, err)
			log[strconv.FormatInt(e.Pos, 10)] = string(e.Event)
		}
		events := g.events
		if len(events) > 0 && events[0].id == "" { // a prelude, whose last event has the id of the join position
			for len(events) > 0 && events[0].id == "" {
				events = events[1:]
			}
			if len(events) > 0 {
				events = events[1:]
			}
		}
		for _, e := range events {
			checked++
			assert.Equal(t, log[e.id], e.data, "tenant %s thread %s: the event at %s", g.tenant, g.thread, e.id)
		}
	}
	t.Logf("%d streams, %d events checked", len(all), checked)
}

// view joins the thread at url as tenant, and returns its events: all of
// them when n is 2, else the first n (the viewer leaves then).
func view(t *testing.T, url, tenant string, n int) []sseEvent {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("X-Tenant", tenant)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil
	}
	defer resp.Body.Close()
	var events []sseEvent
	f := framing.Fields{}
	for data, err := range framing.ReadFields(resp.Body, framing.SSE, 0, 0, &f) {
		if err != nil {
			break
		}
		events = append(events, sseEvent{f.LastEventID, string(data)})
		if n != 2 && len(events) == n {
			break
		}
	}
	return events
}
