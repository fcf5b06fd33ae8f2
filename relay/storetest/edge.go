// Conformance tests of the relay's edge on a store: a run that races another's end, and an
// agent that hangs.

package storetest

import (
	"context"
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

func (s *gatedLease) Lease(ctx context.Context, thread, holder string, ttl time.Duration) error {
	s.once.Do(func() {
		close(s.entered)
		<-s.gate
	})
	return s.Store.(relay.Leaser).Lease(ctx, thread, holder, ttl)
}

func (s *gatedLease) Release(ctx context.Context, thread, holder string) error {
	return s.Store.(relay.Leaser).Release(ctx, thread, holder)
}

// testRelayRunRace starts a run on relay B while relay A ends the thread's
// run: B read the thread while A's run went on, and takes the lease once A
// has ended it and let it go. B reads the log again and runs its run; it
// used to take A's run for one nobody ran, and answer 503 (a position
// conflict) when it tried to end it.
func testRelayRunRace(t *testing.T, h Harness) {
	s, ns := open(t, h)
	if _, ok := s.(relay.Leaser); !ok {
		t.Skip("the store keeps no leases (relay.Leaser)")
	}
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
