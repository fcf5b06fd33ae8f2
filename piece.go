// Streamed text: the Pieces of a Change, what one event did to a message's
// text or a tool call's arguments as they stream.

package aguistate

import (
	"github.com/aguistate/aguistate/internal/jsonv"
)

// Piece is what one event did to one message's text, or to one tool call's
// arguments, as they stream: it started streaming, it grew by Text, it
// stopped streaming. [Change].Pieces lists them. A UI prints an answer
// piece by piece from them, with no JSON to read.
//
// A message or tool call streams from its START, or from the chunk that
// opens its chunk stream, to its END, or to the end of its chunk stream
// (the next event of another kind in its lane, as the reference client's
// chunk expansion ends it), or to the end of its run (RUN_STARTED,
// RUN_FINISHED, RUN_ERROR), or to a MESSAGES_SNAPSHOT that drops it. Each
// Start has one End, in the Change of the event that ends it. A chunk that
// goes on with a message whose chunk stream has ended starts it again; a
// CONTENT or ARGS event that goes on with it starts and ends it in one
// piece. The
// Text of its pieces, joined, is the message's text ([Message.Text]) as the
// stream made it, or the call's arguments ([ToolCall].Arguments), but for a
// lone UTF-16 high surrogate at the end, which is held back until the next
// piece shows whether it pairs.
type Piece struct {
	// MessageID is the id of the message; for a tool call, of the
	// assistant message that holds it.
	MessageID string
	// Role is the message's role: "assistant", "reasoning", "user", ...
	Role string
	// ToolCallID is the tool call's id, or "" for the message's own text.
	ToolCallID string
	// ToolName is the tool call's name ("function"."name"), or "".
	ToolName string
	// Start reports that the message or tool call began to stream with
	// this event.
	Start bool
	// Text is what the event appended: text, or arguments (JSON text as
	// the model writes it, partial until the call ends). It may be "".
	Text string
	// End reports that the message or tool call stopped streaming with
	// this event.
	End bool
}

// streamed is what a txn records for the Pieces of its Change: the
// constructs whose streaming it may have changed, in the order it touched
// them; the open constructs a run boundary closed, all at once; and the
// text it appended.
type streamed struct {
	touched  []construct         // kind and id only
	seen     map[string]bool     // keys of touched, once it is long
	bulk     keyedSet[construct] // the constructs open when a run boundary closed them all
	hasBulk  bool
	appended construct // the construct that took text
	text     string    // the text it took, as Piece.Text says
}

// touch records that the event may have changed whether the construct of
// kind k with id streams.
func (t *txn) touch(k constructKind, id string) {
	s := &t.streamed
	if s.seen != nil {
		key := constructKey(k, id)
		if s.seen[key] {
			return
		}
		s.seen[key] = true
	} else {
		for _, c := range s.touched {
			if c.kind == k && c.id == id {
				return
			}
		}
		if len(s.touched) == 8 {
			s.seen = make(map[string]bool)
			for _, c := range s.touched {
				s.seen[c.key()] = true
			}
			s.seen[constructKey(k, id)] = true
		}
	}
	s.touched = append(s.touched, construct{kind: k, id: id})
}

// closeAllStreaming records that every open construct closes, as a run
// boundary closes them.
func (t *txn) closeAllStreaming() {
	if !t.streamed.hasBulk {
		t.streamed.bulk, t.streamed.hasBulk = t.next.open, true
	}
}

// appendedText records that the construct of kind k with id took text:
// its string went from before to after (nil for none), which
// [jsonv.Concat] made of before and piece.
func (t *txn) appendedText(k constructKind, id string, before, after *jsonv.Node, piece string) {
	t.touch(k, id)
	var head string
	var held bool
	if before != nil {
		head, held = before.TextHead()
	}
	cut := 0
	if !held && endsWithHigh(head) && startsWithLow(piece) {
		cut = 3 // a high half the string holds as text joined the piece's low half
	}
	text, _ := after.TextHead()
	t.streamed.appended = construct{kind: k, id: id}
	t.streamed.text = text[min(len(head)-cut, len(text)):]
}

// endsWithHigh and startsWithLow report whether s ends with a UTF-16 high
// surrogate, or starts with a low one, in its three-byte WTF-8 form.
func endsWithHigh(s string) bool {
	return len(s) >= 3 && s[len(s)-3] == 0xED && s[len(s)-2] >= 0xA0 && s[len(s)-2] <= 0xAF
}

func startsWithLow(s string) bool { return len(s) >= 3 && s[0] == 0xED && s[1] >= 0xB0 && s[1] <= 0xBF }

// streaming reports whether construct c (a kind and an id) streams in
// view v: it is open and, when a chunk stream opened or went on with it,
// that stream is open. key is c's key.
func (v *view) streaming(c construct, key string) bool {
	k, id := c.kind, c.id
	c, open := v.open.get(key)
	if !open {
		return false
	}
	if !c.chunked {
		return true
	}
	for _, s := range v.chunks {
		if s.kind == k && s.id == id {
			return true
		}
	}
	return false
}

// pieces returns the Pieces of the change t made from view old: for each
// construct it touched, then each one a run boundary closed, what changed.
func (t *txn) pieces(old *view) []Piece {
	s := &t.streamed
	if len(s.touched) == 0 && !s.hasBulk {
		return nil
	}
	var out []Piece
	add := func(c construct) {
		key := c.key()
		was, is := old.streaming(c, key), t.next.streaming(c, key)
		p := Piece{Start: !was && is, End: was && !is}
		if s.appended.kind == c.kind && s.appended.id == c.id {
			p.Text = s.text
			if !was && !is { // a construct whose chunk stream ended, continued by another event
				p.Start, p.End = true, true
			}
		}
		if !p.Start && !p.End && p.Text == "" {
			return
		}
		t.describe(&p, old, c)
		out = append(out, p)
	}
	for _, c := range s.touched {
		add(c)
	}
	if !s.hasBulk {
		return out
	}
	touched := make(map[string]bool, len(s.touched))
	for _, c := range s.touched {
		touched[c.key()] = true
	}
	for c := range s.bulk.all() {
		if !touched[c.key()] {
			add(c)
		}
	}
	return out
}

// describe fills in the message, role and tool call of piece p of
// construct c: as they were while it streamed, so from old for an end
// (a snapshot may have dropped the message, or restated it with another
// role), and from the change otherwise.
func (t *txn) describe(p *Piece, old *view, c construct) {
	first, second := t.next, old
	if p.End {
		first, second = old, t.next
	}
	if c.kind != toolConstruct {
		p.MessageID = c.id
		m, _, ok := first.messages.Get(c.id)
		if !ok {
			m, _, _ = second.messages.Get(c.id)
		}
		p.Role = m.role
		return
	}
	p.ToolCallID = c.id
	r, ok := first.messages.toolCall(c.id, true)
	if !ok {
		r, ok = second.messages.toolCall(c.id, true)
	}
	if ok {
		p.MessageID, p.Role = r.m.id, r.m.role
		if fn := r.call.Get("function"); fn != nil && fn.Kind() == jsonv.Object {
			p.ToolName = str(fn, "name")
		}
	}
}
