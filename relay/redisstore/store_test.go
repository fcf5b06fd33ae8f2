// The store contract, the relay's scenarios and the benchmarks, run against Redis on 127.0.0.1.

package redisstore_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aguistate/aguistate/relay"
	"github.com/aguistate/aguistate/relay/redisstore"
	"github.com/aguistate/aguistate/relay/storetest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// serverAddr is the Redis server the tests use.
const serverAddr = "127.0.0.1:6379"

// harness returns the storetest harness for Redis at serverAddr. It skips
// tb when the server does not answer, and fails it instead when the CI
// environment variable is set.
func harness(tb testing.TB) storetest.Harness {
	rdb := redis.NewClient(&redis.Options{Addr: serverAddr})
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		if os.Getenv("CI") != "" {
			tb.Fatalf("Redis is required in CI at %s: %v", serverAddr, err)
		}
		tb.Skipf("Redis does not answer at %s (start it to run these tests): %v", serverAddr, err)
	}
	return storetest.Harness{Open: open, Addr: serverAddr, Expiring: expiring, Size: size}
}

// size returns the keys of the namespace ns and the entries of its
// listings, and the server's keys and memory (INFO memory's used_memory),
// which other clients share.
func size(tb testing.TB, ns string) map[string]float64 {
	rdb := redis.NewClient(&redis.Options{Addr: serverAddr})
	defer rdb.Close()
	ctx := context.Background()
	keys, listed := 0, int64(0)
	for it := rdb.Scan(ctx, 0, ns+":*", 10000).Iterator(); it.Next(ctx); {
		keys++
		if strings.HasPrefix(it.Val(), ns+":~index") {
			listed += rdb.ZCard(ctx, it.Val()).Val()
		}
	}
	dbsize, err := rdb.DBSize(ctx).Result()
	require.NoError(tb, err)
	info, err := rdb.Info(ctx, "memory").Result()
	require.NoError(tb, err)
	var used float64
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
			used, err = strconv.ParseFloat(v, 64)
			require.NoError(tb, err)
		}
	}
	return map[string]float64{"ns-keys": float64(keys), "listing": float64(listed), "dbsize": float64(dbsize), "used-MiB": used / (1 << 20)}
}

// open returns a Store with key prefix ns+":" on the server at addr, and
// deletes the keys of ns when tb ends.
func open(tb testing.TB, ns, addr string) relay.Store {
	return openWith(tb, ns, addr, &redisstore.Options{Prefix: ns + ":"})
}

// expiring returns a Store as open does, whose threads expire after ttl.
func expiring(tb testing.TB, ns string, ttl time.Duration) relay.Store {
	return openWith(tb, ns, "", &redisstore.Options{Prefix: ns + ":", TTL: ttl})
}

// openWith returns a Store configured by opts on the server at addr, and
// deletes the keys of ns when tb ends.
func openWith(tb testing.TB, ns, addr string, opts *redisstore.Options) relay.Store {
	if addr == "" {
		addr = serverAddr
	}
	return openClient(tb, ns, redis.NewClient(&redis.Options{Addr: addr}), opts)
}

// openClient returns a Store with key prefix ns+":" on rdb, configured by
// opts (its Prefix is set); when tb ends it closes the Store and rdb, and
// deletes the keys of ns.
func openClient(tb testing.TB, ns string, rdb *redis.Client, opts *redisstore.Options) *redisstore.Store {
	prefix := ns + ":"
	o := redisstore.Options{}
	if opts != nil {
		o = *opts
	}
	o.Prefix = prefix
	s := redisstore.New(rdb, &o)
	tb.Cleanup(func() {
		s.Close()
		rdb.Close()
		direct := redis.NewClient(&redis.Options{Addr: serverAddr})
		defer direct.Close()
		ctx := context.Background()
		for it := direct.Scan(ctx, 0, prefix+"*", 1000).Iterator(); it.Next(ctx); {
			direct.Del(ctx, it.Val())
		}
	})
	return s
}

// testNamespace returns a namespace for a test of this package, unique
// across processes.
func testNamespace(name string) string {
	return fmt.Sprintf("aguistate_test_%s_%d_%d", name, os.Getpid(), time.Now().UnixNano())
}

