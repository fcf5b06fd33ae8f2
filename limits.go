// Enforcing the limits of Options on what a change makes.

package aguistate

import (
	"fmt"

	"github.com/aguistate/aguistate/internal/jsonv"
)

// limits is the part of Options that bounds what one patch may make and
// do. A zero field means no bound.
type limits struct{ ops, size, depth, work int }

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
// options allow: the state, the number of messages, or a message that the
// event added or replaced, with or without an id. Each check costs O(1)
// per message changed.
func (t *txn) checkLimits(o *Options) error {
	if t.next.state != t.old.state {
		if err := o.stateLimits().check("the state", t.next.state); err != nil {
			return err
		}
	}
	if n := len(t.next.messages); n > o.MaxMessages && n > len(t.old.messages) {
		return fmt.Errorf("%w: %d messages, more than MaxMessages (%d)", ErrLimit, n, o.MaxMessages)
	}
	lim := o.messageLimits()
	for _, m := range t.touched {
		if err := lim.check("message "+jsonv.Quote(m.id), m.v); err != nil {
			return err
		}
	}
	return nil
}
