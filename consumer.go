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
// two events, while one goroutine applies a stream. [Consumer.RunAgent]
// and [Consumer.Follow] take one call at a time and refuse another with
// [ErrRunInProgress]. The values it returns are immutable views it shares,
// not copies.
type Consumer struct {
	opts      Options
	cur       atomic.Pointer[view]
	subs      subscribers
	streaming atomic.Bool // claimed by RunAgent and Follow while they run

	mu        sync.Mutex   // serialises writers; guards what follows
	concat    jsonv.Concat // makes streamed text cost its length once
	edit      *jsonv.Edit  // the batch of edits of the change being made, sealed between changes
	work      txn          // the change being made; see begin and done
	touched   []construct  // the buffer of work.streamed.touched between changes, empty
	replaced  []string     // the buffer of work.replaced between changes, empty
	target    tokenTarget  // the message the last event appended text to (token.go)
	token     token        // the token event being applied, if it is one (token.go)
	lastToken string       // the id of the last token event, which the next shares
}

// view is everything a reader can see. It is never changed once published:
// each change makes a new one that shares what the change did not touch.
type view struct {
	state    *jsonv.Node
	messages messageList // the held messages; reach them through its methods only
	diverged bool
	events   int // events given to Apply so far, rejected ones included

	open    keyedSet[construct] // open constructs, in the order they opened
	chunks  []chunkStream       // open chunk streams, one per lane; never edited
	eventID string              // the SSE id of the stream after the last event applied from one

	// runView is what changes only at run boundaries, steps, spans and
	// subagents, and tool calls starting: views share it until a change
	// changes it (txn.scope), so that a token's view is small.
	*runView
}

// runView is the part of a view that seldom changes. It is never changed
// once published.
type runView struct {
	threadID, runID string             // of the last run started, "" before one
	run             runPhase           // where the thread is in the run lifecycle
	interrupts      []*jsonv.Node      // pending interrupts of the last run; never edited
	steps           keyedSet[openStep] // open steps of the run, in the order they opened
	spans           keyedSet[openSpan] // open reasoning spans of the run, in order
	subagents       keyedSet[subagent] // subagents the run started, in order
	calls           keyedSet[runCall]  // tool calls the last run started, in order (pending.go)
	ends            []*jsonv.Node      // RUN_FINISHED and RUN_ERROR that ended the last run; never edited
	thinking        thinkingIDs        // what a pre-1.0 producer's THINKING_* events continue (legacy.go)
}

// emptyRun is the runView of a new thread.
var emptyRun runView

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
	c.cur.Store(&view{state: jsonv.NewObject(nil, nil), runView: &emptyRun})
	return c
}

// State returns the current state, an immutable view.
func (c *Consumer) State() Value { return valueOf(c.cur.Load().state) }

// Messages returns the held messages in order. The slice is new on each
// call, made in O(n); the messages are immutable views. To read the
// messages that a [Change] names, use [Consumer.Message].
func (c *Consumer) Messages() []Message { return c.cur.Load().messages.Slice() }

// Message returns the held message with id, in O(log n) of the messages
// held, and whether there is one. A run input's message without an id is
// found only by Messages.
func (c *Consumer) Message(id string) (Message, bool) {
	m, _, ok := c.cur.Load().messages.Get(id)
	return m, ok
}

// Diverged reports that a STATE_DELTA was skipped since the last snapshot
// or run input state. The state then differs from the producer's until the
// next snapshot (spec, Error Handling).
func (c *Consumer) Diverged() bool { return c.cur.Load().diverged }

// Apply applies one event, given as its JSON text in the AG-UI wire form.
//
// It returns nil when the event was applied, passed over or skipped.
// Subscribers ([Change].Warning) and [Options].Logger get a skipped
// event's warning, which wraps [ErrPatchFailed], [ErrStateRejected] or
// [ErrNoTarget]. A skipped event changes nothing but the count of events
// and its framing: the chunk streams that an event of its type closes (a
// chunk event still opens or goes on with its own), as the reference
// client's chunk expansion does before it applies an event; and the
// diverged flag, which a failed STATE_DELTA or a refused state sets. One
// event applies in part: a RUN_STARTED whose input's state ValidateState
// refuses starts its run without that state.
//
// A fatal event returns an *[EventError] wrapping [ErrMalformedEvent] or
// [ErrLimit]. The Consumer is then as it was before the event, but for the
// count of events, which numbers the next one ([Event].Position).
func (c *Consumer) Apply(event []byte) error {
	_, err := c.apply(event, nil)
	return err
}

