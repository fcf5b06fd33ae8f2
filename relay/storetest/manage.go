// The relay's scenarios of managing threads and of draining, on relays that share a store.

package storetest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aguistate/aguistate"
	"github.com/aguistate/aguistate/internal/agenttest"
	"github.com/aguistate/aguistate/relay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// listThreads pages through GET /threads at base as tenant, limit threads
// a page, and returns the ids and the running flags of all pages.
func listThreads(tb testing.TB, base, tenant string, limit int) (ids []string, running []bool) {
	ids, running = []string{}, []bool{}
	for cursor, pages := "", 0; ; pages++ {
		require.Less(tb, pages, 100, "the listing ends")
		status, body := call(tb, http.MethodGet, fmt.Sprintf("%s/threads?limit=%d&cursor=%s", base, limit, url.QueryEscape(cursor)), tenant, nil)
		require.Equal(tb, http.StatusOK, status, body)
		var page struct {
			Threads []struct {
				ThreadID string
				Running  bool
			}
			Next string
		}
		require.NoError(tb, json.Unmarshal([]byte(body), &page))
		require.LessOrEqual(tb, len(page.Threads), limit)
		for _, th := range page.Threads {
			ids, running = append(ids, th.ThreadID), append(running, th.Running)
		}
		if page.Next == "" {
			return ids, running
		}
		cursor = page.Next
	}
}

// followThread has a viewer follow thread at base as tenant, and returns a
// channel closed once it has joined and one that gets Follow's error.
func followThread(tb testing.TB, base, tenant, thread string) (<-chan struct{}, <-chan error) {
	viewer := aguistate.New(nil)
	seen := joined(viewer)
	done := make(chan error, 1)
	go func() {
		a := &aguistate.Agent{Header: http.Header{"Authorization": {"Bearer " + tenant}}}
		_, err := viewer.Follow(testContext(tb), a, base+"/threads/"+thread+"/events")
		done <- err
	}()
	return seen, done
}

// joinRaw joins thread at base as tenant, and returns once the relay has
// sent its first event (200), with a channel closed when the stream ends.
func joinRaw(tb testing.TB, base, tenant, thread string) <-chan struct{} {
	req, err := http.NewRequestWithContext(testContext(tb), http.MethodGet, base+"/threads/"+thread+"/events", nil)
	require.NoError(tb, err)
	req.Header.Set("Authorization", "Bearer "+tenant)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(tb, err)
	require.Equal(tb, http.StatusOK, resp.StatusCode)
	lines := bufio.NewScanner(resp.Body)
	for lines.Scan() && !strings.HasPrefix(lines.Text(), "data:") {
	}
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		defer resp.Body.Close()
		for lines.Scan() {
		}
	}()
	return ended
}

