// Conformance tests of tenants: one thread id in several tenants is several threads, in every method.

package storetest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aguistate/aguistate/relay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tenantNames are names that look like one another, like a store's own key
// syntax, or hold NUL or invalid UTF-8, and the longest name.
var tenantNames = []string{"", "a", "A", "a:", "a:b", "{a}", "@a", "a\x00", "\x00", "\xff", "ü",
	strings.Repeat("t", relay.MaxTenant)}

// testTenants writes thread "t" in every tenant of tenantNames, each its
// own log, checkpoint, trim, lease and stop: each tenant reads back its
// own only, through the store itself and through another store of the
// namespace, and a follower of one tenant's thread gets none of another's
// events.
func testTenants(t *testing.T, h Harness) {
	s, ns := open(t, h)
	replica := h.Open(t, ns, "")
	ctx := testContext(t)
	assert.Equal(t, s, s.Tenant(""), `Tenant("") is the store itself`)
	for i, name := range tenantNames {
		ts := s.Tenant(name)
		mustAppend(t, ts, "t", 1, events(fmt.Sprintf("%q", name), 1, i+2)...)
		require.NoError(t, ts.SaveCheckpoint(ctx, "t", int64(i+1), []byte(name)), "tenant %q", name)
		require.NoError(t, ts.Trim(ctx, "t", int64(i+1)), "tenant %q", name)
		require.NoError(t, ts.Lease(ctx, "t", "holder "+name, "", time.Minute), "tenant %q: a lease of its own", name)
		if i%2 == 0 {
			require.NoError(t, ts.Stop(ctx, "t"), "tenant %q", name)
		}
	}
	for i, name := range tenantNames {
		for _, ts := range []relay.Store{s.Tenant(name), replica.Tenant(name), s.Tenant("other").Tenant(name)} {
			log := events(fmt.Sprintf("%q", name), 1, i+2)
			assert.Equal(t, entries(int64(i+1), log[i:]), mustRead(t, ts, "t", int64(i)), "tenant %q", name)
			pos, data, err := ts.LoadCheckpoint(ctx, "t")
			require.NoError(t, err, "tenant %q", name)
			assert.Equal(t, int64(i+1), pos, "tenant %q", name)
			assert.Equal(t, name, string(data), "tenant %q", name)
			assert.ErrorIs(t, ts.Lease(ctx, "t", "other", "", time.Minute), relay.ErrLeased, "tenant %q", name)
		}
		ts := s.Tenant(name)
		err := ts.Lease(ctx, "t", "holder "+name, "", time.Minute)
		if i%2 == 0 {
			assert.ErrorIs(t, err, relay.ErrStopped, "tenant %q: its own stop", name)
		} else {
			assert.NoError(t, err, "tenant %q: no stop of its own", name)
		}
		require.NoError(t, ts.Release(ctx, "t", "holder "+name), "tenant %q", name)
	}
	for _, name := range tenantNames {
		assert.ErrorIs(t, s.Tenant(name).Stop(ctx, "t"), relay.ErrNotLeased, "tenant %q: every lease released", name)
	}

	// A follower of a's thread (3 events) waits through appends to A's (4).
	a, b := s.Tenant("a"), replica.Tenant("A")
	followCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	got := make(chan relay.Entry, 10)
	go func() {
		for e, err := range a.Follow(followCtx, "t", 3) {
			if err != nil {
				close(got)
				return
			}
			got <- e
		}
	}()
	mustAppend(t, b, "t", 5, event("A only"))
	select {
	case e := <-got:
		t.Fatalf("a follower of tenant a's thread got %s", e.Event)
	case <-time.After(200 * time.Millisecond):
	}
	mustAppend(t, a, "t", 4, event("a only"))
	e := <-got
	assert.Equal(t, relay.Entry{Pos: 4, Event: event("a only")}, e)
}

// testTenantTooLong calls every method of a tenant whose name is longer
// than relay.MaxTenant: each returns an error, and writes nothing.
func testTenantTooLong(t *testing.T, h Harness) {
	s, _ := open(t, h)
	long := strings.Repeat("t", relay.MaxTenant+1)
	ctx := testContext(t)
	for name, err := range calls(t, ctx, s.Tenant(long)) {
		assertStoreError(t, err, name)
	}
	for _, name := range []string{"", long[:relay.MaxTenant]} {
		assert.Empty(t, mustRead(t, s.Tenant(name), "t", 0), "tenant %q", name)
	}
}
