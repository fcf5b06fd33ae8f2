// The work of one change: the view being built, and its edits to the message
// list.

package aguistate

import (
	"fmt"

	"github.com/aguistate/aguistate/internal/jsonv"
)

// txn is the work of one change (an event, a run input, a checkpoint): the
// view before it, the view being built, and what changed. Nothing in old
// is modified. [Consumer.begin] starts a txn, and next is published only
// when [Consumer.check] passes.
type txn struct {
	old    *view
	next   view
	opts   *Options
	concat *jsonv.Concat // the Consumer's, for text that streams in pieces

	ownMessages bool // next.messages is a copy this txn may edit
	ownIndex    bool // next.index is a copy this txn may edit

	patched      *jsonv.Node // the state a STATE_DELTA made, if one did
	patchChanged bool        // whether that delta changed the state

	warn                     error     // the reason the event was skipped, if it was
	added, replaced, removed []string  // message ids, in the order of the edits
	touched                  []Message // messages added or replaced, for the limits
}

// concatText returns the string s (nil for none, or a value that is not a
// string, which is replaced) followed by piece, in time proportional to
// piece.
func (t *txn) concatText(s *jsonv.Node, piece string) *jsonv.Node {
	if s != nil && s.Kind() != jsonv.String {
		s = nil
	}
	return t.concat.Append(s, piece)
}

// message returns the held message with id, and its position.
func (t *txn) message(id string) (Message, int, bool) {
	i, ok := t.next.index[id]
	if !ok {
		return Message{}, -1, false
	}
	return t.next.messages[i], i, true
}

func (t *txn) editMessages() {
	if !t.ownMessages {
		t.next.messages = append(make([]Message, 0, len(t.next.messages)+1), t.next.messages...)
		t.ownMessages = true
	}
}

func (t *txn) editIndex() {
	if !t.ownIndex {
		idx := make(map[string]int, len(t.next.index)+1)
		for k, v := range t.next.index {
			idx[k] = v
		}
		t.next.index, t.ownIndex = idx, true
	}
}

// noTarget skips the event with an ErrNoTarget warning. The first reason
// given by an event is kept.
func (t *txn) noTarget(format string, args ...any) {
	if t.warn == nil {
		t.warn = fmt.Errorf("%w: %s", ErrNoTarget, fmt.Sprintf(format, args...))
	}
}

// setMessage replaces the message at position i with m, which has the same id.
func (t *txn) setMessage(i int, m Message) {
	if t.next.messages[i].v == m.v {
		return
	}
	t.editMessages()
	t.next.messages[i] = m
	t.replaced = append(t.replaced, m.id)
	t.touched = append(t.touched, m)
}

// insertMessage puts m, whose id is not held, at position i (0 to the
// number of messages).
func (t *txn) insertMessage(i int, m Message) {
	t.editMessages()
	t.editIndex()
	ms := append(t.next.messages, Message{})
	copy(ms[i+1:], ms[i:])
	ms[i] = m
	t.next.messages = ms
	if i == len(ms)-1 {
		if m.id != "" {
			t.next.index[m.id] = i
		}
	} else {
		reindex(t.next.index, ms)
	}
	t.added = append(t.added, m.id)
	t.touched = append(t.touched, m)
}

// appendMessage adds m, whose id is not held, after the last message.
func (t *txn) appendMessage(m Message) { t.insertMessage(len(t.next.messages), m) }

// setMessages replaces the whole list, recording what the edit added,
// replaced (by value) and removed.
func (t *txn) setMessages(ms []Message) {
	idx := make(map[string]int, len(ms))
	reindex(idx, ms)
	for _, m := range ms {
		if i, ok := t.next.index[m.id]; !ok {
			t.added = append(t.added, m.id)
			t.touched = append(t.touched, m)
		} else if !jsonv.Equal(t.next.messages[i].v, m.v) {
			t.replaced = append(t.replaced, m.id)
			t.touched = append(t.touched, m)
		}
	}
	for _, m := range t.next.messages {
		if _, ok := idx[m.id]; !ok {
			t.removed = append(t.removed, m.id)
		}
	}
	t.next.messages, t.next.index = ms, idx
	t.ownMessages, t.ownIndex = true, true
}

func reindex(idx map[string]int, ms []Message) {
	clear(idx)
	for i, m := range ms {
		if m.id != "" {
			idx[m.id] = i
		}
	}
}
