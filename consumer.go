package aguistate

import (
	"context"
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
	// and "err". Default: nil, no logging.
	Logger *slog.Logger

	// OnWarning, when not nil, is called with an *EventError for every
	// skipped event, after the Consumer has moved past it and before Apply
	// returns. It must not call the Consumer's Apply or Run. Default: nil.
	OnWarning func(err error)

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

	mu     sync.Mutex // serialises writers
	events int        // events given to Apply so far
}

// view is everything a reader can see, replaced whole after each event.
type view struct {
	state    *jsonv.Node
	messages []Message
	diverged bool
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
// STATE_SNAPSHOT (or since New), so that the state is known to differ from
// the producer's (spec, Error Handling).
func (c *Consumer) Diverged() bool { return c.cur.Load().diverged }

// Apply applies one event, given as its JSON text in the AG-UI wire form.
//
// It returns nil when the event was applied, passed over (a type this
// Consumer does not act on), or skipped as a warning: a well-formed patch
// that fails to apply (ErrPatchFailed) leaves everything as it was, marks
// the state diverged, and is reported through [Options.Logger] and
// [Options.OnWarning].
//
// It returns an *EventError for a fatal error, wrapping ErrMalformedEvent,
// ErrMalformedPatch (with a *PatchError), ErrMalformedMessages or
// ErrTooLarge; the Consumer is then exactly as it was before the event.
func (c *Consumer) Apply(event []byte) error {
	c.mu.Lock()
	c.events++
	index := c.events
	old := c.cur.Load()
	next, typ, warn, err := c.step(old, event)
	if err == nil {
		c.cur.Store(next)
	}
	c.mu.Unlock()
	if err != nil {
		return &EventError{Index: index, Type: typ, Err: err}
	}
	if warn != nil {
		c.warn(context.Background(), &EventError{Index: index, Type: typ, Err: warn})
	}
	return nil
}

func (c *Consumer) warn(ctx context.Context, err *EventError) {
	if c.opts.Logger != nil {
		c.opts.Logger.LogAttrs(ctx, slog.LevelWarn, "aguistate: event skipped",
			slog.Int("event", err.Index), slog.String("type", err.Type), slog.Any("err", err.Err))
	}
	if c.opts.OnWarning != nil {
		c.opts.OnWarning(err)
	}
}

// step computes the view after one event without publishing it. warn is
// the reason the event was skipped; err is a fatal error.
func (c *Consumer) step(v *view, data []byte) (next *view, typ string, warn, err error) {
	if len(data) > c.opts.MaxEventSize {
		return nil, "", nil, fmt.Errorf("%w: %d bytes, more than the limit of %d", ErrTooLarge, len(data), c.opts.MaxEventSize)
	}
	ev, typ, err := parseEvent(data, c.opts.MaxDepth)
	if err != nil {
		return nil, typ, nil, err
	}
	switch typ {
	case typeStateSnapshot:
		snap, err := field(ev, "snapshot")
		if err != nil {
			return nil, typ, nil, err
		}
		return &view{state: snap, messages: v.messages}, typ, nil, nil
	case typeStateDelta:
		ops, err := decodePatch(ev.Get("delta"))
		if err != nil {
			return nil, typ, nil, err
		}
		state, err := applyPatch(v.state, ops)
		if err != nil {
			return &view{state: v.state, messages: v.messages, diverged: true}, typ, err, nil
		}
		return &view{state: state, messages: v.messages, diverged: v.diverged}, typ, nil, nil
	case typeMessagesSnapshot:
		snap, err := decodeMessages(ev.Get("messages"), false)
		if err != nil {
			return nil, typ, nil, err
		}
		return &view{state: v.state, messages: reconcile(v.messages, snap), diverged: v.diverged}, typ, nil, nil
	}
	return v, typ, nil, nil
}

// StartRun sets the starting value of a run from its RunAgentInput JSON
// (AG-UI RunAgentInput: threadId, runId, state, messages, ...). The input's
// state, when present, becomes the state and the baseline of the run's
// deltas (spec, STATE_DELTA); its messages that the Consumer does not hold
// (by id) are appended in order. Messages in a run input may lack an id.
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
	next, err := startRun(c.cur.Load(), n)
	if err != nil {
		return err
	}
	c.cur.Store(next)
	return nil
}

func startRun(v *view, input *jsonv.Node) (*view, error) {
	next := *v
	if s := input.Get("state"); s != nil {
		next.state, next.diverged = s, false
	}
	if ms := input.Get("messages"); ms != nil {
		add, err := decodeMessages(ms, true)
		if err != nil {
			return nil, err
		}
		next.messages = appendUnseen(v.messages, add)
	}
	return &next, nil
}

// appendUnseen returns held followed by the messages of add whose id held
// does not have (messages without an id are always appended).
func appendUnseen(held, add []Message) []Message {
	seen := make(map[string]struct{}, len(held))
	for _, m := range held {
		seen[m.ID] = struct{}{}
	}
	out := held[:len(held):len(held)]
	for _, m := range add {
		if _, ok := seen[m.ID]; ok && m.ID != "" {
			continue
		}
		out = append(out, m)
	}
	return out
}
