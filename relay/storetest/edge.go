// Conformance tests of the relay's edge on a store: a run that races another's end, runs back
// to back, an agent that hangs, tenants, a stop across relays.

package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aguistate/aguistate"
	"github.com/aguistate/aguistate/internal/agenttest"
	"github.com/aguistate/aguistate/relay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gatedLease is a store whose first Lease waits until gate is closed,
// after it has closed entered.
type gatedLease struct {
	relay.Store
	once          sync.Once
	entered, gate chan struct{}
}

func (s *gatedLease) Lease(ctx context.Context, thread, holder, run string, ttl time.Duration) error {
	s.once.Do(func() {
		close(s.entered)
		<-s.gate
	})
	return s.Store.Lease(ctx, thread, holder, run, ttl)
}

// testRelayRunRace starts a run on relay B while relay A ends the thread's
// run: B read the thread while A's run went on, and takes the lease once A
// has ended it and let it go. B reads the log again and runs its run; it
// used to take A's run for one nobody ran, and answer 503 (a position
// conflict) when it tried to end it.
func testRelayRunRace(t *testing.T, h Harness) {
	s, ns := open(t, h)
	agent := agenttest.NewScript(t, script(2))
	release := agent.Hold(3)
	defer release()
	a := newRelayServer(t, agent.URL, s, true)
	gated := &gatedLease{Store: h.Open(t, ns, ""), entered: make(chan struct{}), gate: make(chan struct{})}
	b := newRelayServer(t, agent.URL, gated, true)

	first, firstAgent := client(t, a.srv.URL, "t")
	ranFirst := make(chan error, 1)
	go func() {
		_, err := first.RunAgent(testContext(t), firstAgent, &aguistate.RunOptions{RunID: "r1"})
		ranFirst <- err
	}()
	waitLog(t, s, "t", 3) // A's run is in progress

	second, secondAgent := client(t, b.srv.URL, "t")
	ranSecond := make(chan error, 1)
	go func() {
		_, err := second.RunAgent(testContext(t), secondAgent, &aguistate.RunOptions{RunID: "r2"})
		ranSecond <- err
	}()
	<-gated.entered // B has read the thread, A's run in progress, and asks for the lease
	release()
	require.NoError(t, <-ranFirst)
	close(gated.gate)
	require.NoError(t, <-ranSecond, "B runs its run")
	log := logOf(t, s, "t")
	assert.Equal(t, []string{"r1", "r2"}, runsOf(t, log))
	for _, e := range log {
		assert.NotContains(t, string(e.Event), "RUN_ERROR", "no run was taken for a lost one")
	}
}

// testRelayIdle runs a thread whose agent sends RUN_STARTED and then
// nothing: the relay ends the run after its IdleTimeout with a RUN_ERROR
// of code CodeIdleTimeout, and lets the thread go, so that a new run of it
// starts on another relay at once. The thread used to stay leased for as
// long as the agent hung, and every new run got 409.
func testRelayIdle(t *testing.T, h Harness) {
	s, ns := open(t, h)
	agent := agenttest.NewScript(t, script(1))
	release := agent.Hold(1)
	defer release()
	a := startRelay(t, agent.URL, relay.Options{Store: s, IdleTimeout: 300 * time.Millisecond, LeaseTTL: time.Minute})
	c, ag := client(t, a.srv.URL, "t")
	ctx, cancel := context.WithTimeout(testContext(t), 20*time.Second)
	defer cancel()
	_, err := c.RunAgent(ctx, ag, &aguistate.RunOptions{RunID: "r1"})
	var re *aguistate.RunError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, relay.CodeIdleTimeout, re.Code)

	release()
	b := newRelayServer(t, agent.URL, h.Open(t, ns, ""), true)
	c, ag = client(t, b.srv.URL, "t")
	res, err := c.RunAgent(ctx, ag, &aguistate.RunOptions{RunID: "r2"})
	require.NoError(t, err, "the thread is free: its lease was let go")
	assert.Equal(t, "success", res.Outcome)
	assert.Equal(t, []string{"r1", "r2"}, runsOf(t, logOf(t, s, "t")))
}

// tenantHook is an Authorize hook that names the tenant of each request
// by its bearer token: "Bearer a" is tenant "a", and so on.
func tenantHook(req *http.Request, _ relay.Action, _ string) (relay.Grant, error) {
	token, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return relay.Grant{}, relay.ErrUnauthenticated
	}
	return relay.Grant{Tenant: token}, nil
}

