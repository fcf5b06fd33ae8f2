// The work of one change: the view being built, and its edits to the message
// list.

package aguistate

import (
	"fmt"
	"strings"

	"github.com/aguistate/aguistate/internal/jsonv"
)

// txn is the work of one change (an event, a run input, a checkpoint): the
// view before it, the view being built, and what changed. Nothing in old
// is modified. [Consumer.begin] starts a txn, and next is published only
// when [Consumer.check] passes.
type txn struct {
	old    *view
	next   *view // a view of its own, never inside the txn: publishing it keeps nothing else
	opts   *Options
	pos    int           // the position of the event being applied, 0 for a local change
	concat *jsonv.Concat // the Consumer's, for text that streams in pieces
	edit   *jsonv.Edit   // the batch of the change's edits of messages and the list

	patched      *jsonv.Node // the state a STATE_DELTA made, if one did
	patchChanged bool        // whether that delta changed the state

	warn                     error       // the reason the event was skipped, if it was
	notice                   error       // a warning of an event that applies (ErrProtocolVersion), if any
	streamed                 streamed    // what the Pieces of its Change are made of (piece.go)
	added, replaced, removed []string    // message ids, in the order of the edits
	tooLarge                 error       // why the first message added or replaced that exceeds a limit does
	appended                 tokenTarget // the message a token event appended text to, if one did
	ownRun                   bool        // next.runView is the change's own copy (scope)
}

// scope returns the runView of the view being built, to change: a copy of
// the one it shares with the view before, made once per change.
func (t *txn) scope() *runView {
	if !t.ownRun {
		r := *t.next.runView
		t.next.runView, t.ownRun = &r, true
	}
	return t.next.runView
}

// ed returns the batch of the change's edits of messages and of the list:
// an edit changes in place what an earlier edit of the same change made.
// A value the batch made stands in one place only.
func (t *txn) ed() *jsonv.Edit {
	if t.edit == nil {
		t.edit = jsonv.NewEdit() // a txn made outside Consumer.begin
	}
	return t.edit
}

// concatText returns the string s (nil for none, or a value that is not a
// string, which is replaced) followed by piece, in time proportional to
// piece. piece may be a view of the event's text (token.go): what it
// returns holds a copy.
func (t *txn) concatText(s *jsonv.Node, piece string) *jsonv.Node {
	if s != nil && s.Kind() != jsonv.String {
		s = nil
	}
	if s == nil {
		piece = strings.Clone(piece)
	}
	return t.concat.Append(s, piece)
}

// with returns object o with member name set to v, in the change's batch.
func (t *txn) with(o *jsonv.Node, name string, v *jsonv.Node) *jsonv.Node {
	o, _ = t.ed().SetMember(o, name, v)
	return o
}

// message returns the held message with id, and its position.
func (t *txn) message(id string) (Message, int, bool) { return t.next.messages.Get(id) }

// warning returns the warning of the change: its notice, the reason it was
// skipped, both, or nil.
func (t *txn) warning() error {
	switch {
	case t.notice == nil:
		return t.warn
	case t.warn == nil:
		return t.notice
	}
	return fmt.Errorf("%w; %w", t.notice, t.warn)
}

// note records a warning about an event that still applies: the producer
// speaks another protocol version. The first note is kept.
func (t *txn) note(format string, args ...any) {
	if t.notice == nil {
		t.notice = fmt.Errorf("%w: %s", ErrProtocolVersion, fmt.Sprintf(format, args...))
	}
}

// noTarget skips the event with an ErrNoTarget warning. The first reason
// given by an event is kept.
func (t *txn) noTarget(format string, args ...any) {
	if t.warn == nil {
		t.warn = &noTargetError{format, args}
	}
}

// quoted shows a string in a warning as jsonv.Quote does, quoted only when
// the warning is read.
type quoted string

func (q quoted) String() string { return jsonv.Quote(string(q)) }

// noTargetError is the warning of an event skipped for want of its
// target: ErrNoTarget, with what was missing, written only when read, so
// that a skipped event costs no formatting that nobody reads.
type noTargetError struct {
	format string
	args   []any
}

func (e *noTargetError) Error() string {
	return ErrNoTarget.Error() + ": " + fmt.Sprintf(e.format, e.args...)
}

func (e *noTargetError) Unwrap() error { return ErrNoTarget }

// setMessage replaces the message at position i with m, which has the same id.
func (t *txn) setMessage(i int, m Message) {
	if t.next.messages.At(i).v == m.v {
		return
	}
	t.next.messages.set(t.ed().Owner(), i, m)
	t.replacedMessage(m)
}

// editMessage makes v the object of m, the message at position i: an edit
// that keeps its id, its role and its tool calls.
func (t *txn) editMessage(i int, m Message, v *jsonv.Node) {
	if v == m.v {
		return
	}
	m.v = v
	t.next.messages.update(t.ed().Owner(), i, m)
	t.replacedMessage(m)
}

func (t *txn) replacedMessage(m Message) {
	t.replaced = append(t.replaced, m.id)
	t.checkMessage(m)
}

// checkMessage records in tooLarge whether m, which the change added or
// replaced, with or without an id, exceeds the limits on one message, in
// O(1).
func (t *txn) checkMessage(m Message) {
	if lim := t.opts.messageLimits(); t.tooLarge == nil && !lim.fits(m.v) {
		t.tooLarge = lim.check("message "+jsonv.Quote(m.id), m.v)
	}
}

// insertMessage puts m, whose id is not held, at position i (0 to the
// number of messages).
func (t *txn) insertMessage(i int, m Message) {
	t.next.messages.insert(t.ed().Owner(), i, m)
	t.added = append(t.added, m.id)
	t.checkMessage(m)
}

// appendMessage adds m, whose id is not held, after the last message.
func (t *txn) appendMessage(m Message) { t.insertMessage(t.next.messages.Len(), m) }

// setMessages replaces the whole list with ms, whose ids are distinct,
// recording every message as removed and added.
func (t *txn) setMessages(ms []Message) {
	for m := range t.next.messages.All() {
		t.removed = append(t.removed, m.id)
	}
	for _, m := range ms {
		t.added = append(t.added, m.id)
		t.checkMessage(m)
	}
	t.next.messages = newMessageList(ms)
}
