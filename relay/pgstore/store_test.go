// The store conformance suite and benchmarks, run against the PostgreSQL server on 127.0.0.1.

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
	return storetest.Harness{Open: open, Addr: net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))}
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
	setup(tb, ns)
	s, err := pgstore.New(newPool(tb, addr), &pgstore.Options{Schema: ns})
	require.NoError(tb, err)
	tb.Cleanup(s.Close)
	return s
}

func TestStore(t *testing.T) { storetest.Run(t, harness(t)) }

func BenchmarkStore(b *testing.B) { storetest.Bench(b, harness(b)) }

func BenchmarkRelay(b *testing.B) { storetest.BenchRelay(b, harness(b)) }

func BenchmarkLoad(b *testing.B) { storetest.BenchLoad(b, harness(b)) }

// TestSetupTextIDs: Setup alters the tables an earlier version made, with
// text thread ids, to bytea, and their threads read as before.
func TestSetupTextIDs(t *testing.T) {
	harness(t)
	ns := "aguistate_test_text_ids"
	direct := newPool(t, "")
	ctx := context.Background()
	schema := pgx.Identifier{ns}.Sanitize()
	_, err := direct.Exec(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE; CREATE SCHEMA "+schema+`;
CREATE TABLE `+schema+`.aguistate_events (thread text NOT NULL, pos bigint NOT NULL, event bytea NOT NULL, PRIMARY KEY (thread, pos));
CREATE TABLE `+schema+`.aguistate_checkpoints (thread text PRIMARY KEY, pos bigint NOT NULL, data bytea NOT NULL);
CREATE TABLE `+schema+`.aguistate_leases (thread text PRIMARY KEY, holder text NOT NULL, expires timestamptz NOT NULL);
INSERT INTO `+schema+`.aguistate_events VALUES ('ü', 1, '\x7b7d');
INSERT INTO `+schema+`.aguistate_checkpoints VALUES ('ü', 1, '\x6370')`)
	require.NoError(t, err)
	s := open(t, ns, "") // runs Setup
	got, err := readAll(ctx, s, "ü")
	require.NoError(t, err)
	require.Equal(t, []relay.Entry{{Pos: 1, Event: []byte("{}")}}, got)
	pos, data, err := s.LoadCheckpoint(ctx, "ü")
	require.NoError(t, err)
	require.Equal(t, int64(1), pos)
	require.Equal(t, "cp", string(data))
	require.NoError(t, s.Append(ctx, "a\x00b", 1, []byte("{}")), "an id that text refused")
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