// TestFollowHoldsNoConnection follows three times as many idle threads as
// the client's pool has connections: while the follows wait, none of the
// pool's connections is in use (one pub/sub connection outside it serves
// them all), appends go through, and each follow gets its thread's event;
// once the follows end, no connection is in use either.
func TestFollowHoldsNoConnection(t *testing.T) {
	harness(t) // skips without a server
	const pool, follows = 4, 12
	rdb := redis.NewClient(&redis.Options{Addr: serverAddr, PoolSize: pool, PoolTimeout: 2 * time.Second})
	s := openClient(t, testNamespace("pool"), rdb, nil)
	redisstore.SetTiming(s, time.Minute, 5*time.Second) // no poll while the test counts commands
	inUse := func() int {
		st := rdb.PoolStats()
		return int(st.TotalConns) - int(st.IdleConns)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	followCtx, stop := context.WithCancel(ctx)
	got := make(chan relay.Entry, follows)
	var ended sync.WaitGroup
	for i := range follows {
		ended.Go(func() {
			for e, err := range s.Follow(followCtx, fmt.Sprint("t", i), 0) {
				if err != nil {
					assert.ErrorIs(t, err, context.Canceled, "follow %d", i)
					return
				}
				got <- e
			}
		})
	}

	// Each follow reads its empty log twice (its backlog, then before it
	// waits) and waits. Once the hub's subscription is confirmed it wakes
	// the follows registered by then, and each woken one reads twice more
	// (its log, then whether the thread is gone): then no command is in
	// flight, and none comes until an append (the poll is a minute away).
	gets := func() int { st := rdb.PoolStats(); return int(st.Hits + st.Misses) }
	settled := func() bool {
		heard, wakes := redisstore.Heard(s)
		return heard > 0 && gets() == 2*follows+2*wakes && inUse() == 0
	}
	for deadline := time.Now().Add(10 * time.Second); !settled(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			heard, wakes := redisstore.Heard(s)
			t.Fatalf("follows never settled: subscriptions %d, wakes %d, commands %d, connections in use %d", heard, wakes, gets(), inUse())
		}
	}
	for range 20 {
		require.Zero(t, inUse(), "connections of the pool in use while %d follows wait", follows)
		time.Sleep(10 * time.Millisecond)
	}
	assert.Equal(t, uint32(1), rdb.PoolStats().PubSubStats.Active, "pub/sub connections")
	for i := range follows {
		require.NoError(t, s.Append(ctx, fmt.Sprint("t", i), 1, []byte(fmt.Sprintf(`{"n":%d}`, i))))
	}
	seen := map[string]bool{}
	for range follows {
		select {
		case e := <-got:
			seen[string(e.Event)] = true
		case <-ctx.Done():
			t.Fatalf("%d of %d follows got their event", len(seen), follows)
		}
	}
	assert.Len(t, seen, follows, "each follow got its thread's event")

	stop()
	ended.Wait()
	assert.Zero(t, inUse(), "connections of the pool in use once the follows ended")
}

func TestStore(t *testing.T) { storetest.Store(t, harness(t)) }

func TestRelay(t *testing.T) { storetest.Relay(t, harness(t)) }

func BenchmarkStore(b *testing.B) { storetest.Bench(b, harness(b)) }

func BenchmarkRelay(b *testing.B) { storetest.BenchRelay(b, harness(b)) }

func BenchmarkLoad(b *testing.B) { storetest.BenchLoad(b, harness(b)) }

// BenchmarkLoadPool runs [storetest.BenchLoad] on clients whose pools are
// smaller than go-redis's default (10 connections per GOMAXPROCS), to size
// the pool: see "Redis" in docs/server.md.
func BenchmarkLoadPool(b *testing.B) {
	h := harness(b)
	for _, size := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("pool=%d", size), func(b *testing.B) {
			h.Open = func(tb testing.TB, ns, _ string) relay.Store {
				return openClient(tb, ns, redis.NewClient(&redis.Options{Addr: serverAddr, PoolSize: size}), nil)
			}
			storetest.BenchLoad(b, h)
		})
	}
}

func BenchmarkChurn(b *testing.B) { storetest.BenchChurn(b, harness(b)) }
