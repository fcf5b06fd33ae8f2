// Change notifications: what each event did, and the subscribers told of it.

package aguistate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
)

// Change reports what one event, or one local change, did to a
// [Consumer]. Subscribers get one Change for each event applied, passed
// over or skipped, in stream order; a fatal event has none. They get one
// for each local change that changed the state, the messages or the
// diverged flag:
// [Consumer.AddMessages], [Consumer.SetState], [Consumer.PatchState] and
// [Consumer.StartRun].
type Change struct {
	// Event is the event as received, or the zero Event (Type "") for a
	// local change.
	Event Event
	// StateChanged reports that the event changed the state (RFC 6902
	// equality). A STATE_DELTA changes it when an operation adds or removes
	// a value, or writes one unequal to the value it replaces; a copy or
	// move unless it puts back the very value that was there. So a delta
	// that undoes its own operations reports a change. An empty delta, an
	// equal snapshot and a skipped patch leave it false.
	StateChanged bool
	// Added, Replaced and Removed are the ids of the messages the event
	// appended or inserted, changed in place (by value), and dropped.
	Added, Replaced, Removed []string
	// Pieces are what the event did to the text of messages and the
	// arguments of tool calls as they stream, in order: starts, text
	// appended, ends (see [Piece]). A local change has none, and neither
	// has the Change in which [Consumer.Follow] adopts a prelude: read
	// the messages that Added and Replaced name.
	Pieces []Piece
	// Warning is the *[EventError] of a skipped event, or nil. It wraps
	// [ErrPatchFailed], [ErrStateRejected] or [ErrNoTarget]. What a
	// skipped event may still change is in [Consumer.Apply]. It wraps
	// [ErrProtocolVersion] for an event of another protocol version, which
	// applies unless it wraps one of the others too.
	Warning error
	// Diverged is [Consumer.Diverged] after the event.
	Diverged bool
}

// MessagesChanged reports whether the event added, replaced or removed a
// message.
func (ch Change) MessagesChanged() bool {
	return len(ch.Added)+len(ch.Replaced)+len(ch.Removed) > 0
}

// subscribers is a Consumer's list of change callbacks.
type subscribers struct {
	mu   sync.Mutex
	next int
	fns  map[int]func(Change)
	keys []int // subscription order
}

// Subscribe registers fn to be called with each [Change] made after it
// returns. It returns a function that cancels the subscription; calling
// that more than once is safe.
//
// Delivery is synchronous. fn runs on the goroutine that made the change
// (the one calling Apply, Run or RunAgent for an event), after readers can
// see it and before the next one applies. Subscribers are called in the
// order they subscribed. No Change is dropped, so a slow fn slows the
// stream: hand the Change to a goroutine if that matters. fn may read the
// Consumer (State, Messages, Checkpoint, ...) but must not call a method
// that changes it (Apply, Run, RunAgent, StartRun, AddMessages, SetState,
// PatchState), which would deadlock. A panic in fn is recovered and logged
// to [Options].Logger; the other subscribers still get the Change. The
// slices in a Change belong to the subscriber.
func (c *Consumer) Subscribe(fn func(Change)) (cancel func()) {
	s := &c.subs
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fns == nil {
		s.fns = make(map[int]func(Change))
	}
	key := s.next
	s.next++
	s.fns[key] = fn
	s.keys = append(s.keys, key)
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.fns, key)
	}
}

// listening reports whether anyone subscribes, so that a Change need
// not be described in full for no one.
func (s *subscribers) listening() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.fns) > 0
}

// notify delivers ch to every subscriber.
func (c *Consumer) notify(ch Change) {
	if ch.Warning != nil {
		var ee *EventError
		ee, _ = ch.Warning.(*EventError)
		msg := "aguistate: event skipped"
		if !skipped(ch.Warning) {
			msg = "aguistate: event of another protocol version"
		}
		c.log(slog.LevelWarn, msg,
			slog.Int("event", ch.Event.Position), slog.String("type", ch.Event.Type), slog.Any("err", ee.Err))
	}
	s := &c.subs
	s.mu.Lock()
	fns := make([]func(Change), 0, len(s.fns))
	live := s.keys[:0]
	for _, k := range s.keys {
		if fn, ok := s.fns[k]; ok {
			fns = append(fns, fn)
			live = append(live, k)
		}
	}
	s.keys = live
	s.mu.Unlock()
	if len(fns) > 0 && ch.Event.v == nil && c.token.typ != nil {
		ch.Event.v = c.token.node() // a token event, which took the short path
	}
	for i, fn := range fns {
		c.deliver(fn, i, ch)
	}
}

// skipped reports whether warning w says that its event was skipped.
func skipped(w error) bool {
	return errors.Is(w, ErrNoTarget) || errors.Is(w, ErrPatchFailed) || errors.Is(w, ErrStateRejected)
}

// log writes a record to Options.Logger, when there is one. The event has
// already been applied, so a panic in the logger's handler is dropped
// rather than allowed to escape Apply.
func (c *Consumer) log(level slog.Level, msg string, attrs ...slog.Attr) {
	if c.opts.Logger == nil {
		return
	}
	defer func() { _ = recover() }()
	c.opts.Logger.LogAttrs(context.Background(), level, msg, attrs...)
}

func (c *Consumer) deliver(fn func(Change), i int, ch Change) {
	defer func() {
		if r := recover(); r != nil {
			c.log(slog.LevelError, "aguistate: subscriber panicked",
				slog.Int("subscriber", i), slog.Int("event", ch.Event.Position), slog.String("panic", fmt.Sprint(r)))
		}
	}()
	// Each subscriber gets its own slices.
	ch.Added = append([]string(nil), ch.Added...)
	ch.Replaced = append([]string(nil), ch.Replaced...)
	ch.Removed = append([]string(nil), ch.Removed...)
	ch.Pieces = append([]Piece(nil), ch.Pieces...)
	fn(ch)
}
