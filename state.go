// State events: STATE_SNAPSHOT and STATE_DELTA.

package aguistate

import (
	"errors"

	"github.com/aguistate/aguistate/internal/jsonv"
)

// stateSnapshot replaces the state wholesale, no merging (spec,
// STATE_SNAPSHOT), and ends any divergence.
func (t *txn) stateSnapshot(ev *jsonv.Node) error {
	f := eventFields(ev)
	snap := f.any("snapshot")
	if f.err != nil {
		return f.err
	}
	t.next.state, t.next.diverged = snap, false
	return nil
}

// stateDelta applies the event's RFC 6902 patch atomically (spec,
// STATE_DELTA and Error Handling): a malformed patch is fatal, one that
// fails to apply is a warning and changes nothing.
func (t *txn) stateDelta(ev *jsonv.Node) error {
	lim := t.opts.stateLimits()
	ops, err := decodePatch(ev.Get("delta"), lim)
	if err != nil {
		return err
	}
	state, changed, err := patchState(t.next.state, ops, lim)
	if errors.Is(err, ErrLimit) {
		return err
	}
	if err != nil {
		t.warn, t.next.diverged = err, true
		return nil
	}
	t.next.state, t.patched, t.patchChanged = state, state, changed
	return nil
}

// stateChanged reports whether the change made the state a different JSON
// value. A delta knows it from its operations (see patchState); any other
// new state is compared with the old one.
func (t *txn) stateChanged() bool {
	switch s := t.next.state; {
	case s == t.old.state:
		return false
	case s == t.patched:
		return t.patchChanged
	default:
		return !jsonv.Equal(t.old.state, s)
	}
}
