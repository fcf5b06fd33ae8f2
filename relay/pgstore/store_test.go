// The store contract, the relay's scenarios and the benchmarks, run against PostgreSQL on 127.0.0.1.

package pgstore_test

import (
	"context"
	"net"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/aguistate/aguistate/relay"
	"github.com/aguistate/aguistate/relay/pgstore"
	"github.com/aguistate/aguistate/relay/storetest"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
)

// serverURL is the PostgreSQL database the tests use.
const serverURL = "postgres://postgres@127.0.0.1:5432/test"

// harness returns the storetest harness for the database at serverURL. It
// skips tb when the server does not answer, and fails it instead when the
// CI environment variable is set.
func harness(tb testing.TB) storetest.Harness {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, serverURL)
	if err == nil {
		err = conn.Ping(ctx)
		conn.Close(ctx)
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			tb.Fatalf("PostgreSQL is required in CI at %s: %v", serverURL, err)
		}
		tb.Skipf("PostgreSQL does not answer at %s (start it to run these tests): %v", serverURL, err)
	}
	cfg, err := pgx.ParseConfig(serverURL)
	require.NoError(tb, err)
	return storetest.Harness{Open: open, Addr: net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))), Expiring: expiring, Size: size}
}

// newPool returns a pool on the database at serverURL, reached at addr
// (host:port) when it is not "", closed when tb ends.
func newPool(tb testing.TB, addr string) *pgxpool.Pool {
	url := serverURL
	if addr != "" {
		url = "postgres://postgres@" + addr + "/test?connect_timeout=5"
	}
	pool, err := pgxpool.New(context.Background(), url)
	require.NoError(tb, err)
	tb.Cleanup(pool.Close)
	return pool
}

// setup creates the store's tables in schema ns through a new direct
// pool, which it returns, and drops the schema when tb ends.
func setup(tb testing.TB, ns string) *pgxpool.Pool {
	direct := newPool(tb, "")
	ctx := context.Background()
	require.NoError(tb, pgstore.Setup(ctx, direct, &pgstore.Options{Schema: ns}))
	tb.Cleanup(func() {
		_, err := direct.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{ns}.Sanitize()+" CASCADE")
		require.NoError(tb, err)
	})
	return direct
}

// open returns a Store on schema ns, set up through a direct connection,
// that reaches the server at addr.
func open(tb testing.TB, ns, addr string) relay.Store {
	return openWith(tb, addr, &pgstore.Options{Schema: ns})
}

// expiring returns a Store as open does, whose threads expire after ttl,
// and which sweeps them every 100 ms.
func expiring(tb testing.TB, ns string, ttl time.Duration) relay.Store {
	return openWith(tb, "", &pgstore.Options{Schema: ns, TTL: ttl, SweepEvery: 100 * time.Millisecond})
}

// openWith returns a Store configured by opts, set up through a direct
// connection, that reaches the server at addr.
func openWith(tb testing.TB, addr string, opts *pgstore.Options) *pgstore.Store {
	setup(tb, opts.Schema)
	s, err := pgstore.New(newPool(tb, addr), opts)
	require.NoError(tb, err)
	tb.Cleanup(s.Close)
	return s
}

func TestStore(t *testing.T) { storetest.Store(t, harness(t)) }

func TestRelay(t *testing.T) { storetest.Relay(t, harness(t)) }

func BenchmarkStore(b *testing.B) { storetest.Bench(b, harness(b)) }

func BenchmarkRelay(b *testing.B) { storetest.BenchRelay(b, harness(b)) }

func BenchmarkLoad(b *testing.B) { storetest.BenchLoad(b, harness(b)) }

func BenchmarkChurn(b *testing.B) { storetest.BenchChurn(b, harness(b)) }

// size returns the rows of each table of schema ns, and its size on disk
// with its indexes and TOAST (pg_total_relation_size), in MiB, once a
// VACUUM has made the space of deleted rows free for new ones, as
// autovacuum does (the server of the tests runs without it).
func size(tb testing.TB, ns string) map[string]float64 {
	pool := newPool(tb, "")
	ctx := context.Background()
	out := make(map[string]float64)
	for _, table := range []string{"events", "checkpoints", "threads"} {
		name := pgx.Identifier{ns, "aguistate_" + table}.Sanitize()
		_, err := pool.Exec(ctx, "VACUUM "+name)
		require.NoError(tb, err)
		var rows, bytes int64
		err = pool.QueryRow(ctx, "SELECT (SELECT count(*) FROM "+name+"), pg_total_relation_size($1)", name).Scan(&rows, &bytes)
		require.NoError(tb, err)
		out[table+"-rows"] = float64(rows)
		out[table+"-MiB"] = float64(bytes) / (1 << 20)
	}
	return out
}

// readAll returns the entries of thread's log in s, and the error that
// ended the read.
func readAll(ctx context.Context, s relay.Store, thread string) ([]relay.Entry, error) {
	var got []relay.Entry
	for e, err := range s.Read(ctx, thread, 0) {
		if err != nil {
			return got, err
		}
		got = append(got, e)
	}
	return got, nil
}
