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
	state, err := applyPatch(t.next.state, ops, lim)
	if errors.Is(err, ErrLimit) {
		return err
	}
	if err != nil {
		t.warn, t.next.diverged = err, true
		return nil
	}
	t.next.state = state
	return nil
}