// testRelayManage lists and deletes threads of tenant a through two
// relays on the store: GET /threads on either lists them, newest change
// first, a page at a time, with the run in progress on the other relay
// marked running, and none of tenant b's; DELETE refuses a thread whose
// run goes on (409, on the relay that runs it and on the other), answers
// 404 to another tenant, removes the thread (204) from the store and the
// listings, and ends the stream of a viewer on the other relay.
func testRelayManage(t *testing.T, h Harness) {
	s, ns := open(t, h)
	agent := agenttest.NewScript(t, script(1))
	o := relay.Options{Store: s, Authorize: tenantHook}
	a := startRelay(t, agent.URL, o)
	o.Store = h.Open(t, ns, "")
	b := startRelay(t, agent.URL, o)
	ten := s.Tenant("a")
	run := func(base, thread string) {
		status, body := call(t, http.MethodPost, base+"/agent", "a", fmt.Appendf(nil, `{"threadId":%q,"runId":"r1","messages":[]}`, thread))
		require.Equal(t, http.StatusOK, status, body)
	}
	run(a.srv.URL, "t1")
	run(b.srv.URL, "t2")
	release := agent.Hold(3)
	defer release()
	ran := make(chan int, 1)
	go func() {
		status, _ := call(t, http.MethodPost, a.srv.URL+"/agent", "a", []byte(`{"threadId":"t3","runId":"r1","messages":[]}`))
		ran <- status
	}()
	waitLog(t, ten, "t3", 3)

	for _, base := range []string{a.srv.URL, b.srv.URL} {
		ids, running := listThreads(t, base, "a", 1)
		assert.Equal(t, []string{"t3", "t2", "t1"}, ids, "newest change first, a page at a time")
		assert.Equal(t, []bool{true, false, false}, running, "t3's run goes on")
		ids, _ = listThreads(t, base, "b", 1)
		assert.Empty(t, ids, "tenant b has no thread")
	}
	for _, tc := range []struct {
		name, reason   string
		base           string
		tenant, thread string
		status         int
	}{
		{"running there", "relay a runs t3's run", b.srv.URL, "a", "t3", http.StatusConflict},
		{"running here", "", a.srv.URL, "a", "t3", http.StatusConflict},
		{"another tenant", "b has no thread t1", b.srv.URL, "b", "t1", http.StatusNotFound},
		{"deleted", "", b.srv.URL, "a", "t1", http.StatusNoContent},
		{"again", "", a.srv.URL, "a", "t1", http.StatusNotFound},
	} {
		status, body := call(t, http.MethodDelete, tc.base+"/threads/"+tc.thread, tc.tenant, nil)
		assert.Equal(t, tc.status, status, "%s: %s: %s", tc.name, tc.reason, body)
	}
	assert.Empty(t, logOf(t, ten, "t1"), "t1 is gone from the store")
	ids, _ := listThreads(t, a.srv.URL, "a", 10)
	assert.Equal(t, []string{"t3", "t2"}, ids)

	require.NoError(t, ten.Append(testContext(t), "orphan", 1, []byte(`{"type":"RUN_STARTED","threadId":"orphan","runId":"r"}`)))
	followed := joinRaw(t, b.srv.URL, "a", "orphan") // a run that no relay runs: the viewer waits for its end
	status, body := call(t, http.MethodDelete, a.srv.URL+"/threads/orphan", "a", nil)
	assert.Equal(t, http.StatusNoContent, status, body)
	select {
	case <-followed:
	case <-time.After(5 * time.Second): // before the other relay would end the run (LeaseTTL, 10 s)
		t.Fatal("the viewer of the deleted thread on the other relay goes on")
	}

	release()
	require.Equal(t, http.StatusOK, <-ran)
	status, body = call(t, http.MethodDelete, b.srv.URL+"/threads/t3", "a", nil)
	assert.Equal(t, http.StatusNoContent, status, "once its run has ended: %s", body)
	ids, _ = listThreads(t, b.srv.URL, "a", 10)
	assert.Equal(t, []string{"t2"}, ids)
}

// testRelayDrain shuts relay A down during a run, with a viewer of the run
// on relay B: A answers new runs and /healthz with 503 while B serves; the
// run goes on to its end, which its client and the viewer get, and
// Shutdown returns nil.
func testRelayDrain(t *testing.T, h Harness) {
	s, ns := open(t, h)
	agent := agenttest.NewScript(t, script(1))
	release := agent.Hold(3)
	defer release()
	a := newRelayServer(t, agent.URL, s, true)
	b := newRelayServer(t, agent.URL, h.Open(t, ns, ""), true)
	c, ag := client(t, a.srv.URL, "t")
	ran := make(chan error, 1)
	go func() {
		res, err := c.RunAgent(testContext(t), ag, &aguistate.RunOptions{RunID: "r1"})
		if err == nil && res.Outcome != "success" {
			err = fmt.Errorf("outcome %q", res.Outcome)
		}
		ran <- err
	}()
	waitLog(t, s, "t", 3)
	seen, followed := followThread(t, b.srv.URL, "", "t")
	<-seen

	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		shut <- a.Shutdown(ctx)
	}()
	health := func(base string) int {
		status, _ := call(t, http.MethodGet, base+"/healthz", "", nil)
		return status
	}
	waitFor(t, "relay A drains", func() bool { return health(a.srv.URL) == http.StatusServiceUnavailable })
	assert.Equal(t, http.StatusOK, health(b.srv.URL), "relay B serves")
	status, body := call(t, http.MethodPost, a.srv.URL+"/agent", "", []byte(`{"threadId":"new","runId":"r1","messages":[]}`))
	assert.Equal(t, http.StatusServiceUnavailable, status, "a new run on A: %s", body)

	release()
	require.NoError(t, <-ran, "the run ends")
	require.NoError(t, <-followed, "the viewer on B gets the run's end")
	select {
	case err := <-shut:
		assert.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("Shutdown did not return once the run had ended")
	}
	log := logOf(t, s, "t")
	assert.Contains(t, string(log[len(log)-1].Event), `"RUN_FINISHED"`)
}
