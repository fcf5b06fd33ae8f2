// Checkpoints: when a run saves one, and the trims of the log it allows.

package relay

import (
	"context"

	"github.com/aguistate/aguistate"
)

// checkpoint is a checkpoint to save: a Clone of the thread's Consumer at
// a position (written as a checkpoint when saved, outside t.mu), the
// position before which the log may then be trimmed, and the one before
// which it is to be trimmed once the hub has passed it (0 when the trim is
// not held back).
type checkpoint struct {
	pos, trim, held int64
	at              *aguistate.Consumer
}

// checkpointDue returns the checkpoint to save when every events have come
// since the last one, else nil. The log keeps KeepEvents events before it,
// and those that this relay's viewers have not yet got (see trimFloor):
// that part of the trim is held back until the hub and the viewers it
// dropped have passed it, or the thread's last use ends (see heldTrim).
// It costs O(1): the checkpoint's text, O(thread), is written by
// saveCheckpoint, which the caller calls once it has let go of t.mu. The
// caller holds t.mu.
func (t *thread) checkpointDue(every int) *checkpoint {
	if t.c == nil || t.pos-t.cpPos < int64(every) {
		return nil
	}
	t.cpPos = t.pos
	cp := &checkpoint{pos: t.pos, trim: t.pos - int64(t.r.o.KeepEvents), at: t.c.Clone()}
	if floor := t.trimFloor(); floor >= 0 && floor+1 < cp.trim {
		cp.trim, cp.held = floor+1, cp.trim
	}
	return cp
}

// heldTrim returns the position before which the log is to be trimmed now
// that nothing holds it back (see trimFloor), or 0. The caller holds t.mu.
func (t *thread) heldTrim() int64 {
	before := t.trimTo
	if floor := t.trimFloor(); before == 0 || floor >= 0 && floor+1 < before {
		return 0
	}
	t.trimTo = 0
	return before
}

// saveCheckpoint saves cp (when not nil) and trims the log before it as
// far as cp allows; the rest of its trim waits for the hub (heldTrim).
func (r *Relay) saveCheckpoint(ctx context.Context, t *thread, cp *checkpoint) {
	if cp == nil {
		return
	}
	err := t.store.SaveCheckpoint(ctx, t.id, cp.pos, cp.at.Checkpoint())
	if err == nil {
		err = t.store.Trim(ctx, t.id, cp.trim)
	}
	if err != nil {
		r.o.Logger.Warn("aguistate: relay: saving a checkpoint failed", "thread", t.id, "pos", cp.pos, "err", err)
		return
	}
	if cp.held > 0 {
		t.mu.Lock()
		t.trimTo = max(t.trimTo, cp.held)
		before := t.heldTrim()
		t.mu.Unlock()
		r.trim(ctx, t, before)
	}
}

// trim trims t's log before position before, unless before is 0.
func (r *Relay) trim(ctx context.Context, t *thread, before int64) {
	if before == 0 {
		return
	}
	if err := t.store.Trim(ctx, t.id, before); err != nil {
		r.o.Logger.Warn("aguistate: relay: trimming the log failed", "thread", t.id, "before", before, "err", err)
	}
}
