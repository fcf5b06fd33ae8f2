// Conformance tests of leases: one holder at a time, expiry, contention, stops, wrapped stores.

package storetest

import (
	"testing"
	"time"

	"github.com/aguistate/aguistate/relay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testLease takes, renews, refuses and releases leases, on two stores of
// one namespace, as two relays would.
func testLease(t *testing.T, h Harness) {
	a, ns := open(t, h)
	b := h.Open(t, ns, "")
	ctx := testContext(t)
	const ttl = time.Minute

	require.NoError(t, a.Lease(ctx, "t", "A", "r1", ttl), "a free lease")
	require.NoError(t, a.Lease(ctx, "t", "A", "r1", ttl), "the holder renews it")
	require.NoError(t, b.Lease(ctx, "t", "A", "", ttl), "through another store too")
	assert.ErrorIs(t, b.Lease(ctx, "t", "B", "r2", ttl), relay.ErrLeased, "another holder is refused")
	require.NoError(t, b.Lease(ctx, "u", "B", "r2", ttl), "threads are leased one by one")

	require.NoError(t, b.Release(ctx, "t", "B"), "releasing a lease one does not hold does nothing")
	assert.ErrorIs(t, b.Lease(ctx, "t", "B", "", ttl), relay.ErrLeased, "and leaves the holder's")
	require.NoError(t, a.Release(ctx, "t", "A"))
	require.NoError(t, b.Lease(ctx, "t", "B", "", ttl), "a released lease is free")
	assert.ErrorIs(t, a.Lease(ctx, "t", "A", "", ttl), relay.ErrLeased)
	require.NoError(t, b.Release(ctx, "never", "B"), "releasing a thread never leased")
}

// testLeaseExpiry lets a short lease expire: another holder takes it then,
// and not before.
func testLeaseExpiry(t *testing.T, h Harness) {
	l, _ := open(t, h)
	ctx := testContext(t)
	const ttl = 300 * time.Millisecond

	start := time.Now()
	require.NoError(t, l.Lease(ctx, "t", "A", "", ttl))
	err := l.Lease(ctx, "t", "B", "", time.Minute)
	if time.Since(start) < ttl/2 {
		assert.ErrorIs(t, err, relay.ErrLeased, "a lease holds until it expires")
	}
	err = waitLease(t, l, "t", "B")
	require.NoError(t, err, "an expired lease is free")
	assert.GreaterOrEqual(t, time.Since(start), ttl-20*time.Millisecond, "and not before it expires (store clocks aside)")
	assert.ErrorIs(t, l.Lease(ctx, "t", "A", "", ttl), relay.ErrLeased, "the old holder lost it")
}

// waitLease tries to take thread's lease for holder, for a minute at
// most, and returns the last error.
func waitLease(tb testing.TB, s relay.Store, thread, holder string) error {
	ctx := testContext(tb)
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := s.Lease(ctx, thread, holder, "", time.Minute)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// testLeaseConcurrent has holders race for one free lease: exactly one
// gets it.
func testLeaseConcurrent(t *testing.T, h Harness) {
	_, ns := open(t, h)
	ctx := testContext(t)
	const holders = 8
	won := make(chan string, holders)
	errs := make(chan error, holders)
	for i := range holders {
		l := h.Open(t, ns, "")
		go func() {
			holder := string(rune('A' + i))
			err := l.Lease(ctx, "t", holder, "", time.Minute)
			if err == nil {
				won <- holder
			}
			errs <- err
		}()
	}
	for range holders {
		if err := <-errs; err != nil {
			assert.ErrorIs(t, err, relay.ErrLeased)
		}
	}
	assert.Len(t, won, 1, "exactly one holder takes a free lease")
}

// testStop asks holders to stop, through another store of the namespace as
// another relay would: the holder's next renewal reports it once and keeps
// the lease; a thread nobody holds cannot be stopped.
func testStop(t *testing.T, h Harness) {
	a, ns := open(t, h)
	b := h.Open(t, ns, "")
	ctx := testContext(t)
	const ttl = time.Minute

	assert.ErrorIs(t, b.Stop(ctx, "t"), relay.ErrNotLeased, "a thread never leased")
	require.NoError(t, a.Lease(ctx, "t", "A", "r1", ttl))
	require.NoError(t, b.Stop(ctx, "t"), "a leased thread")
	require.NoError(t, b.Stop(ctx, "t"), "twice is once")
	assert.ErrorIs(t, b.Lease(ctx, "t", "B", "", ttl), relay.ErrLeased, "another holder is refused as before")
	assert.ErrorIs(t, a.Lease(ctx, "t", "A", "r1", ttl), relay.ErrStopped, "the holder's renewal reports the stop")
	assert.ErrorIs(t, b.Lease(ctx, "t", "B", "", ttl), relay.ErrLeased, "and the holder keeps the lease")
	require.NoError(t, a.Lease(ctx, "t", "A", "r1", ttl), "the stop is reported once")

	require.NoError(t, b.Stop(ctx, "t"))
	require.NoError(t, a.Release(ctx, "t", "A"))
	assert.ErrorIs(t, b.Stop(ctx, "t"), relay.ErrNotLeased, "a released lease")
	require.NoError(t, a.Lease(ctx, "t", "A", "r2", ttl), "a release clears the stop")

	require.NoError(t, a.Lease(ctx, "short", "A", "", 200*time.Millisecond))
	require.NoError(t, b.Stop(ctx, "short"))
	require.NoError(t, waitLease(t, b, "short", "B"), "the lease expires")
	require.NoError(t, b.Lease(ctx, "short", "B", "", ttl), "a stop asked of an expired lease is not the new holder's")
	deadline := time.Now().Add(10 * time.Second)
	require.NoError(t, a.Lease(ctx, "gone", "A", "", 200*time.Millisecond))
	for b.Stop(ctx, "gone") == nil && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	assert.ErrorIs(t, b.Stop(ctx, "gone"), relay.ErrNotLeased, "an expired lease")
}

// wrapped is a store wrapped as a program wraps one for metrics or logs.
type wrapped struct{ relay.Store }

// testWrapped leases, stops and releases through a store wrapped in a
// struct that embeds it: the wrapper keeps them, so that relay code needs
// no type assertion.
func testWrapped(t *testing.T, h Harness) {
	s, _ := open(t, h)
	var w relay.Store = wrapped{s}
	ctx := testContext(t)
	require.NoError(t, w.Lease(ctx, "t", "A", "r1", time.Minute))
	assert.ErrorIs(t, s.Lease(ctx, "t", "B", "", time.Minute), relay.ErrLeased, "the wrapper's lease is the store's")
	require.NoError(t, s.Stop(ctx, "t"))
	assert.ErrorIs(t, w.Lease(ctx, "t", "A", "", time.Minute), relay.ErrStopped)
	require.NoError(t, w.Release(ctx, "t", "A"))
	require.NoError(t, s.Lease(ctx, "t", "B", "", time.Minute), "released through the wrapper")
}
