package aguistate

import (
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/aguistate/aguistate/internal/jsonv"
)

// DefaultMaxEventSize is the largest event, in bytes of JSON text, that a
// Consumer accepts when [Options.MaxEventSize] is 0: 16 MiB.
const DefaultMaxEventSize = 16 << 20

// Options configures a [Consumer]. A nil *Options means the defaults. The
// Consumer copies the struct; changing it afterwards has no effect.
type Options struct {
	// Logger, when not nil, receives one record at level Warn for every
	// skipped event, with the attributes "event" (position, from 1), "type"
	// and "err", and one at level Error for a subscriber that panicked.
	// Default: nil, no logging.
	Logger *slog.Logger

	// MaxEventSize is the largest event accepted, in bytes of JSON text.
	// 0 means DefaultMaxEventSize; a larger event is a fatal error wrapping
	// ErrTooLarge. Valid range: 0 to the largest int.
	MaxEventSize int

	// MaxDepth is the deepest nesting of arrays and objects accepted in an
	// event. 0 means 1000. Deeper events are malformed (fatal). Valid range:
	// 0 to 1,000,000.
	MaxDepth int
}

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

	mu     sync.Mutex // serialises writers
	events int        // events given to Apply so far
}

// New returns a Consumer whose state is the empty object {} (as the
// reference client starts) and which holds no messages.
func New(opts *Options) *Consumer {
	c := &Consumer{}
	if opts != nil {
		c.opts = *opts
	}
	if c.opts.MaxEventSize <= 0 {
		c.opts.MaxEventSize = DefaultMaxEventSize
	}
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
// (ErrPatchFailed; a STATE_DELTA's also marks the state diverged), or an
// event naming a message or tool call that does not exist or cannot take it
// (ErrNoTarget).
//
// It returns an *EventError for a fatal error, wrapping ErrMalformedEvent,
// ErrMalformedPatch (with a *PatchError), ErrMalformedMessages or
// ErrTooLarge; the Consumer is then exactly as it was before the event.
func (c *Consumer) Apply(event []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.events++
	ev := Event{Index: c.events}
	if len(event) > c.opts.MaxEventSize {
		return &EventError{Index: ev.Index, Err: fmt.Errorf("%w: %d bytes, more than the limit of %d",
			ErrTooLarge, len(event), c.opts.MaxEventSize)}
	}
	var err error
	if ev.v, ev.Type, err = parseEvent(event, c.opts.MaxDepth); err != nil {
		return &EventError{Index: ev.Index, Err: err}
	}
	old := c.cur.Load()
	t := newTxn(old)
	if err := t.dispatch(ev); err != nil {
		return &EventError{Index: ev.Index, Type: ev.Type, Err: err}
	}
	ch := Change{Event: ev, Added: t.added, Replaced: t.replaced, Removed: t.removed}
	if t.warn != nil {
		ch.Warning = &EventError{Index: ev.Index, Type: ev.Type, Err: t.warn}
	}
	ch.State = !jsonv.Equal(old.state, t.next.state)
	ch.Diverged = t.next.diverged
	c.cur.Store(&t.next)
	c.notify(ch)
	return nil
}

// StartRun sets the starting value of a run from its RunAgentInput JSON
// (AG-UI RunAgentInput: threadId, runId, state, messages, ...). The input's
// state, when present, becomes the state and the baseline of the run's
// deltas (spec, STATE_DELTA); its messages that the Consumer does not hold
// (by id) are appended in order, the first of two with one id winning.
// Messages in a run input may lack an id. Its threadId is the one
// [Consumer.NextInput] uses.
// It returns an error wrapping ErrMalformedEvent or ErrMalformedMessages,
// and then changes nothing.
func (c *Consumer) StartRun(input []byte) error {
	n, err := jsonv.Parse(input, c.opts.MaxDepth)
	if err != nil {
		return fmt.Errorf("%w: run input: %w", ErrMalformedEvent, err)
	}
	if n.Kind() != jsonv.Object {
		return fmt.Errorf("%w: run input is a %s, not an object", ErrMalformedEvent, n.Kind())
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t := newTxn(c.cur.Load())
	if err := t.runInput(n); err != nil {
		return err
	}
	c.cur.Store(&t.next)
	return nil
}
