// The Consumer: what readers see of a thread, and the one path by which
// every change to it is committed.

package aguistate

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/aguistate/aguistate/internal/jsonv"
)

// Consumer holds one thread's agent state and messages. It applies an
// AG-UI event stream to them, as the AG-UI state/messages draft spec says.
//
// A Consumer is safe for concurrent use: readers see it as it was between
// two events, while one goroutine applies a stream. The values it returns
// are immutable views it shares, not copies.
type Consumer struct {
	opts Options
	cur  atomic.Pointer[view]
	subs subscribers

	mu     sync.Mutex   // serialises writers; guards what follows
	concat jsonv.Concat // makes streamed text cost its length once
}

// view is everything a reader can see. It is never changed once published:
// each change makes a new one that shares what the change did not touch.
type view struct {
	state    *jsonv.Node
	messages []Message
	index    map[string]int // message id → position; messages without an id are not in it
	diverged bool
	events   int // events given to Apply so far, rejected ones included

	threadID, runID string        // of the last run started, "" before one
	interrupts      []*jsonv.Node // pending interrupts of the last run; never edited
	chunks          []chunkStream // open chunk streams, one per lane; never edited
}

// nextPosition is the position of the next event given to the Consumer
// (see [Event].Position): one more than the events it has been given.
func (v *view) nextPosition() int { return v.events + 1 }

// New returns a Consumer whose state is {} and which holds no messages, as
// the reference client starts. A nil opts means the defaults.
func New(opts *Options) *Consumer {
	c := &Consumer{}
	if opts != nil {
		c.opts = *opts
	}
	c.opts = c.opts.withDefaults()
	c.cur.Store(&view{state: jsonv.NewObject(nil, nil)})
	return c
}

// State returns the current state, an immutable view.
func (c *Consumer) State() Value { return valueOf(c.cur.Load().state) }

// Messages returns the held messages in order. The slice is new on each
// call; the messages are immutable views.
func (c *Consumer) Messages() []Message {
	ms := c.cur.Load().messages
	return append([]Message(nil), ms...)
}

// Diverged reports that a STATE_DELTA was skipped since the last snapshot
// or run input state. The state then differs from the producer's until the
// next snapshot (spec, Error Handling).
func (c *Consumer) Diverged() bool { return c.cur.Load().diverged }

// Apply applies one event, given as its JSON text in the AG-UI wire form.
//
// It returns nil when the event was applied, passed over or skipped. A
// skipped event changes nothing. Subscribers ([Change].Warning) and
// [Options].Logger get its warning, which wraps [ErrPatchFailed],
// [ErrStateRejected] or [ErrNoTarget].
//
// A fatal event returns an *[EventError] wrapping [ErrMalformedEvent] or
// [ErrLimit]. The Consumer is then as it was before the event, but for the
// count of events, which numbers the next one.
func (c *Consumer) Apply(event []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.cur.Load()
	ev := Event{Position: old.nextPosition()}
	t, err := c.step(old, &ev, event)
	if err != nil {
		counted := *old
		counted.events = ev.Position
		c.cur.Store(&counted)
		return &EventError{Position: ev.Position, Type: ev.Type, Err: err}
	}
	t.next.events = ev.Position
	ch := Change{Event: ev, Added: t.added, Replaced: t.replaced, Removed: t.removed}
	if t.warn != nil {
		ch.Warning = &EventError{Position: ev.Position, Type: ev.Type, Err: t.warn}
	}
	ch.StateChanged = t.stateChanged()
	ch.Diverged = t.next.diverged
	c.publish(t)
	c.notify(ch)
	return nil
}

// step applies the event text to old, filling in ev. It returns the work
// to publish, which skips the event when ValidateState refused its state,
// or a fatal error.
func (c *Consumer) step(old *view, ev *Event, text []byte) (*txn, error) {
	if len(text) > c.opts.MaxEventSize {
		return nil, fmt.Errorf("%w: the event is %d bytes, more than MaxEventSize (%d)", ErrLimit, len(text), c.opts.MaxEventSize)
	}
	var err error
	if ev.v, ev.Type, err = parseEvent(text, c.opts.MaxDepth); err != nil {
		return nil, err
	}
	t := c.begin(old)
	if err := t.dispatch(*ev); err != nil {
		return nil, err
	}
	if err := c.check(t); err != nil {
		if !errors.Is(err, ErrStateRejected) {
			return nil, err
		}
		t = c.begin(old) // the whole event is skipped
		t.warn, t.next.diverged = err, true
	}
	return t, nil
}

// StartRun loads a run's RunAgentInput JSON, read as
// [RunAgentInput.UnmarshalJSON] reads it. Its state, when present, becomes
// the state and the baseline of the run's deltas (spec, STATE_DELTA). Its
// messages that the Consumer does not hold (by id) are appended in order.
// Its threadId is the one [Consumer.NextInput] uses.
//
// It returns an error wrapping [ErrMalformedEvent], [ErrLimit] or
// [ErrStateRejected], and then changes nothing.
func (c *Consumer) StartRun(input []byte) error {
	in, err := parseRunInput(input, c.opts.MaxDepth)
	if err != nil {
		return apiError(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.begin(c.cur.Load())
	t.runInput(in)
	if err := c.check(t); err != nil {
		return apiError(err)
	}
	c.publish(t)
	return nil
}

// The commit path. Every change to a Consumer (an event, a run input, a
// restored checkpoint) is a txn: begin it from the current view, edit
// t.next, check it, and publish it.

// begin starts the work of one change from view old.
func (c *Consumer) begin(old *view) *txn {
	return &txn{old: old, next: *old, opts: &c.opts, concat: &c.concat}
}

// check returns an error wrapping ErrLimit when the view t built exceeds a
// limit, or one wrapping ErrStateRejected when Options.ValidateState
// refuses the state t made.
func (c *Consumer) check(t *txn) error {
	if err := t.checkLimits(&c.opts); err != nil {
		return err
	}
	if c.opts.ValidateState == nil || t.next.state == t.old.state {
		return nil
	}
	if err := c.opts.ValidateState(valueOf(t.next.state)); err != nil {
		return fmt.Errorf("%w: %w", ErrStateRejected, err)
	}
	return nil
}

// publish makes the view t built the one readers see. It stores a copy:
// a pointer into t would keep t alive, and with it t.old, and so every
// earlier view back to the first event.
func (c *Consumer) publish(t *txn) {
	v := t.next
	c.cur.Store(&v)
}
