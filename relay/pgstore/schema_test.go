// Tests of Setup: the migration of an earlier version's tables.

package pgstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aguistate/aguistate/relay"
	"github.com/aguistate/aguistate/relay/pgstore"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
