// Pre-1.0 producers: THINKING_* events read as their REASONING_*
// equivalents, as the reference client's runAgent reads them.

package aguistate

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"

	"github.com/aguistate/aguistate/internal/jsonv"
)

// The reference client's runAgent keeps, until its shim window ends, a
// compatibility boundary that turns a pre-1.0 producer's THINKING_* events
// into the REASONING_* events of 1.0, each conversion with a warning. The
// old events name no message or span: a THINKING_TEXT_MESSAGE_START opens
// a reasoning message under a new id, which the CONTENT and END after it
// continue, and a THINKING_START opens a reasoning span the same way. A
// continuation with no opener before it gets a new id of its own, which
// names nothing open: the event is then skipped here with ErrNoTarget (the
// reference client's verification rejects the run there).
//
// A Consumer does the same, with two differences. The ids it makes are not
// random: each is made from the thread's id and the event's position
// (mintID), so that a checkpoint restored, or a relay's log replayed, makes
// the same ones. And a skipped event changes nothing, the ids it continues
// included. The ids in use are part of the view and of the checkpoint;
// RUN_STARTED forgets them, as each runAgent call starts its boundary
// anew. Each conversion is a warning wrapping ErrProtocolVersion, and the
// event applies.

// thinkingIDs are the ids that a pre-1.0 producer's THINKING_* events
// continue: the reasoning message of the last THINKING_TEXT_MESSAGE_START
// and the span of the last THINKING_START, "" when none is open.
type thinkingIDs struct {
	message, span string
}

// mintID returns the id this package gives what the pre-1.0 event at
// position of thread names by no id: a UUID (version 8, RFC 9562 section
// 5.8) made of a SHA-256 hash of both, the same in every Consumer that
// applies the thread's events.
func mintID(thread string, position int) string {
	h := sha256.Sum256([]byte("aguistate THINKING\x00" + thread + "\x00" + strconv.Itoa(position)))
	h[6] = h[6]&0x0f | 0x80
	h[8] = h[8]&0x3f | 0x80
	s := hex.EncodeToString(h[:16])
	return s[0:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:]
}

// thinking converts the pre-1.0 event ev into its 1.0 equivalent of type
// typ, naming id as its messageId, and applies it with apply. It notes the
// conversion, with what it says more (aside), and returns whether the
// converted event applied, not skipped.
func (t *txn) thinking(ev *jsonv.Node, typ, id, aside string, apply func(*txn, *jsonv.Node) error) (bool, error) {
	from := str(ev, "type")
	ev = jsonv.WithMember(jsonv.WithMember(ev, "type", jsonv.NewString(typ)), "messageId", jsonv.NewString(id))
	if typ == "REASONING_MESSAGE_START" {
		ev = jsonv.WithMember(ev, "role", jsonv.NewString(roleReasoning))
	}
	t.note("%s is an event of a version before 1.0, read as %s %s, as the reference client's runAgent reads it%s",
		from, typ, jsonv.Quote(id), aside)
	if err := apply(t, ev); err != nil {
		return false, err
	}
	return t.warn == nil, nil
}

// continued returns the id that a continuation event of a pre-1.0 producer
// names: the one in use, or else a new one, which names nothing open, and
// the aside that says so.
func (t *txn) continued(id string) (string, string) {
	if id != "" {
		return id, ""
	}
	return mintID(t.next.threadID, t.pos), "; no opener came before it, so it names a new id, which nothing opened"
}

// thinkingStart applies THINKING_START: a REASONING_START of a new span.
// Its "title", which REASONING_START has not, is dropped.
func (t *txn) thinkingStart(ev *jsonv.Node) error {
	id, aside := mintID(t.next.threadID, t.pos), ""
	if title := ev.Get("title"); title != nil {
		ev = jsonv.WithoutMember(ev, "title")
		aside = "; its title " + shortJSON(title) + " is dropped, as REASONING_START has none"
	}
	ok, err := t.thinking(ev, "REASONING_START", id, aside, (*txn).reasoningSpanStart)
	if ok {
		t.scope().thinking.span = id
	}
	return err
}

// thinkingEnd applies THINKING_END: a REASONING_END of the span in use.
func (t *txn) thinkingEnd(ev *jsonv.Node) error {
	id, aside := t.continued(t.next.thinking.span)
	ok, err := t.thinking(ev, "REASONING_END", id, aside, (*txn).reasoningSpanEnd)
	if ok {
		t.scope().thinking.span = ""
	}
	return err
}

// thinkingMessageStart applies THINKING_TEXT_MESSAGE_START: a
// REASONING_MESSAGE_START of a new reasoning message.
func (t *txn) thinkingMessageStart(ev *jsonv.Node) error {
	id := mintID(t.next.threadID, t.pos)
	ok, err := t.thinking(ev, "REASONING_MESSAGE_START", id, "", (*txn).reasoningStart)
	if ok {
		t.scope().thinking.message = id
	}
	return err
}

// thinkingMessageContent applies THINKING_TEXT_MESSAGE_CONTENT: a
// REASONING_MESSAGE_CONTENT of the reasoning message in use.
func (t *txn) thinkingMessageContent(ev *jsonv.Node) error {
	id, aside := t.continued(t.next.thinking.message)
	_, err := t.thinking(ev, "REASONING_MESSAGE_CONTENT", id, aside, (*txn).reasoningContent)
	return err
}

// thinkingMessageEnd applies THINKING_TEXT_MESSAGE_END: a
// REASONING_MESSAGE_END of the reasoning message in use.
func (t *txn) thinkingMessageEnd(ev *jsonv.Node) error {
	id, aside := t.continued(t.next.thinking.message)
	ok, err := t.thinking(ev, "REASONING_MESSAGE_END", id, aside, (*txn).reasoningEnd)
	if ok {
		t.scope().thinking.message = ""
	}
	return err
}

// shortJSON returns the JSON text of n for a message, cut short when long.
func shortJSON(n *jsonv.Node) string {
	if n.Kind() == jsonv.String {
		return jsonv.Quote(n.Text())
	}
	return jsonv.Quote(string(jsonv.Marshal(n)))
}
