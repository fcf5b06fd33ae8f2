// Package relay keeps AG-UI threads durable for application servers that
// relay an agent's events to viewers: a log of each thread's events and its
// latest checkpoint, behind the small [Store] interface.
//
// Positions count a thread's events from 1, as the Consumer's event count
// does, so the checkpoint of a Consumer that has applied k events sits at
// position k and the log continues at k+1. [Store.Append] is a
// compare-and-set on the position: two replicas writing one thread can
// never interleave their events.
//
// Use [NewMemory] for a store in this process's memory (the default). The
// modules github.com/aguistate/aguistate/relay/redisstore and
// github.com/aguistate/aguistate/relay/pgstore keep threads in Redis and
// PostgreSQL, for several replicas and across restarts. The package
// github.com/aguistate/aguistate/relay/storetest holds the tests every
// implementation passes.
//
// # Errors
//
// A [*ConflictError] (wrapping [ErrConflict]) reports a position that is
// not the log's next one; a [*RangeError] (wrapping [ErrOutOfRange]) a read
// from a position the log no longer holds, after which a viewer needs the
// checkpoint; [ErrNoCheckpoint] a thread without one. Other errors, such as
// a store that does not answer, are the store's own: retry later.
package relay
