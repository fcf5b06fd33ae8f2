// The tables for the log, checkpoints and threads, and Setup, which creates them or migrates
// an earlier version's.

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
	threads     string // quoted, qualified
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
		threads:     pgx.Identifier{schema, "aguistate_threads"}.Sanitize(),
		channel:     schema + ".aguistate_events",
	}, nil
}

// Setup creates the schema that opts names (unless it exists) and the
// store's three tables in it (unless they exist), in one transaction:
//
//	aguistate_events      (tenant bytea, thread bytea, pos bigint, event bytea,
//	                       PRIMARY KEY (tenant, thread, pos))
//	aguistate_checkpoints (tenant bytea, thread bytea, pos bigint, data bytea,
//	                       PRIMARY KEY (tenant, thread))
//	aguistate_threads     (tenant bytea, thread bytea, updated_at timestamptz,
//	                       last_pos bigint, last_run bytea, holder bytea,
//	                       expires timestamptz, stop smallint,
//	                       PRIMARY KEY (tenant, thread))
//
// and indexes of aguistate_threads on (tenant, updated_at, thread), for
// the listing, and on updated_at, for [Store.Sweep]. A thread's row in aguistate_threads holds its log's last
// position and the time of its last append, its last run id, and its
// lease: every write of the thread locks that row first. Tenant names,
// thread ids, run ids and holders are bytea, so that any bytes are one.
//
// Setup migrates the tables that earlier versions made, keeping every row:
// text thread ids become bytea (their UTF-8 bytes); tables without a
// tenant column get one, and their rows belong to tenant ""; the table
// aguistate_leases is folded into aguistate_threads, which gets a row for
// each thread with a log or a checkpoint. Relays of an earlier version
// must not run on the migrated tables.
//
// Run Setup once before the first [New] on a database, at deployment or at
// start: it is idempotent, and concurrent calls wait for one another.
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
		if err := migrate(ctx, tx, t); err != nil {
			return err
		}
		var fresh bool // the threads table is new: fill it from the others
		if err := tx.QueryRow(ctx, "SELECT to_regclass($1) IS NULL", t.threads).Scan(&fresh); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, fmt.Sprintf(`
CREATE TABLE IF NOT EXISTS %[1]s (
	tenant bytea NOT NULL DEFAULT '',
	thread bytea NOT NULL,
	pos bigint NOT NULL,
	event bytea NOT NULL,
	PRIMARY KEY (tenant, thread, pos)
);
CREATE TABLE IF NOT EXISTS %[2]s (
	tenant bytea NOT NULL DEFAULT '',
	thread bytea NOT NULL,
	pos bigint NOT NULL,
	data bytea NOT NULL,
	PRIMARY KEY (tenant, thread)
);
CREATE TABLE IF NOT EXISTS %[3]s (
	tenant bytea NOT NULL,
	thread bytea NOT NULL,
	updated_at timestamptz NOT NULL,
	last_pos bigint NOT NULL DEFAULT 0,
	last_run bytea NOT NULL DEFAULT '',
	holder bytea NOT NULL DEFAULT '',
	expires timestamptz NOT NULL DEFAULT '-infinity',
	stop smallint NOT NULL DEFAULT 0,
	PRIMARY KEY (tenant, thread)
);
CREATE INDEX IF NOT EXISTS %[4]s ON %[3]s (tenant, updated_at, thread);
CREATE INDEX IF NOT EXISTS %[5]s ON %[3]s (updated_at)`,
			t.events, t.checkpoints, t.threads, pgx.Identifier{"aguistate_threads_updated"}.Sanitize(),
			pgx.Identifier{"aguistate_threads_idle"}.Sanitize()))
		if err != nil || !fresh {
			return err
		}
		return fill(ctx, tx, t)
	})
	if err != nil {
		return fmt.Errorf("aguistate: postgres: set up schema %q: %w", t.schema, err)
	}
	return nil
}

// migrate alters the events and checkpoints tables that an earlier
// version made, if any, to today's columns and keys.
func migrate(ctx context.Context, tx pgx.Tx, t tables) error {
	for _, table := range []string{"aguistate_events", "aguistate_checkpoints", "aguistate_leases"} {
		name := pgx.Identifier{t.schema, table}.Sanitize()
		columns := make(map[string]string)
		rows, err := tx.Query(ctx, `SELECT column_name, data_type FROM information_schema.columns
WHERE table_schema = $1 AND table_name = $2`, t.schema, table)
		if err != nil {
			return err
		}
		for rows.Next() {
			var column, typ string
			if err := rows.Scan(&column, &typ); err != nil {
				return err
			}
			columns[column] = typ
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if columns["thread"] == "text" { // made by the first version
			if _, err := tx.Exec(ctx, "ALTER TABLE "+name+" ALTER COLUMN thread TYPE bytea USING convert_to(thread, 'UTF8')"); err != nil {
				return err
			}
		}
		if columns["thread"] == "" || columns["tenant"] != "" || table == "aguistate_leases" {
			continue
		}
		key := "tenant, thread, pos"
		if table == "aguistate_checkpoints" {
			key = "tenant, thread"
		}
		var pkey string
		err = tx.QueryRow(ctx, `SELECT conname FROM pg_constraint WHERE conrelid = $1::regclass AND contype = 'p'`, name).Scan(&pkey)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, fmt.Sprintf(`ALTER TABLE %s ADD COLUMN tenant bytea NOT NULL DEFAULT '',
DROP CONSTRAINT %s, ADD PRIMARY KEY (%s)`, name, pgx.Identifier{pkey}.Sanitize(), key))
		if err != nil {
			return err
		}
	}
	return nil
}

// fill gives a new threads table a row for each thread of tenant "" that
// has a log or a checkpoint, and the leases of the table aguistate_leases
// that an earlier version made, which it drops. Their threads' time of
// last append is unknown: it is now.
func fill(ctx context.Context, tx pgx.Tx, t tables) error {
	_, err := tx.Exec(ctx, fmt.Sprintf(`
INSERT INTO %[1]s (tenant, thread, updated_at, last_pos)
SELECT tenant, thread, clock_timestamp(), max(pos) FROM %[2]s GROUP BY tenant, thread;
INSERT INTO %[1]s (tenant, thread, updated_at)
SELECT tenant, thread, clock_timestamp() FROM %[3]s ON CONFLICT DO NOTHING`, t.threads, t.events, t.checkpoints))
	if err != nil {
		return err
	}
	leases := pgx.Identifier{t.schema, "aguistate_leases"}.Sanitize()
	var old bool
	if err := tx.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", leases).Scan(&old); err != nil || !old {
		return err
	}
	_, err = tx.Exec(ctx, fmt.Sprintf(`
INSERT INTO %[1]s AS t (tenant, thread, updated_at, holder, expires)
SELECT '', thread, clock_timestamp(), convert_to(holder, 'UTF8'), expires FROM %[2]s
ON CONFLICT (tenant, thread) DO UPDATE SET holder = excluded.holder, expires = excluded.expires;
DROP TABLE %[2]s`, t.threads, leases))
	return err
}
