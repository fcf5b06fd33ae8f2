// Tests of Sweep and of the periodic sweep.

package pgstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aguistate/aguistate/relay/pgstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSweep sweeps more threads than one statement removes, of two
// tenants, through a store that sweeps on its own only when asked.
func TestSweep(t *testing.T) {
	harness(t)
	ctx := context.Background()
	ns := fmt.Sprintf("aguistate_test_sweep_%d", time.Now().UnixNano())
	s := openWith(t, "", &pgstore.Options{Schema: ns, TTL: 300 * time.Millisecond, SweepEvery: -1})
	n, err := s.Sweep(ctx)
	require.NoError(t, err)
	assert.Zero(t, n, "nothing to sweep")
	other := s.Tenant("other")
	const threads = 1100
	for i := range threads {
		require.NoError(t, s.Append(ctx, fmt.Sprint(i), 1, []byte(`{}`)))
	}
	require.NoError(t, other.Append(ctx, "t", 1, []byte(`{}`)))
	time.Sleep(time.Second)
	require.NoError(t, s.Append(ctx, "fresh", 1, []byte(`{}`)))
	n, err = s.Sweep(ctx)
	require.NoError(t, err)
	assert.Equal(t, threads+1, n, "every thread but the fresh one, of every tenant")
	page, _, err := s.Threads(ctx, "", 10)
	require.NoError(t, err)
	require.Len(t, page, 1)
	assert.Equal(t, "fresh", page[0].ID)

	noTTL := openWith(t, "", &pgstore.Options{Schema: ns})
	n, err = noTTL.Sweep(ctx)
	require.NoError(t, err)
	assert.Zero(t, n, "a store without a TTL sweeps nothing")
}

// TestSweepPeriodic lets a store sweep on its own, then closes it: the
// sweeps stop.
func TestSweepPeriodic(t *testing.T) {
	harness(t)
	ctx := context.Background()
	ns := fmt.Sprintf("aguistate_test_sweeps_%d", time.Now().UnixNano())
	s := openWith(t, "", &pgstore.Options{Schema: ns, TTL: 200 * time.Millisecond, SweepEvery: 50 * time.Millisecond})
	require.NoError(t, s.Append(ctx, "t", 1, []byte(`{}`)))
	deadline := time.Now().Add(30 * time.Second)
	for {
		page, _, err := s.Threads(ctx, "", 10)
		require.NoError(t, err)
		if len(page) == 0 {
			break
		}
		require.True(t, time.Now().Before(deadline), "the periodic sweep removes the thread")
		time.Sleep(50 * time.Millisecond)
	}
	s.Close()
	require.NoError(t, s.Append(ctx, "u", 1, []byte(`{}`)))
	time.Sleep(500 * time.Millisecond)
	page, _, err := s.Threads(ctx, "", 10)
	require.NoError(t, err)
	assert.Len(t, page, 1, "a closed store sweeps no more")
}
