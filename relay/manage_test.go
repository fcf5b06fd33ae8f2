// Tests of managing threads: GET /threads (paging, tenants, bad requests) and DELETE
// /threads/{threadId} (what it removes, what it refuses, the streams it ends).

package relay_test

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"net/url"
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

// tenantHook is an Authorize hook that grants "Bearer TENANT" the tenant
// TENANT, refuses "Bearer bad" with ErrForbidden and a request without a
// token with ErrUnauthenticated, and records what it is asked.
func tenantHook(h *recorder) relay.Authorize {
	return func(req *http.Request, action relay.Action, thread string) (relay.Grant, error) {
		g, err := h.authorize(req, action, thread)
		if err != nil {
			return g, err
		}
		return relay.Grant{Tenant: req.Header.Get("X-Tenant")}, nil
	}
}

// listing is the answer of GET /threads.
type listing struct {
	Threads []struct {
		ThreadID  string `json:"threadId"`
		UpdatedAt string `json:"updatedAt"`
		Running   bool   `json:"running"`
		LastRunID string `json:"lastRunId"`
		Events    int64  `json:"events"`
	} `json:"threads"`
	Next *string `json:"next"`
}

// ids returns the thread ids of a listing.
func (l listing) ids() []string {
	ids := []string{}
	for _, th := range l.Threads {
		ids = append(ids, th.ThreadID)
	}
	return ids
}

// listAll pages through GET /threads at base with limit as tenant, and
// returns the ids of all pages and the number of pages.
func listAll(t *testing.T, base, tenant string, limit int) ([]string, int) {
	t.Helper()
	all, pages := []string{}, 0
	for cursor := ""; ; {
		status, _, body := send(t, http.MethodGet, fmt.Sprintf("%s/threads?limit=%d&cursor=%s", base, limit, url.QueryEscape(cursor)),
			"Bearer good", nil, "X-Tenant", tenant)
		require.Equal(t, http.StatusOK, status, body)
		var l listing
		require.NoError(t, json.Unmarshal([]byte(body), &l))
		all, pages = append(all, l.ids()...), pages+1
		require.Less(t, pages, 100, "the listing ends")
		if l.Next == nil {
			return all, pages
		}
		require.NotEmpty(t, *l.Next, "next is absent, not empty, after the last page")
		cursor = *l.Next
	}
}

