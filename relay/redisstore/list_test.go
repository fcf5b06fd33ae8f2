// Tests of the listing's upkeep: expired threads leave it, and scripts the server lost are
// loaded again.

package redisstore

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// server returns a client of the test server, or skips tb without one
// (fails it when CI is set), and deletes the keys of prefix when tb ends.
func server(tb testing.TB, prefix string) *redis.Client {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	ctx := context.Background()
	if err := rdb.Ping(ctx).Err(); err != nil {
		rdb.Close()
		if os.Getenv("CI") != "" {
			tb.Fatalf("Redis is required in CI at 127.0.0.1:6379: %v", err)
		}
		tb.Skipf("Redis does not answer at 127.0.0.1:6379 (start it to run these tests): %v", err)
	}
	tb.Cleanup(func() {
		for it := rdb.Scan(ctx, 0, prefix+"*", 1000).Iterator(); it.Next(ctx); {
			rdb.Del(ctx, it.Val())
		}
		rdb.Close()
	})
	return rdb
}

// TestListingCleaned lets many threads expire unlisted: appends to another
// thread clean their entries from the tenant's listing, and the listing of
// a tenant that nobody writes expires with its threads.
func TestListingCleaned(t *testing.T) {
	prefix := fmt.Sprintf("aguistate_test_clean_%d:", time.Now().UnixNano())
	rdb := server(t, prefix)
	ctx := context.Background()
	s := New(rdb, &Options{Prefix: prefix, TTL: 100 * time.Millisecond})
	for i := range 50 {
		require.NoError(t, s.Append(ctx, fmt.Sprint(i), 1, []byte(`{}`)))
	}
	index := s.indexKeys()
	require.Equal(t, int64(50), rdb.ZCard(ctx, index[0]).Val())
	time.Sleep(1500 * time.Millisecond) // the TTL and the second a cluster's clocks get
	for i := range 4 {
		require.NoError(t, s.Append(ctx, "busy", int64(i+1), []byte(`{}`)))
	}
	for _, k := range index {
		assert.Equal(t, int64(1), rdb.ZCard(ctx, k).Val(), "%s holds the busy thread only", k)
	}
	keys, err := rdb.Keys(ctx, prefix+"*").Result()
	require.NoError(t, err)
	assert.Len(t, keys, 2+1, "the listing's keys and the busy thread's log: %v", keys)

	// A tenant that nobody writes keeps no listing once its threads expire.
	other := s.Tenant("idle").(*Store)
	for i := range 20 {
		require.NoError(t, other.Append(ctx, fmt.Sprint(i), 1, []byte(`{}`)))
	}
	require.Equal(t, int64(20), rdb.ZCard(ctx, other.indexKeys()[0]).Val())
	time.Sleep(1500 * time.Millisecond) // the TTL and a second
	assert.Zero(t, rdb.Exists(ctx, other.indexKeys()...).Val(), "the idle tenant's listing is gone")
}

// TestScriptsFlushed flushes the server's scripts between calls: each call
// loads its scripts again.
func TestScriptsFlushed(t *testing.T) {
	prefix := fmt.Sprintf("aguistate_test_flush_%d:", time.Now().UnixNano())
	rdb := server(t, prefix)
	ctx := context.Background()
	s := New(rdb, &Options{Prefix: prefix, TTL: time.Minute})
	calls := []func() error{
		func() error { return s.Append(ctx, "t", 1, []byte(`{}`)) },
		func() error { return s.SaveCheckpoint(ctx, "t", 1, []byte(`{}`)) },
		func() error { return s.Lease(ctx, "t", "A", "r", time.Minute) },
		func() error { _, _, err := s.Threads(ctx, "", 10); return err },
		func() error { return s.Delete(ctx, "t") },
	}
	for i, call := range calls {
		require.NoError(t, rdb.ScriptFlush(ctx).Err())
		assert.NoError(t, call(), "call %d", i)
	}
	assert.Zero(t, rdb.Exists(ctx, s.keys("t")...).Val(), "deleted")
}