// apply is Apply, returning the event as it was applied. id, when not nil,
// is the SSE id of the stream after the event, which the Consumer keeps
// (see follow.go).
func (c *Consumer) apply(event []byte, id *string) (Event, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	defer c.done()
	old := c.cur.Load()
	ev := Event{Position: old.nextPosition()}
	defer func() { c.token = token{} }() // its delta may be a view of event
	t, err := c.step(old, &ev, event)
	if err != nil {
		return ev, c.rejectLocked(&EventError{Type: ev.Type, Err: err})
	}
	t.next.events = ev.Position
	if id != nil {
		t.next.eventID = *id
	}
	ch := Change{Event: ev, Added: t.added, Replaced: t.replaced, Removed: t.removed}
	if w := t.warning(); w != nil {
		ch.Warning = &EventError{Position: ev.Position, Type: ev.Type, Err: w}
	}
	ch.StateChanged = t.stateChanged()
	ch.Diverged = t.next.diverged
	if c.subs.listening() {
		ch.Pieces = t.pieces(old)
	}
	c.publish(t)
	c.target = t.appended
	c.notify(ch)
	return ev, nil
}

// reject counts a fatal event that never reached Apply (too large, or
// broken framing), and returns ee with the event's position in the thread.
func (c *Consumer) reject(ee *EventError) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rejectLocked(ee)
}

// rejectLocked is reject, with c.mu held: the rejected event counts, so
// that the next one has the next position.
func (c *Consumer) rejectLocked(ee *EventError) error {
	counted := *c.cur.Load()
	counted.events++
	ee.Position = counted.events
	c.cur.Store(&counted)
	c.target = tokenTarget{}
	return ee
}

// step applies the event text to old, filling in ev. It returns the work
// to publish, which skips the event when ValidateState refused its state,
// or a fatal error. A token event (token.go) takes the short path, and ev
// then holds no value: notify makes it from c.token for subscribers.
func (c *Consumer) step(old *view, ev *Event, text []byte) (*txn, error) {
	if len(text) > c.opts.MaxEventSize {
		return nil, fmt.Errorf("%w: the event is %d bytes, more than MaxEventSize (%d)", ErrLimit, len(text), c.opts.MaxEventSize)
	}
	tk, short := scanToken(text, c.lastToken)
	var err error
	if short {
		ev.Type, c.token, c.lastToken = tk.typ.name, tk, tk.id
	} else if ev.v, ev.Type, err = parseEvent(text, c.opts.MaxDepth); err != nil {
		return nil, err
	}
	t := c.begin(old)
	t.pos = ev.Position
	if short {
		err = t.applyToken(&tk, c.target)
	} else {
		err = t.dispatch(*ev)
	}
	if err != nil {
		return nil, err
	}
	if err := c.check(t); err != nil {
		if !errors.Is(err, ErrStateRejected) {
			return nil, err
		}
		if ev.v == nil {
			ev.v = tk.node()
		}
		return c.rejected(old, *ev, err)
	}
	return t, nil
}

// rejected returns the work of an event whose state ValidateState refused
// (why). The event is skipped but for its framing: the chunk streams an
// event of its type closes. A RUN_STARTED still starts its run, without its
// input's state, so that the rest of the run applies. Either way the state
// is marked diverged.
func (c *Consumer) rejected(old *view, ev Event, why error) (*txn, error) {
	t := c.begin(old)
	if in := ev.v.Get("input"); ev.Type == "RUN_STARTED" && in != nil && in.Kind() == jsonv.Object {
		ev.v = jsonv.WithMember(ev.v, "input", jsonv.WithoutMember(in, "state"))
		if err := t.dispatch(ev); err != nil {
			return nil, err
		}
		if err := c.check(t); err != nil {
			return nil, err
		}
	} else if err := t.closeChunks(eventTypes[ev.Type].chunks, ev.v); err != nil {
		return nil, err
	}
	t.warn, t.next.diverged = why, true
	return t, nil
}

