// The store conformance suite and benchmarks, run against the PostgreSQL server on 127.0.0.1.

package pgstore_test

import (
	"context"
	"fmt"
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
	"github.com/stretchr/testify/assert"
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

// TestSetupMigrates runs Setup on the tables that earlier versions made,
// holding threads and a lease: their threads read as before, in tenant "",
// the lease holds, and the store works.
func TestSetupMigrates(t *testing.T) {
	harness(t)
	tests := []struct {
		name, reason, schema string
	}{
		{"text ids", "the first version's tables, with text thread ids", `
CREATE TABLE %[1]s.aguistate_events (thread text NOT NULL, pos bigint NOT NULL, event bytea NOT NULL, PRIMARY KEY (thread, pos));
CREATE TABLE %[1]s.aguistate_checkpoints (thread text PRIMARY KEY, pos bigint NOT NULL, data bytea NOT NULL);
CREATE TABLE %[1]s.aguistate_leases (thread text PRIMARY KEY, holder text NOT NULL, expires timestamptz NOT NULL);`},
		{"no tenants", "the tables of the version before tenants, made by its Setup's SQL", `
CREATE TABLE IF NOT EXISTS %[1]s.aguistate_events (
	thread bytea NOT NULL,
	pos bigint NOT NULL,
	event bytea NOT NULL,
	PRIMARY KEY (thread, pos)
);
CREATE TABLE IF NOT EXISTS %[1]s.aguistate_checkpoints (
	thread bytea PRIMARY KEY,
	pos bigint NOT NULL,
	data bytea NOT NULL
);
CREATE TABLE IF NOT EXISTS %[1]s.aguistate_leases (
	thread bytea PRIMARY KEY,
	holder text NOT NULL,
	expires timestamptz NOT NULL
)`},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := fmt.Sprintf("aguistate_test_migrate_%d_%d", i, time.Now().UnixNano())
			direct := newPool(t, "")
			ctx := context.Background()
			schema := pgx.Identifier{ns}.Sanitize()
			_, err := direct.Exec(ctx, "CREATE SCHEMA "+schema+";"+fmt.Sprintf(tt.schema, schema)+`;
INSERT INTO `+schema+`.aguistate_events VALUES ('ü', 1, '\x7b7d'), ('ü', 2, '\x5b5d'), ('cp only', 1, '\x7b7d');
DELETE FROM `+schema+`.aguistate_events WHERE thread = 'cp only';
INSERT INTO `+schema+`.aguistate_checkpoints VALUES ('ü', 1, '\x6370'), ('cp only', 0, '\x6370');
INSERT INTO `+schema+`.aguistate_leases VALUES ('ü', 'old relay', now() + interval '1 hour')`)
			require.NoError(t, err, tt.reason)
			s := open(t, ns, "") // runs Setup, and drops the schema at the end
			for range 2 {        // Setup again changes nothing
				require.NoError(t, pgstore.Setup(ctx, direct, &pgstore.Options{Schema: ns}), tt.reason)
			}
			got, err := readAll(ctx, s, "ü")
			require.NoError(t, err)
			require.Equal(t, []relay.Entry{{Pos: 1, Event: []byte("{}")}, {Pos: 2, Event: []byte("[]")}}, got, tt.reason)
			for _, id := range []string{"ü", "cp only"} {
				_, data, err := s.LoadCheckpoint(ctx, id)
				require.NoError(t, err, tt.reason)
				require.Equal(t, "cp", string(data), tt.reason)
			}
			assert.ErrorIs(t, s.Lease(ctx, "ü", "new relay", "", time.Minute), relay.ErrLeased, "the lease holds")
			require.NoError(t, s.Stop(ctx, "ü"))
			assert.ErrorIs(t, s.Append(ctx, "ü", 2, []byte("{}")), relay.ErrConflict, "the log's end is known")
			require.NoError(t, s.Append(ctx, "ü", 3, []byte("{}")), tt.reason)
			require.NoError(t, s.Append(ctx, "a\x00b", 1, []byte("{}")), "an id that text refused")
			other := s.Tenant("other")
			require.NoError(t, other.Append(ctx, "ü", 1, []byte("{}")), "another tenant's thread ü")
			_, _, err = other.LoadCheckpoint(ctx, "ü")
			assert.ErrorIs(t, err, relay.ErrNoCheckpoint)
			var tables int
			require.NoError(t, direct.QueryRow(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_schema = $1`, ns).Scan(&tables))
			assert.Equal(t, 3, tables, "aguistate_leases is folded into aguistate_threads")
		})
	}
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