// call sends method url as tenant with body, and returns the status and
// the body.
func call(tb testing.TB, method, url, tenant string, body []byte, header ...string) (int, string) {
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	require.NoError(tb, err)
	req.Header.Set("Authorization", "Bearer "+tenant)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(tb, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// testRelayTenants runs thread "t1" of tenant a on one relay, and has
// tenant b try every route on it through another relay: b can neither
// read, join nor stop a's thread (404, as for a thread that does not
// exist), and a POST of b with a's run id and a Last-Event-ID runs b's own
// "t1", which the store keeps apart from a's.
func testRelayTenants(t *testing.T, h Harness) {
	s, ns := open(t, h)
	agent := agenttest.NewScript(t, script(1))
	release := agent.Hold(3)
	defer release()
	o := relay.Options{Store: s, Authorize: tenantHook, LeaseTTL: 500 * time.Millisecond}
	a := startRelay(t, agent.URL, o)
	o.Store = h.Open(t, ns, "")
	b := startRelay(t, agent.URL, o)

	c, ag := client(t, a.srv.URL, "t1")
	ag.Header = http.Header{"Authorization": {"Bearer a"}}
	ran := make(chan error, 1)
	go func() {
		_, err := c.RunAgent(testContext(t), ag, &aguistate.RunOptions{RunID: "r1"})
		ran <- err
	}()
	waitLog(t, s.Tenant("a"), "t1", 3) // a's run is in progress
	for _, base := range []string{a.srv.URL, b.srv.URL} {
		for _, rt := range []struct{ method, path string }{
			{http.MethodGet, "/threads/t1"}, {http.MethodGet, "/threads/t1/events"}, {http.MethodPost, "/threads/t1/stop"},
		} {
			status, body := call(t, rt.method, base+rt.path, "b", nil)
			assert.Equal(t, http.StatusNotFound, status, "%s %s as b: %s", rt.method, rt.path, body)
		}
	}
	posted := make(chan int, 1)
	go func() { // its lease is free while a's is held
		status, _ := call(t, http.MethodPost, b.srv.URL+"/agent", "b", []byte(`{"threadId":"t1","runId":"r1","messages":[]}`),
			"Last-Event-ID", "2")
		posted <- status
	}()
	waitLog(t, s.Tenant("b"), "t1", 3)
	release()
	require.NoError(t, <-ran)
	require.Equal(t, http.StatusOK, <-posted, "b runs a thread t1 of its own")
	assert.Equal(t, []string{"r1"}, runsOf(t, logOf(t, s.Tenant("a"), "t1")), "a's thread holds a's run")
	assert.Equal(t, []string{"r1"}, runsOf(t, logOf(t, s.Tenant("b"), "t1")), "b's thread holds b's run")
	assert.Empty(t, logOf(t, s, "t1"), "nothing in the store's own tenant")
	status, body := call(t, http.MethodGet, b.srv.URL+"/threads/t1", "a", nil)
	assert.Equal(t, http.StatusOK, status, "a reads its thread on any relay: %s", body)
	assert.Contains(t, body, "m-r1")
}

// testRelayStop stops, through relay B, a run that relay A runs: the stop
// reaches A through the store at A's next lease renewal, A cancels its
// request to the agent and ends the run with RUN_FINISHED, outcome
// "cancelled", which A's client gets. A second stop answers 409.
func testRelayStop(t *testing.T, h Harness) {
	s, ns := open(t, h)
	agent := agenttest.NewScript(t, script(1))
	release := agent.Hold(3)
	defer release()
	a := newRelayServer(t, agent.URL, s, true)
	b := newRelayServer(t, agent.URL, h.Open(t, ns, ""), true)
	c, ag := client(t, a.srv.URL, "t")
	ran := make(chan aguistate.RunResult, 1)
	go func() {
		res, err := c.RunAgent(testContext(t), ag, &aguistate.RunOptions{RunID: "r1"})
		assert.NoError(t, err)
		ran <- res
	}()
	waitLog(t, s, "t", 3)
	require.NoError(t, relay.Stop(testContext(t), &aguistate.Agent{URL: b.srv.URL + "/agent"}, "t"))
	select {
	case res := <-ran:
		assert.Equal(t, "cancelled", res.Outcome)
	case <-time.After(20 * time.Second):
		t.Fatal("the run did not stop")
	}
	log := logOf(t, s, "t")
	assert.JSONEq(t, `{"type":"RUN_FINISHED","threadId":"t","runId":"r1","outcome":{"type":"cancelled"}}`, string(log[len(log)-1].Event))
	waitFor(t, "the agent's request is cancelled", func() bool { return agent.Gone() == 1 })
	assert.ErrorIs(t, relay.Stop(testContext(t), &aguistate.Agent{URL: b.srv.URL + "/agent"}, "t"), relay.ErrNotRunning)
}

// lostRelease is a store whose Release fails without letting the lease
// go, as one that times out on a loaded machine does: the lease stays
// until it expires.
type lostRelease struct{ relay.Store }

func (lostRelease) Release(context.Context, string, string) error {
	return errors.New("storetest: the release timed out")
}

// testRelayBackToBack runs a thread's runs back to back, each started as
// soon as its client has read the end of the one before (as a client-side
// tool's result is sent), on relays that take turns, while the first
// relay's store fails to let the lease go: the run on the other relay
// waits until the lease expires (LeaseTTL is 500 ms here), where it used
// to get 409.
func testRelayBackToBack(t *testing.T, h Harness) {
	s, ns := open(t, h)
	agent := agenttest.NewScript(t, script(1))
	a := newRelayServer(t, agent.URL, lostRelease{s}, true)
	b := newRelayServer(t, agent.URL, h.Open(t, ns, ""), true)
	c, ag := client(t, a.srv.URL, "t")
	for i, base := range []string{a.srv.URL, b.srv.URL, a.srv.URL, b.srv.URL} {
		ag.URL = base + "/agent"
		res, err := c.RunAgent(testContext(t), ag, &aguistate.RunOptions{RunID: fmt.Sprint("r", i+1)})
		require.NoError(t, err, "run %d starts as soon as run %d has ended", i+1, i)
		assert.Equal(t, "success", res.Outcome)
	}
	assert.Equal(t, []string{"r1", "r2", "r3", "r4"}, runsOf(t, logOf(t, s, "t")))
}