// StartRun starts a run of the thread with its input, as read by
// [RunAgentInput.UnmarshalJSON] or built by [Consumer.NextInput]. It records
// the input's thread and run ids ([Consumer.ThreadID], [Consumer.RunID]).
// The input's state, when present, becomes the state and the baseline of
// the run's deltas (spec, STATE_DELTA). Its messages that the Consumer does
// not hold (by id) are appended in order. Subscribers get one [Change],
// with the zero Event, when it changed the state or the messages.
// [Consumer.RunAgent] calls it; call it yourself when you send the input
// another way.
//
// While interrupts are pending ([Consumer.Interrupts]), the input's Resume
// must answer each of them by its id, and cancel any whose "expiresAt" has
// passed, as in the reference client. It returns an error saying which
// are not, an error wrapping [ErrLimit] or [ErrStateRejected], or one
// wrapping [ErrMalformedEvent] for a message that cannot be sent or a
// Resume that is not an array of resume entries; it then changes nothing.
func (c *Consumer) StartRun(input RunAgentInput) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.startLocked(c.cur.Load(), input)
}

// startLocked is StartRun from view old, with c.mu held.
func (c *Consumer) startLocked(old *view, in RunAgentInput) error {
	defer c.done()
	for i, m := range in.Messages {
		if err := m.check(); err != nil {
			return apiError(fmt.Errorf("%w: message %d: %w (in the run input)", ErrMalformedEvent, i, err))
		}
	}
	if err := checkResume(old.interrupts, in.Resume, c.opts.MaxDepth); err != nil {
		return apiError(err)
	}
	t := c.begin(old)
	t.runInput(in)
	return apiError(c.commitLocal(t))
}

// ThreadID returns the id of the thread: that of the last run started (by
// RUN_STARTED or [Consumer.StartRun]), or "" before one.
func (c *Consumer) ThreadID() string { return c.cur.Load().threadID }

// RunID returns the id of the last run started (by RUN_STARTED or
// [Consumer.StartRun]), or "" before one.
func (c *Consumer) RunID() string { return c.cur.Load().runID }

// The commit path. Every change to a Consumer (an event, a run input, a
// restored checkpoint) is a txn: begin it from the current view, edit
// t.next, check it, and publish it.

// begin starts the work of one change from view old, with c.mu held. The
// change's edits are one batch, which edits in place nothing an earlier
// change made. The txn is the Consumer's, so that a change allocates only
// the view it makes: a caller of begin defers done, and a second begin
// ends the work of the first.
func (c *Consumer) begin(old *view) *txn {
	if c.edit == nil {
		c.edit = jsonv.NewEdit()
	}
	c.edit.Seal()
	next := new(view)
	*next = *old
	c.work = txn{old: old, next: next, opts: &c.opts, concat: &c.concat, edit: c.edit}
	c.work.streamed.touched, c.touched = c.touched, nil
	c.work.replaced, c.replaced = c.replaced, nil
	return &c.work
}

// done ends the work of a change, so that the Consumer keeps nothing of
// it: neither the view it started from nor one that failed. It keeps the
// small buffers of the constructs the change touched and of the messages
// it replaced, emptied, for the next: a Change's slices are copied for
// each subscriber (deliver).
func (c *Consumer) done() {
	if b := c.work.streamed.touched; cap(b) <= 16 {
		clear(b[:cap(b)])
		c.touched = b[:0]
	}
	if b := c.work.replaced; cap(b) <= 16 {
		clear(b[:cap(b)])
		c.replaced = b[:0]
	}
	c.work = txn{}
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

// commitLocal checks and publishes a local change (a run input, a message
// or state the application set), with c.mu held, and reports it to
// subscribers as a Change with the zero Event when it changed the state,
// the messages or the diverged flag. It returns the error of check, and
// then publishes nothing.
func (c *Consumer) commitLocal(t *txn) error {
	if err := c.check(t); err != nil {
		return err
	}
	ch := Change{Added: t.added, Replaced: t.replaced, Removed: t.removed, Diverged: t.next.diverged}
	ch.StateChanged = !jsonv.Equal(t.old.state, t.next.state)
	c.publish(t)
	if ch.StateChanged || ch.MessagesChanged() || t.next.diverged != t.old.diverged {
		c.notify(ch)
	}
	return nil
}

// publish makes the view t built the one readers see. That view is not
// inside t: a pointer into t would keep t alive, and with it t.old, and so
// every earlier view back to the first event.
func (c *Consumer) publish(t *txn) {
	c.cur.Store(t.next)
	c.target = tokenTarget{}
}
