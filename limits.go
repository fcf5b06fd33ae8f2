// Enforcing the limits of Options on what a change makes.

package aguistate

import (
	"fmt"

	"github.com/aguistate/aguistate/internal/jsonv"
)

// envelopeDepth is how many levels of nesting an event, a run input or a
// checkpoint may add around the values that MaxDepth bounds: the deepest is
// a message of a RUN_STARTED's input, {"input":{"messages":[MESSAGE]}}, and
// the value of a patch operation, {"delta":[{"value":VALUE}]}. Limits bound
// the value, not its envelope, so what the Consumer holds it can read back.
const envelopeDepth = 3

// limits is the part of Options that bounds what one patch may make and
// do. A zero field means no bound.
type limits struct{ ops, size, depth, work int }

// fits reports whether n is within the size and depth the limits allow.
func (lim limits) fits(n *jsonv.Node) bool {
	return (lim.size <= 0 || n.Size() <= lim.size) && (lim.depth <= 0 || n.Depth() <= lim.depth)
}

// check fails with ErrLimit when n, called what, is larger or deeper than
// the limits allow.
func (lim limits) check(what string, n *jsonv.Node) error {
	if lim.size > 0 && n.Size() > lim.size {
		return fmt.Errorf("%w: %s would be %d bytes, more than %d", ErrLimit, what, n.Size(), lim.size)
	}
	if lim.depth > 0 && n.Depth() > lim.depth {
		return fmt.Errorf("%w: %s would nest %d deep, more than %d", ErrLimit, what, n.Depth(), lim.depth)
	}
	return nil
}

// checkLimits fails with ErrLimit when the view t built is larger than the
// options allow: the state, a message that the change added or replaced,
// with or without an id, new interrupts; or, when the change made them
// grow, the number of messages, their total size, the number of lanes
// with an open chunk stream, or what the run's scopes hold. Each check
// costs O(1) per value changed.
func (t *txn) checkLimits(o *Options) error {
	if t.next.state != t.old.state {
		if err := o.stateLimits().check("the state", t.next.state); err != nil {
			return err
		}
	}
	held, was := &t.next.messages, &t.old.messages
	if n := held.Len(); n > o.MaxMessages && n > was.Len() {
		return fmt.Errorf("%w: %d messages, more than MaxMessages (%d)", ErrLimit, n, o.MaxMessages)
	}
	if size := held.Size(); size > o.MaxTotalMessageSize && size > was.Size() {
		return fmt.Errorf("%w: the messages would be %d bytes in all, more than MaxTotalMessageSize (%d)", ErrLimit, size, o.MaxTotalMessageSize)
	}
	if n := len(t.next.chunks); n > o.MaxChunkLanes && n > len(t.old.chunks) {
		return fmt.Errorf("%w: %d lanes would have an open chunk stream, more than MaxChunkLanes (%d)", ErrLimit, n, o.MaxChunkLanes)
	}
	if size := t.next.scopeSize(); size > o.MaxScopeSize && size > t.old.scopeSize() {
		return fmt.Errorf("%w: the run's steps, reasoning spans and subagents would hold %d bytes, more than MaxScopeSize (%d)", ErrLimit, size, o.MaxScopeSize)
	}
	if t.tooLarge != nil {
		return t.tooLarge
	}
	if in := t.next.interrupts; len(in) > 0 && (len(t.old.interrupts) == 0 || &in[0] != &t.old.interrupts[0]) {
		return checkInterruptDepth(in, o.MaxDepth)
	}
	return nil
}

// checkInterruptDepth fails with ErrLimit when an interrupt nests deeper
// than max.
func checkInterruptDepth(interrupts []*jsonv.Node, max int) error {
	for i, in := range interrupts {
		if err := (limits{depth: max}).check(fmt.Sprintf("interrupt %d", i), in); err != nil {
			return err
		}
	}
	return nil
}

// checkDepth fails with ErrLimit when the state or a message of in nests
// deeper than max.
func (in RunAgentInput) checkDepth(max int) error {
	lim := limits{depth: max}
	if in.State.n != nil {
		if err := lim.check("the state", in.State.n); err != nil {
			return err
		}
	}
	for i, m := range in.Messages {
		if err := lim.check(fmt.Sprintf("message %d", i), m.v); err != nil {
			return err
		}
	}
	return nil
}
