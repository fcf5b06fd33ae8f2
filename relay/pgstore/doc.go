// Package pgstore keeps AG-UI thread logs and checkpoints in PostgreSQL, as
// a [relay.Store] that several replicas share.
//
// Use [Setup] once to create the tables, then [New] with a pgx pool. The
// log is a table with one row per event and the primary key (thread, pos);
// an append inserts its events only if the log ends right before them, in
// one statement, and the primary key makes two concurrent appends at one
// position a conflict. Checkpoints are a table with one row per thread,
// and so are leases ([relay.Leaser]), which expire by the server's clock.
// Each append sends a NOTIFY on the channel "SCHEMA.aguistate_events" whose
// payload is the md5 of the thread id (hex); Follow LISTENs on it with one
// connection per Store ([github.com/jackc/pgxlisten]) and reads the table
// when woken. Thread ids are stored as bytea, so any id of at most
// [relay.MaxThreadID] bytes works, NUL and invalid UTF-8 included (an
// index row holds one id and a position, well under PostgreSQL's limit of
// about 2,700 bytes).
//
// # Errors
//
// A server that cannot be reached is an error wrapping the driver's,
// beginning "aguistate: postgres:". An append cut off in the middle has
// written all its events or none; read the log to know which.
package pgstore
