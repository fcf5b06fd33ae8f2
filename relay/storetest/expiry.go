// Conformance tests of expiry: threads whose log does not grow for the TTL go, leased ones stay.

package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/aguistate/aguistate/relay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gone reports whether s holds nothing of thread: no log, no checkpoint,
// no lease, and no listing entry.
func gone(tb testing.TB, s relay.Store, thread string) bool {
	ctx := testContext(tb)
	log, err := readAll(ctx, s, thread, 0)
	require.NoError(tb, err)
	_, _, err = s.LoadCheckpoint(ctx, thread)
	if !errors.Is(err, relay.ErrNoCheckpoint) {
		require.NoError(tb, err)
		return false
	}
	listed, _ := list(tb, s, relay.MaxThreadsPage)
	for _, info := range listed {
		if info.ID == thread {
			return false
		}
	}
	return len(log) == 0 && errors.Is(s.Stop(ctx, thread), relay.ErrNotLeased)
}

// testExpiry opens a store whose threads expire after a second: a thread
// left alone goes as Delete removes it (its follower gets a *RangeError,
// and the id starts again at position 1), while one that grows and one
// whose lease has not expired stay; once its lease expires, that one goes
// too.
func testExpiry(t *testing.T, h Harness) {
	if h.Expiring == nil {
		t.Skip("the harness opens no store with a TTL")
	}
	const ttl = time.Second
	s := h.Expiring(t, namespace(t), ttl)
	ctx := testContext(t)
	start := time.Now()
	for _, id := range []string{"idle", "leased", "busy"} {
		mustAppend(t, s, id, 1, events(id, 1, 3)...)
		require.NoError(t, s.SaveCheckpoint(ctx, id, 2, []byte("cp")))
	}
	require.NoError(t, s.Lease(ctx, "leased", "A", "r1", 4*ttl))
	require.NoError(t, s.Tenant("other").Lease(ctx, "lease only", "A", "", 4*ttl))

	followed := make(chan error, 1)
	go func() {
		for _, err := range s.Follow(ctx, "idle", 3) {
			followed <- err
			return
		}
	}()
	busy := int64(3)
	grow := func() {
		busy++
		mustAppend(t, s, "busy", busy, event(busy))
	}
	for !gone(t, s, "idle") {
		require.Less(t, time.Since(start), 30*time.Second, "the idle thread expires")
		grow()
		time.Sleep(100 * time.Millisecond)
	}
	assert.GreaterOrEqual(t, time.Since(start), ttl-50*time.Millisecond, "not before its TTL (clocks aside)")
	if time.Since(start) < 3*ttl { // the lease has not expired
		assert.False(t, gone(t, s, "leased"), "a thread with an unexpired lease stays")
		assert.NoError(t, s.Tenant("other").Stop(ctx, "lease only"), "a lease of a thread with no log too")
	}
	assert.False(t, gone(t, s, "busy"), "a thread that grows stays")
	select {
	case err := <-followed:
		var re *relay.RangeError
		require.ErrorAs(t, err, &re, "a follower of the expired thread")
		assert.Equal(t, &relay.RangeError{Thread: "idle", After: 3}, re)
	case <-time.After(30 * time.Second):
		t.Fatal("a follower of an expired thread waits on")
	}
	assert.ErrorIs(t, s.Append(ctx, "idle", 4, event(4)), relay.ErrConflict)
	mustAppend(t, s, "idle", 1, event("again"))

	for !gone(t, s, "leased") || !gone(t, s, "busy") {
		require.Less(t, time.Since(start), 60*time.Second, "the other threads expire once their lease has")
		time.Sleep(100 * time.Millisecond)
	}
	assert.GreaterOrEqual(t, time.Since(start), 4*ttl-50*time.Millisecond, "not before the lease expires (clocks aside)")
}
