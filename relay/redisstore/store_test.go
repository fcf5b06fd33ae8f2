// The store contract, the relay's scenarios and the benchmarks, run against Redis on 127.0.0.1.

package redisstore_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aguistate/aguistate/relay"
	"github.com/aguistate/aguistate/relay/redisstore"
	"github.com/aguistate/aguistate/relay/storetest"
	"github.com/redis/go-redis/v9"
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
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	prefix := ns + ":"
	tb.Cleanup(func() {
		rdb.Close()
		direct := redis.NewClient(&redis.Options{Addr: serverAddr})
		defer direct.Close()
		ctx := context.Background()
		for it := direct.Scan(ctx, 0, prefix+"*", 1000).Iterator(); it.Next(ctx); {
			direct.Del(ctx, it.Val())
		}
	})
	return redisstore.New(rdb, opts)
}

func TestStore(t *testing.T) { storetest.Store(t, harness(t)) }

func TestRelay(t *testing.T) { storetest.Relay(t, harness(t)) }

func BenchmarkStore(b *testing.B) { storetest.Bench(b, harness(b)) }

func BenchmarkRelay(b *testing.B) { storetest.BenchRelay(b, harness(b)) }

func BenchmarkChurn(b *testing.B) { storetest.BenchChurn(b, harness(b)) }
