// The tables for the log, checkpoints and leases, and Setup, which creates them.

package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// maxSchema is the longest schema name, in bytes, that leaves room in
// PostgreSQL's 63-byte identifiers for the notification channel's name.
const maxSchema = 63 - len(".aguistate_events")

// tables names the store's tables and notification channel in one schema.
type tables struct {
	schema      string
	events      string // quoted, qualified
	checkpoints string // quoted, qualified
	leases      string // quoted, qualified
	channel     string // unquoted: "SCHEMA.aguistate_events"
}

func newTables(opts *Options) (tables, error) {
	schema := "public"
	if opts != nil && opts.Schema != "" {
		schema = opts.Schema
	}
	if len(schema) > maxSchema {
		return tables{}, fmt.Errorf("aguistate: postgres: schema name %q is longer than %d bytes", schema, maxSchema)
	}
	return tables{
		schema:      schema,
		events:      pgx.Identifier{schema, "aguistate_events"}.Sanitize(),
		checkpoints: pgx.Identifier{schema, "aguistate_checkpoints"}.Sanitize(),
		leases:      pgx.Identifier{schema, "aguistate_leases"}.Sanitize(),
		channel:     schema + ".aguistate_events",
	}, nil
}

// Setup creates the schema that opts names (unless it exists) and the
// store's three tables in it (unless they exist), in one transaction:
//
//	aguistate_events      (thread bytea, pos bigint, event bytea, PRIMARY KEY (thread, pos))
//	aguistate_checkpoints (thread bytea PRIMARY KEY, pos bigint, data bytea)
//	aguistate_leases      (thread bytea PRIMARY KEY, holder text, expires timestamptz)
//
// Thread ids are bytea, so that any bytes are an id; tables that an
// earlier version made with text ids are altered to bytea (their ids'
// UTF-8 bytes). Run it once before the first [New] on a database, at
// deployment or at start: it is idempotent, and concurrent calls wait for
// one another.
func Setup(ctx context.Context, pool *pgxpool.Pool, opts *Options) error {
	t, err := newTables(opts)
	if err != nil {
		return err
	}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext($1))", "aguistate setup "+t.schema); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+pgx.Identifier{t.schema}.Sanitize()); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, fmt.Sprintf(`
CREATE TABLE IF NOT EXISTS %s (
	thread bytea NOT NULL,
	pos bigint NOT NULL,
	event bytea NOT NULL,
	PRIMARY KEY (thread, pos)
);
CREATE TABLE IF NOT EXISTS %s (
	thread bytea PRIMARY KEY,
	pos bigint NOT NULL,
	data bytea NOT NULL
);
CREATE TABLE IF NOT EXISTS %s (
	thread bytea PRIMARY KEY,
	holder text NOT NULL,
	expires timestamptz NOT NULL
)`, t.events, t.checkpoints, t.leases))
		if err != nil {
			return err
		}
		for _, table := range []string{"aguistate_events", "aguistate_checkpoints", "aguistate_leases"} {
			var typ string
			err := tx.QueryRow(ctx, `SELECT data_type FROM information_schema.columns
WHERE table_schema = $1 AND table_name = $2 AND column_name = 'thread'`, t.schema, table).Scan(&typ)
			if err != nil {
				return err
			}
			if typ == "text" { // made by an earlier version
				name := pgx.Identifier{t.schema, table}.Sanitize()
				if _, err := tx.Exec(ctx, "ALTER TABLE "+name+" ALTER COLUMN thread TYPE bytea USING convert_to(thread, 'UTF8')"); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("aguistate: postgres: set up schema %q: %w", t.schema, err)
	}
	return nil
}
