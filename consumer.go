package aguistate

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/aguistate/aguistate/internal/jsonv"
)

// Consumer holds one thread's agent state and messages and applies an AG-UI
// event stream to them, as the AG-UI state/messages draft spec says.
//
// A Consumer is safe for concurrent use: any number of goroutines may read
// it while one stream is applied, and a reader always sees the state and
// messages as they were between two events. Values it returns are immutable
// views shared with other readers, never half-applied.
type Consumer struct {
	opts Options
	cur  atomic.Pointer[view]
	subs subscribers

	mu     sync.Mutex   // serialises writers; guards what follows
	concat jsonv.Concat // makes streamed text cost its length once
}

// New returns a Consumer whose state is the empty object {} (as the
// reference client starts) and which holds no messages.
func New(opts *Options) *Consumer {
	c := &Consumer{}
	if opts != nil {
		c.opts = *opts
	}
	c.opts = c.opts.withDefaults()
	c.cur.Store(&view{state: jsonv.NewObject(nil, nil)})
	return c
}

// State returns the current state. It does not copy the state: the Value is
// an immutable view.
func (c *Consumer) State() Value { return valueOf(c.cur.Load().state) }

// Messages returns the held messages in order. The slice is new on each
// call; the messages in it are immutable views.
func (c *Consumer) Messages() []Message {
	ms := c.cur.Load().messages
	return append([]Message(nil), ms...)
}

// Diverged reports whether a STATE_DELTA has been skipped since the last
// STATE_SNAPSHOT or run input state (or since New), so that the state is
// known to differ from the producer's (spec, Error Handling).
func (c *Consumer) Diverged() bool { return c.cur.Load().diverged }

// Apply applies one event, given as its JSON text in the AG-UI wire form.
//
// It returns nil when the event was applied, passed over (a type the
// Consumer does not act on), or skipped as a warning, which leaves
// everything as it was and is reported to subscribers ([Change].Warning)
// and to [Options.Logger]: a well-formed patch that fails to apply
// (ErrPatchFailed; a STATE_DELTA's also marks the state diverged), a state
// that Options.ValidateState refused (ErrStateRejected; also diverged), or
// an event naming a message or tool call that does not exist or cannot take
// it (ErrNoTarget).
//
// It returns an *EventError for a fatal error, wrapping ErrMalformedEvent,
// ErrMalformedPatch (with a *PatchError), ErrMalformedMessages or
// ErrLimit; the Consumer is then exactly as it was before the event, but
// for the count of events seen, which numbers the next event.
func (c *Consumer) Apply(event []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.cur.Load()
	ev := Event{Index: old.events + 1}
	t, err := c.step(old, &ev, event)
	if err != nil {
		counted := *old
		counted.events = ev.Index
		c.cur.Store(&counted)
		return &EventError{Index: ev.Index, Type: ev.Type, Err: err}
	}
	t.next.events = ev.Index
	ch := Change{Event: ev, Added: t.added, Replaced: t.replaced, Removed: t.removed}
	if t.warn != nil {
		ch.Warning = &EventError{Index: ev.Index, Type: ev.Type, Err: t.warn}
	}
	ch.State = !jsonv.Equal(old.state, t.next.state)
	ch.Diverged = t.next.diverged
	c.publish(t)
	c.notify(ch)
	return nil
}

// step applies the event text to old, filling in ev, and returns the work
// done, or a fatal error.
func (c *Consumer) step(old *view, ev *Event, text []byte) (*txn, error) {
	if len(text) > c.opts.MaxEventSize {
		return nil, fmt.Errorf("%w: %d bytes, more than the limit of %d", ErrLimit, len(text), c.opts.MaxEventSize)
	}
	var err error
	if ev.v, ev.Type, err = parseEvent(text, c.opts.MaxDepth); err != nil {
		return nil, err
	}
	t := newTxn(old, &c.opts)
	t.concat = &c.concat
	if err := t.dispatch(*ev); err != nil {
		return nil, err
	}
	if err := t.checkLimits(&c.opts); err != nil {
		return nil, err
	}
	if err := c.validate(t); err != nil {
		t = newTxn(old, &c.opts) // the whole event is skipped
		t.warn, t.next.diverged = err, true
	}
	return t, nil
}

// StartRun sets the starting value of a run from its RunAgentInput JSON
// (AG-UI RunAgentInput: threadId, runId, state, messages, ...). The input's
// state, when present, becomes the state and the baseline of the run's
// deltas (spec, STATE_DELTA); its messages that the Consumer does not hold
// (by id) are appended in order, the first of two with one id winning.
// Messages in a run input may lack an id. Its threadId is the one
// [Consumer.NextInput] uses.
// It returns an error wrapping ErrMalformedEvent, ErrMalformedMessages,
// ErrLimit or ErrStateRejected, and then changes nothing.
func (c *Consumer) StartRun(input []byte) error {
	n, err := parseJSON(input, c.opts.MaxDepth)
	if err != nil {
		return fmt.Errorf("%w (in the run input)", err)
	}
	if n.Kind() != jsonv.Object {
		return fmt.Errorf("%w: run input is a %s, not an object", ErrMalformedEvent, n.Kind())
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t := newTxn(c.cur.Load(), &c.opts)
	if err := t.runInput(n); err != nil {
		return err
	}
	if err := t.checkLimits(&c.opts); err != nil {
		return err
	}
	if err := c.validate(t); err != nil {
		return err
	}
	c.publish(t)
	return nil
}

// publish makes the view t built the one readers see. It stores a copy:
// a pointer into t would keep t alive, and with it t.old, and so every
// earlier view back to the first event.
func (c *Consumer) publish(t *txn) {
	v := t.next
	c.cur.Store(&v)
}

// validate runs Options.ValidateState on the state t made, when it made
// one.
func (c *Consumer) validate(t *txn) error {
	if c.opts.ValidateState == nil || t.next.state == t.old.state {
		return nil
	}
	if err := c.opts.ValidateState(valueOf(t.next.state)); err != nil {
		return fmt.Errorf("%w: %w", ErrStateRejected, err)
	}
	return nil
}
