// The Store interface: a thread's log of events and its latest checkpoint.

package relay

import (
	"context"
	"iter"
	"time"
)

// Entry is one event of a thread's log.
type Entry struct {
	// Pos is the event's position in the thread, counted from 1.
	Pos int64
	// Event is the event's JSON text, byte for byte as appended. It is a
	// copy: the caller may keep and modify it.
	Event []byte
}

// ThreadInfo describes a thread in a listing ([Store.Threads]).
type ThreadInfo struct {
	// ID is the thread id.
	ID string
	// UpdatedAt is the store's clock at the thread's last append.
	UpdatedAt time.Time
	// Events is the log's last position: how many events the thread has had.
	Events int64
	// LastRunID is the last non-empty run id given with a lease of the
	// thread, or "".
	LastRunID string
	// Running is true when a holder has an unexpired lease of the thread: a
	// relay runs a run of it.
	Running bool
}

// MaxThreadsPage is the most threads that one call of [Store.Threads]
// returns.
const MaxThreadsPage = 1000

// MaxThreadID is the longest thread id, in bytes, that a [Store] keeps and
// a [Relay] takes; a Relay answers a longer one with 400.
const MaxThreadID = 1024

// MaxTenant is the longest tenant name, in bytes, that [Store.Tenant]
// takes.
const MaxTenant = 256

// Store keeps, per thread, a log of events, the latest checkpoint and a
// lease. The log runs from position 1 with no gap; trimming removes a
// prefix, up to the checkpoint. Thread ids are any strings of at most
// [MaxThreadID] bytes, NUL and invalid UTF-8 included; a store may refuse a
// longer one with an error. Threads share nothing. A Store is safe for
// concurrent use, also by several processes when its implementation keeps
// threads in a server.
//
// Every method takes a context first and returns, or has its sequence
// yield, an error wrapping the context's error when it ends first. A call
// that returns an error has changed nothing, except that a write cut off by
// a failing store or connection may have been made whole.
//
// A store wrapped in a struct that embeds it (struct{ relay.Store }, for
// metrics or logging) keeps every method, leases included; a wrapper that
// means to see a tenant's calls too wraps what Tenant returns.
type Store interface {
	// Append adds events at positions pos, pos+1, ... if the log's last
	// position is pos-1 (0 for a thread with no log), all or none: two
	// writers can never interleave. Otherwise it writes nothing and returns
	// a [*ConflictError]. With no events it does nothing and returns nil.
	// The store keeps copies of the events. After any other error the
	// events may all be in the log (the store failed after writing them),
	// never some of them: read the log to know. A driver that retries may
	// then even report a conflict with the caller's own events.
	Append(ctx context.Context, thread string, pos int64, events ...[]byte) error

	// Read returns the entries after position after, in order, to the end
	// of the log as the read reaches it: entries appended meanwhile may be
	// included. The sequence stops at the first error, which it yields with
	// a zero Entry; a [*RangeError] when the log does not hold the entry at
	// after+1 (trimmed) or after is past its last position. It reads the
	// store as it goes, in pages, and does not retry.
	Read(ctx context.Context, thread string, after int64) iter.Seq2[Entry, error]

	// Follow is Read that does not stop at the end of the log: it waits for
	// new entries and yields each once, in order, with none missed, until ctx
	// ends, when it yields ctx's error (wrapped) and stops. A follower that
	// falls behind a Trim gets a [*RangeError].
	Follow(ctx context.Context, thread string, after int64) iter.Seq2[Entry, error]

	// SaveCheckpoint stores data as the thread's checkpoint at position pos:
	// the thread once the events up to pos are applied, such as a Consumer's
	// Checkpoint after pos events. pos must be between 0 and the log's last
	// position, or it returns a [*ConflictError]. A checkpoint never moves
	// back: if the one held is at a later position, it is kept and
	// SaveCheckpoint returns nil. The store keeps a copy of data.
	SaveCheckpoint(ctx context.Context, thread string, pos int64, data []byte) error

	// LoadCheckpoint returns the thread's checkpoint and its position, or an
	// error wrapping [ErrNoCheckpoint] when it has none.
	LoadCheckpoint(ctx context.Context, thread string) (pos int64, data []byte, err error)

	// Trim removes the log's entries before position before, but none at or
	// after the checkpoint's position: the checkpoint and the log always
	// hold the whole thread, and the last entry stays. Without a checkpoint
	// it removes nothing. Reading after a removed position then yields a
	// [*RangeError].
	Trim(ctx context.Context, thread string, before int64) error

	// Lease takes the thread's lease for holder (a relay) until ttl from
	// now, when no other holder has a lease of it that has not expired, and
	// renews it when holder has it; otherwise it changes nothing and returns
	// an error wrapping [ErrLeased]. ttl is at least a millisecond; the
	// store's clock measures it (the server's, for a store in a server). A
	// non-empty run is kept as the thread's last run id, after the lease
	// ends too. When a [Store.Stop] has asked holder to stop since its last
	// renewal, Lease renews the lease, clears the request and returns an
	// error wrapping [ErrStopped]. The lease names the one relay that runs
	// the thread's current run: another relay that finds the run open and
	// the lease free may end the run, since nobody runs it.
	Lease(ctx context.Context, thread, holder, run string, ttl time.Duration) error

	// Release ends holder's lease of thread, and any stop asked of it, if
	// holder has it; it does nothing otherwise.
	Release(ctx context.Context, thread, holder string) error

	// Stop asks the holder of the thread's unexpired lease to stop its run:
	// its next Lease of the thread returns an error wrapping [ErrStopped].
	// It returns an error wrapping [ErrNotLeased] when no unexpired lease is
	// held.
	Stop(ctx context.Context, thread string) error

	// Threads lists the threads that have a log, newest change (append)
	// first: at most limit of them (1 to [MaxThreadsPage]: a limit outside
	// is taken as the nearest bound), after the page that cursor ends ("" for
	// the first page). It returns the cursor of the next page, "" when no
	// thread follows. A thread that does not change meanwhile is on exactly
	// one page; one that changes may move to the front. A page may hold
	// fewer than limit threads before the last. A cursor that the store
	// cannot read (no listing of it gave one of that form) returns an error
	// wrapping [ErrBadCursor]; the cursors are positions in the listing, and
	// one of the right form that no listing gave lists from that position.
	Threads(ctx context.Context, cursor string, limit int) (threads []ThreadInfo, next string, err error)

	// Delete removes the thread: its log, checkpoint, lease, stop, last run
	// id and listing entry. It removes a leased thread too. A thread
	// created again with the same id starts at position 1. A Follow of the
	// removed thread after a position past 0 yields a [*RangeError] (its
	// position is past the log's end). Deleting a thread that does not
	// exist does nothing.
	Delete(ctx context.Context, thread string) error

	// Tenant returns the store seen by tenant name: the same server and
	// options, and threads of its own, disjoint from every other tenant's
	// in every method. Calls with one name return stores that share their
	// threads. Tenants do not nest: on a store that Tenant returned,
	// Tenant(name) is the original's Tenant(name), and Tenant("") is the
	// original store. A name longer than [MaxTenant] bytes gives a store
	// whose every call returns an error.
	Tenant(name string) Store
}