// TestRelayListThreads lists a tenant's threads newest change first, a page
// at a time, with the fields of each; another tenant's are not listed; a
// bad limit or cursor is 400; the hook is asked with ActionList.
func TestRelayListThreads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := relay.NewMemory(nil)
	a := store.Tenant("a")
	for i := range 5 {
		require.NoError(t, a.Append(ctx, fmt.Sprint("t", i), 1, []byte(`{"type":"CUSTOM","name":"x","value":1}`)))
	}
	require.NoError(t, a.Append(ctx, "t1", 2, []byte(`{"type":"CUSTOM","name":"x","value":2}`)), "t1 changes last")
	require.NoError(t, a.Lease(ctx, "t3", "another relay", "run-3", time.Minute))
	require.NoError(t, store.Tenant("b").Append(ctx, "b0", 1, []byte(`{"type":"CUSTOM","name":"x","value":1}`)))
	h := &recorder{}
	_, base := newRelay(t, newAgent(t, nil), relay.Options{Store: store, Authorize: tenantHook(h)})

	for _, tc := range []struct {
		name, reason string
		tenant       string
		limit        int
		want         []string
		pages        int
	}{
		{"pages of 2", "a cursor across pages, newest change first", "a", 2, []string{"t1", "t4", "t3", "t2", "t0"}, 3},
		{"one page", "", "a", 5, []string{"t1", "t4", "t3", "t2", "t0"}, 1},
		{"past the bound", "a limit past MaxThreadsPage is taken as it", "a", relay.MaxThreadsPage + 1, []string{"t1", "t4", "t3", "t2", "t0"}, 1},
		{"another tenant", "tenant b sees its own thread alone", "b", 2, []string{"b0"}, 1},
		{"no threads", "a tenant without threads gets an empty list", "c", 2, []string{}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, pages := listAll(t, base, tc.tenant, tc.limit)
			assert.Equal(t, tc.want, got, tc.reason)
			assert.Equal(t, tc.pages, pages, tc.reason)
		})
	}

	status, header, body := send(t, http.MethodGet, base+"/threads", "Bearer good", nil, "X-Tenant", "a")
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, "no-store", header.Get("Cache-Control"))
	var l listing
	require.NoError(t, json.Unmarshal([]byte(body), &l))
	require.Len(t, l.Threads, 5, "the default limit is 100")
	assert.Nil(t, l.Next)
	th := l.Threads[0]
	assert.Equal(t, "t1", th.ThreadID)
	assert.Equal(t, int64(2), th.Events)
	assert.False(t, th.Running)
	assert.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`, th.UpdatedAt, "RFC 3339 in UTC with milliseconds, whatever the store's clock keeps")
	updated, err := time.Parse(time.RFC3339, th.UpdatedAt)
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now(), updated, time.Minute)
	th = l.Threads[2]
	assert.Equal(t, "t3", th.ThreadID)
	assert.True(t, th.Running, "another relay holds its lease")
	assert.Equal(t, "run-3", th.LastRunID)
	status, header, body = send(t, http.MethodGet, base+"/threads/t1", "Bearer good", nil, "X-Tenant", "a")
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, "no-store", header.Get("Cache-Control"), "a thread's state changes with its next run")

	h.take()
	for _, tc := range []struct {
		name, auth, query string
		status            int
	}{
		{"bad cursor", "Bearer good", "?cursor=%21%21", http.StatusBadRequest},
		{"limit 0", "Bearer good", "?limit=0", http.StatusBadRequest},
		{"limit not a number", "Bearer good", "?limit=ten", http.StatusBadRequest},
		{"unauthenticated", "", "", http.StatusUnauthorized},
		{"forbidden", "Bearer bad", "", http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, _, body := send(t, http.MethodGet, base+"/threads"+tc.query, tc.auth, nil, "X-Tenant", "a")
			assert.Equal(t, tc.status, status, body)
			assert.Equal(t, []asked{{relay.ActionList, ""}}, h.take(), "the hook is asked first")
		})
	}
}

// TestRelayDeleteThread deletes threads through DELETE /threads/{threadId}:
// 204 removes the thread from the store and the listing; 404 for a thread
// without events and for another tenant's; 409 while a run is in progress
// on this relay or another (which holds the lease); a run that nobody runs
// does not hold its thread; the hook refuses with 401 and 403, and the
// thread stays.
func TestRelayDeleteThread(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	started := []byte(`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`)
	finished := []byte(`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`)
	a := agenttest.NewScript(t, agenttest.Echo([][]byte{started, []byte(`{"type":"STATE_SNAPSHOT","snapshot":{}}`), finished}))
	release := a.Hold(1)
	defer release()
	store := relay.NewMemory(nil)
	h := &recorder{}
	_, base := newRelay(t, a, relay.Options{Store: store, Authorize: tenantHook(h)})
	running := openSSE(t, http.MethodPost, base+"/agent", []byte(`{"threadId":"running","runId":"r","messages":[]}`), "", 1,
		"Authorization", "Bearer good")
	<-running.first

	ten := store.Tenant("a")
	for _, id := range []string{"done", "other-tenant", "leased", "orphan", "refused", "forbidden"} {
		require.NoError(t, ten.Append(ctx, id, 1, started))
		if id != "orphan" {
			require.NoError(t, ten.Append(ctx, id, 2, finished))
		}
	}
	require.NoError(t, ten.Lease(ctx, "leased", "another relay", "r", time.Minute))

	for _, tc := range []struct {
		name, reason string
		auth, tenant string
		thread       string
		owner        relay.Store // the store of the thread's tenant
		status       int
		kept         bool
	}{
		{"deleted", "a thread with no run in progress", "Bearer good", "a", "done", ten, http.StatusNoContent, false},
		{"again", "a thread deleted is not found", "Bearer good", "a", "done", ten, http.StatusNotFound, false},
		{"unknown", "a thread without events", "Bearer good", "a", "nope", ten, http.StatusNotFound, false},
		{"another tenant's", "as for a thread that does not exist", "Bearer good", "b", "other-tenant", ten, http.StatusNotFound, true},
		{"running here", "this relay runs its run", "Bearer good", "", "running", store, http.StatusConflict, true},
		{"running elsewhere", "another relay holds its lease", "Bearer good", "a", "leased", ten, http.StatusConflict, true},
		{"orphan", "a run that nobody runs (no lease) is no run in progress", "Bearer good", "a", "orphan", ten, http.StatusNoContent, false},
		{"unauthenticated", "no token", "", "a", "refused", ten, http.StatusUnauthorized, true},
		{"forbidden", "the hook refuses", "Bearer bad", "a", "forbidden", ten, http.StatusForbidden, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h.take()
			status, _, body := send(t, http.MethodDelete, base+"/threads/"+tc.thread, tc.auth, nil, "X-Tenant", tc.tenant)
			assert.Equal(t, tc.status, status, "%s: %s", tc.reason, body)
			assert.Equal(t, []asked{{relay.ActionDelete, tc.thread}}, h.take(), "the hook is asked first")
			assert.Equal(t, tc.kept, has(t, tc.owner, tc.thread), "%s: the store holds the thread", tc.reason)
		})
	}
	got, _ := listAll(t, base, "a", 10)
	assert.ElementsMatch(t, []string{"other-tenant", "leased", "refused", "forbidden"}, got, "the deleted threads are not listed")
	assert.True(t, has(t, store, "running"), "the run goes on")
	release()
	events := running.wait(t)
	assert.Equal(t, "RUN_FINISHED", typesOf(t, dataOf(events))[len(events)-1])
	status, _, body := send(t, http.MethodDelete, base+"/threads/running", "Bearer good", nil)
	assert.Equal(t, http.StatusNoContent, status, "once the run has ended: %s", body)
	assert.False(t, has(t, store, "running"))
}

// TestRelayDeleteEndsViewers deletes a thread that viewers follow, on the
// relay that serves them and on another relay of the store: their streams
// end, on the relay that deletes it without a warning (its streams do not
// find their place in the log lost: they know the thread is gone), and the
// thread starts again at position 1 with its next run.
func TestRelayDeleteEndsViewers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	started := []byte(`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`)
	store := relay.NewMemory(nil)
	require.NoError(t, store.Append(ctx, "t", 1, started), "a run nobody runs: viewers follow it")
	a := newAgent(t, [][]byte{started, []byte(`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`)})
	var log logBuffer
	_, here := newRelay(t, a, relay.Options{Store: store, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	_, there := newRelay(t, a, relay.Options{Store: store})
	var viewers []*sseStream
	for _, base := range []string{here, here, there} {
		v := openSSE(t, http.MethodGet, base+"/threads/t/events", nil, "", 1)
		<-v.first
		viewers = append(viewers, v)
	}
	status, _, body := send(t, http.MethodDelete, here+"/threads/t", "", nil)
	require.Equal(t, http.StatusNoContent, status, body)
	for i, v := range viewers {
		assert.NotEmpty(t, v.wait(t), "viewer %d: the prelude, then the end", i)
	}
	assert.Empty(t, log.String(), "the relay that deleted the thread warns of nothing")
	status, events := post(t, here, []byte(`{"threadId":"t","runId":"r2","messages":[]}`))
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, "1", events[0].id, "the thread starts again at position 1")
	status, _ = getThread(t, there, "t")
	assert.Equal(t, http.StatusOK, status, "another relay serves the new thread")
}

// gatedRead is a store whose first Read (Follow, when follow) after
// position after waits, once reached is closed, until open is closed.
type gatedRead struct {
	relay.Store
	after   int64
	follow  bool
	once    sync.Once
	reached chan struct{}
	open    chan struct{}
}

func newGatedRead(after int64, follow bool) *gatedRead {
	return &gatedRead{Store: relay.NewMemory(nil), after: after, follow: follow, reached: make(chan struct{}), open: make(chan struct{})}
}

func (g *gatedRead) gate(follow bool, after int64) {
	if follow == g.follow && after == g.after {
		g.once.Do(func() {
			close(g.reached)
			<-g.open
		})
	}
}

func (g *gatedRead) Read(ctx context.Context, thread string, after int64) iter.Seq2[relay.Entry, error] {
	g.gate(false, after)
	return g.Store.Read(ctx, thread, after)
}

func (g *gatedRead) Follow(ctx context.Context, thread string, after int64) iter.Seq2[relay.Entry, error] {
	g.gate(true, after)
	return g.Store.Follow(ctx, thread, after)
}

// deleteAndRunAgain appends a run of thread t ("old") of n events to
// store, and returns a relay in front of store whose agent runs it again
// ("new") with 4 events, and a function that deletes t through the relay
// and runs it again.
func deleteAndRunAgain(t *testing.T, store relay.Store, n int) (base string, again func()) {
	ctx := context.Background()
	old := []string{`{"type":"RUN_STARTED","threadId":"t","runId":"old"}`}
	for len(old) < n-1 {
		old = append(old, `{"type":"STATE_SNAPSHOT","snapshot":{"thread":"old"}}`)
	}
	old = append(old, `{"type":"RUN_FINISHED","threadId":"t","runId":"old"}`)
	for i, ev := range old {
		require.NoError(t, store.Append(ctx, "t", int64(i+1), []byte(ev)))
	}
	a := newAgent(t, [][]byte{[]byte(`{"type":"RUN_STARTED","threadId":"t","runId":"new"}`),
		[]byte(`{"type":"STATE_SNAPSHOT","snapshot":{"thread":"new"}}`), []byte(`{"type":"STATE_SNAPSHOT","snapshot":{"thread":"new!"}}`),
		[]byte(`{"type":"RUN_FINISHED","threadId":"t","runId":"new"}`)})
	_, base = newRelay(t, a, relay.Options{Store: store})
	return base, func() {
		status, _, body := send(t, http.MethodDelete, base+"/threads/t", "", nil)
		require.Equal(t, http.StatusNoContent, status, body)
		status, _ = post(t, base, []byte(`{"threadId":"t","runId":"new","messages":[]}`))
		require.Equal(t, http.StatusOK, status)
	}
}

// TestRelayDeleteDuringJoin deletes a thread, and runs it again, while a
// viewer that joined it by Last-Event-ID is about to read the log after its
// position: the viewer's stream ends without an event of the new thread,
// which is not the one it joined (its positions past the viewer's would
// read as the old thread's next events).
func TestRelayDeleteDuringJoin(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, reason string
		events       int    // of the old thread
		lastID       string // the viewer's
		follow       bool
	}{
		{"catch-up", "the read after Last-Event-ID finds the new log longer", 3, "1", false},
		{"past the end", "the read after Last-Event-ID finds the new log shorter: the viewer gets no prelude of it", 6, "5", false},
		{"follow=thread", "the follower waits for the next run after the old one's end", 3, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// The viewer reads the log after lastID as it joins; the follower
			// waits for the log to grow past 3, the end of the run it got.
			store := newGatedRead(3, true)
			if !tc.follow {
				after, _ := strconv.ParseInt(tc.lastID, 10, 64)
				store = newGatedRead(after, false)
			}
			base, again := deleteAndRunAgain(t, store, tc.events)
			url, lastID := base+"/threads/t/events", tc.lastID
			if tc.follow {
				url += "?follow=thread"
			}
			req, err := http.NewRequestWithContext(testContext(t), http.MethodGet, url, nil)
			require.NoError(t, err)
			if lastID != "" {
				req.Header.Set("Last-Event-ID", lastID)
			}
			viewer := make(chan []sseEvent, 1)
			go func() {
				var events []sseEvent
				defer func() { viewer <- events }()
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					return
				}
				defer resp.Body.Close()
				f := framing.Fields{LastEventID: lastID}
				for data, err := range framing.ReadFields(resp.Body, framing.SSE, 0, 0, &f) {
					if err != nil {
						return
					}
					events = append(events, sseEvent{f.LastEventID, string(data)})
					if strings.Contains(string(data), "new") { // the new thread's: enough
						return
					}
				}
			}()
			<-store.reached
			again()
			close(store.open)
			for _, e := range <-viewer {
				assert.NotContains(t, e.data, "new", "%s: event %s: the viewer of the deleted thread gets an event of the new one", tc.reason, e.id)
			}
		})
	}
}
