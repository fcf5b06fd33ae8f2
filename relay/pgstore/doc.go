// Package pgstore keeps AG-UI thread logs and checkpoints in PostgreSQL, as
// a [relay.Store] that several replicas share.
//
// Use [Setup] once to create the tables (or migrate an earlier version's),
// then [New] with a pgx pool. The log is a table with one row per event and
// the primary key (tenant, thread, pos); checkpoints are a table with one
// row per thread; a third table holds a row per thread with its log's last
// position, its last run id and its lease, which expires by the server's
// clock. Every write of a thread locks its row first: an append updates it
// only if the log ends right before the events, and inserts them then, in
// one statement. Each append sends a NOTIFY on the channel
// "SCHEMA.aguistate_events" whose payload is the md5 (hex) of the thread
// id, after the tenant's name for a tenant other than ""; Follow LISTENs on
// it with one connection per Store and its tenants
// ([github.com/jackc/pgxlisten]) and reads the table when woken. Tenant
// names, thread ids and run ids are stored as bytea, so any id of at most
// [relay.MaxThreadID] bytes works, NUL and invalid UTF-8 included (an index
// row holds a tenant, an id and a position, well under PostgreSQL's limit
// of about 2,700 bytes).
//
// With a TTL ([Options].TTL), [Store.Sweep] removes the threads whose log
// has not grown for it, and a Store sweeps every [Options].SweepEvery.
//
// # Errors
//
// A server that cannot be reached is an error wrapping the driver's,
// beginning "aguistate: postgres:". An append cut off in the middle has
// written all its events or none; read the log to know which.
package pgstore
