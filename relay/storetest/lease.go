// Conformance tests of the Leaser: one holder at a time, expiry, contention.

package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/aguistate/aguistate/relay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// leaser returns s as a relay.Leaser, or skips t when it is not one.
func leaser(t *testing.T, s relay.Store) relay.Leaser {
	l, ok := s.(relay.Leaser)
	if !ok {
		t.Skip("the store keeps no leases (relay.Leaser)")
	}
	return l
}

// testLease takes, renews, refuses and releases leases, on two stores of
// one namespace, as two relays would.
func testLease(t *testing.T, h Harness) {
	s, ns := open(t, h)
	a, b := leaser(t, s), leaser(t, h.Open(t, ns, ""))
	ctx := testContext(t)
	const ttl = time.Minute

	require.NoError(t, a.Lease(ctx, "t", "A", ttl), "a free lease")
	require.NoError(t, a.Lease(ctx, "t", "A", ttl), "the holder renews it")
	require.NoError(t, b.Lease(ctx, "t", "A", ttl), "through another store too")
	assert.ErrorIs(t, b.Lease(ctx, "t", "B", ttl), relay.ErrLeased, "another holder is refused")
	require.NoError(t, b.Lease(ctx, "u", "B", ttl), "threads are leased one by one")

	require.NoError(t, b.Release(ctx, "t", "B"), "releasing a lease one does not hold does nothing")
	assert.ErrorIs(t, b.Lease(ctx, "t", "B", ttl), relay.ErrLeased, "and leaves the holder's")
	require.NoError(t, a.Release(ctx, "t", "A"))
	require.NoError(t, b.Lease(ctx, "t", "B", ttl), "a released lease is free")
	assert.ErrorIs(t, a.Lease(ctx, "t", "A", ttl), relay.ErrLeased)
	require.NoError(t, b.Release(ctx, "never", "B"), "releasing a thread never leased")
}

// testLeaseExpiry lets a short lease expire: another holder takes it then,
// and not before.
func testLeaseExpiry(t *testing.T, h Harness) {
	s, _ := open(t, h)
	l := leaser(t, s)
	ctx := testContext(t)
	const ttl = 300 * time.Millisecond

	start := time.Now()
	require.NoError(t, l.Lease(ctx, "t", "A", ttl))
	err := l.Lease(ctx, "t", "B", time.Minute)
	if time.Since(start) < ttl/2 {
		assert.ErrorIs(t, err, relay.ErrLeased, "a lease holds until it expires")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		err = l.Lease(ctx, "t", "B", time.Minute)
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	require.NoError(t, err, "an expired lease is free")
	assert.GreaterOrEqual(t, time.Since(start), ttl-20*time.Millisecond, "and not before it expires (store clocks aside)")
	assert.ErrorIs(t, l.Lease(ctx, "t", "A", ttl), relay.ErrLeased, "the old holder lost it")
}

// testLeaseConcurrent has holders race for one free lease: exactly one
// gets it.
func testLeaseConcurrent(t *testing.T, h Harness) {
	s, ns := open(t, h)
	leaser(t, s)
	ctx := testContext(t)
	const holders = 8
	won := make(chan string, holders)
	errs := make(chan error, holders)
	for i := range holders {
		l := h.Open(t, ns, "").(relay.Leaser)
		go func() {
			holder := string(rune('A' + i))
			err := l.Lease(ctx, "t", holder, time.Minute)
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

// leaseCalls adds the Leaser's methods to the calls of the Canceled and
// Down tests, when s is a Leaser.
func leaseCalls(ctx context.Context, s relay.Store, calls map[string]error) {
	if l, ok := s.(relay.Leaser); ok {
		calls["Lease"] = l.Lease(ctx, "t", "holder", time.Minute)
		calls["Release"] = l.Release(ctx, "t", "holder")
	}
}
