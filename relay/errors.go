// The errors of the stores (conflicts, positions out of range, no checkpoint, leases,
// cursors) and of the relay's edge.

package relay

import (
	"errors"
	"fmt"
)

// Sentinel errors. Match them with [errors.Is]; the typed errors below wrap
// them and carry the thread and positions. Do not depend on the text of
// error messages.
var (
	// ErrConflict reports an append at a position that is not the one after
	// the log's last, or a checkpoint past the log's last position. Another
	// writer has moved the thread on: nothing was written.
	ErrConflict = errors.New("aguistate: position conflict")

	// ErrOutOfRange reports a read after a position whose next entry the
	// log does not hold: it was trimmed, or the position is past the log's
	// last one. Start from the checkpoint instead.
	ErrOutOfRange = errors.New("aguistate: position not in the log")

	// ErrNoCheckpoint reports a thread that has no checkpoint.
	ErrNoCheckpoint = errors.New("aguistate: no checkpoint")

	// ErrLeased reports a thread whose lease another holder has (see
	// [Store.Lease]): another relay runs its current run.
	ErrLeased = errors.New("aguistate: thread leased")

	// ErrStopped reports a lease renewal of a thread whose run a
	// [Store.Stop] asked its holder to stop. The lease is still the
	// holder's.
	ErrStopped = errors.New("aguistate: run stopped")

	// ErrNotLeased reports a [Store.Stop] of a thread that no holder has an
	// unexpired lease of: no relay runs a run of it.
	ErrNotLeased = errors.New("aguistate: thread not leased")

	// ErrFull reports a write that would take a [Memory] past one of its
	// bounds when no thread can be evicted to make room: every other thread
	// holds a lease. Nothing was written.
	ErrFull = errors.New("aguistate: store full")

	// ErrBadCursor reports a cursor that the store's [Store.Threads]
	// cannot read: none of its listings gives one of that form.
	ErrBadCursor = errors.New("aguistate: bad cursor")

	// ErrUnauthenticated is the error an [Authorize] hook wraps to refuse a
	// request that does not say who sends it, or not in a way it accepts:
	// the relay answers 401.
	ErrUnauthenticated = errors.New("aguistate: not authenticated")

	// ErrForbidden is the error an [Authorize] hook wraps to refuse a
	// request whose sender may not do what it asks: the relay answers 403.
	ErrForbidden = errors.New("aguistate: forbidden")

	// ErrNotRunning reports a stop ([Stop]) of a thread that has no run in
	// progress: the relay answered 409.
	ErrNotRunning = errors.New("aguistate: no run in progress")
)

// ConflictError reports a write at a position the log's end does not
// allow. It wraps [ErrConflict]; use [errors.As] to get it.
type ConflictError struct {
	// Thread is the thread id.
	Thread string
	// Pos is the position given: of the first event appended, or of the
	// checkpoint.
	Pos int64
	// Last is the log's last position when the store checked, 0 for a
	// thread with no log. Other writers may have moved it on since.
	Last int64
}

// Error returns "aguistate: position conflict: thread "T": position P,
// the log ends at L". Do not depend on the text.
func (e *ConflictError) Error() string {
	return fmt.Sprintf("aguistate: position conflict: thread %q: position %d, the log ends at %d",
		e.Thread, e.Pos, e.Last)
}

// Unwrap returns [ErrConflict].
func (e *ConflictError) Unwrap() error { return ErrConflict }

// RangeError reports a read after a position whose next entry the log does
// not hold. It wraps [ErrOutOfRange]; use [errors.As] to get it.
type RangeError struct {
	// Thread is the thread id.
	Thread string
	// After is the position the read was to continue after.
	After int64
	// Trimmed is true when the entry at After+1 was trimmed, false when
	// After is past the log's last position (or negative).
	Trimmed bool
}

// Error returns "aguistate: position not in the log: thread "T": entries
// after N were trimmed" or "...: N is past the log's end". Do not depend on
// the text.
func (e *RangeError) Error() string {
	if e.Trimmed {
		return fmt.Sprintf("aguistate: position not in the log: thread %q: entries after %d were trimmed", e.Thread, e.After)
	}
	return fmt.Sprintf("aguistate: position not in the log: thread %q: %d is past the log's end", e.Thread, e.After)
}

// Unwrap returns [ErrOutOfRange].
func (e *RangeError) Unwrap() error { return ErrOutOfRange }
