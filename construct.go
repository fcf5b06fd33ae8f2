// Constructs: the text messages, reasoning messages and tool calls that are
// open, and so take content.

package aguistate

import (
	"fmt"

	"github.com/aguistate/aguistate/internal/jsonv"
)

// The construct rule. A text message, a reasoning message or a tool call
// takes CONTENT (or ARGS) and END only while it is open:
//
//   - A START opens it when it names an id the thread does not hold. A START
//     that names a held message or tool call, open or not, is a replay: it is
//     skipped with an ErrNoTarget warning, and so are the events that follow
//     it, each with its own. One held message is not a replay: a message of
//     the START's role with no text yet, such as the assistant message that a
//     TOOL_CALL_START made for its parentMessageId.
//   - A chunk that opens a chunk stream opens its construct the same way,
//     unless the construct is open already: then the stream goes on with it.
//   - Its END closes it, and RUN_STARTED, RUN_FINISHED and RUN_ERROR close
//     every construct. The end of a chunk stream does not: the chunk form has
//     no END, and a later chunk may name the construct again.
//   - A MESSAGES_SNAPSHOT closes a construct whose message or tool call it
//     drops, or leaves where its events may not write (the write rule).
//
// Open constructs are part of the view and of the checkpoint.

// constructKind is the kind of a construct, and of the chunk stream that
// streams one.
type constructKind uint8

const (
	textConstruct constructKind = iota + 1
	reasoningConstruct
	toolConstruct
)

var constructNames = [...]string{textConstruct: "text message", reasoningConstruct: "reasoning message", toolConstruct: "tool call"}

func (k constructKind) String() string { return constructNames[k] }

// writer returns the family of the events that build a construct of kind k.
func (k constructKind) writer() writer {
	switch k {
	case textConstruct:
		return textWriter
	case reasoningConstruct:
		return reasoningWriter
	}
	return toolCallWriter
}

// construct names an open construct: a message id, or a tool call id. It
// is chunked when a chunk stream has opened or gone on with it: the
// reference client then ends it with the stream, so that only a chunk may
// go on with it (see prelude.go).
type construct struct {
	kind    constructKind
	id      string
	chunked bool
}

// constructKey returns the key of the construct of kind k with id: a byte
// of its kind, then its id.
func constructKey(k constructKind, id string) string { return string(byte(k)) + id }

func (c construct) key() string { return constructKey(c.kind, c.id) }

// size is 0: each open construct is a held message or tool call, which
// the limits on messages bound.
func (c construct) size() int { return 0 }

// isOpen reports whether the construct of kind k with id is open.
func (t *txn) isOpen(k constructKind, id string) bool { return t.next.open.has(constructKey(k, id)) }

// openConstruct opens the construct of kind k with id, which is not open.
func (t *txn) openConstruct(k constructKind, id string) {
	t.touch(k, id)
	t.next.open.put(t.ed().Owner(), construct{kind: k, id: id})
}

// chunkConstruct marks the open construct of kind k with id chunked.
func (t *txn) chunkConstruct(k constructKind, id string) {
	if c, ok := t.next.open.get(constructKey(k, id)); ok && !c.chunked {
		t.touch(k, id)
		c.chunked = true
		t.next.open.put(t.ed().Owner(), c)
	}
}

// closeConstruct closes the construct of kind k with id, if it is open.
func (t *txn) closeConstruct(k constructKind, id string) {
	t.touch(k, id)
	t.next.open.remove(t.ed().Owner(), constructKey(k, id))
}

// closeConstructs closes every construct, as a run's start or end does.
func (t *txn) closeConstructs() {
	t.closeAllStreaming()
	t.next.open = keyedSet[construct]{}
}

// pruneConstructs closes the constructs that the held messages no longer
// allow (see reachable), after a change that restates messages: O(log n)
// for each open construct.
func (t *txn) pruneConstructs() {
	var gone []string
	for c := range t.next.open.all() {
		if t.reachable(c) != nil {
			gone = append(gone, c.key())
		}
	}
	for _, key := range gone {
		t.touch(constructKind(key[0]), key[1:])
		t.next.open.remove(t.ed().Owner(), key)
	}
}

// reachable returns nil when construct c may be open over the held
// messages: a text or reasoning message is held, has a role its events
// write, and has text content or none; a tool call is held in an assistant
// message. Otherwise it says why not.
func (t *txn) reachable(c construct) error {
	if c.kind == toolConstruct {
		if _, ok := t.findToolCall(c.id, true); !ok {
			return fmt.Errorf("no tool call %s in an assistant message", jsonv.Quote(c.id))
		}
		return nil
	}
	m, _, held := t.message(c.id)
	switch {
	case !held:
		return fmt.Errorf("no message %s", jsonv.Quote(c.id))
	case !c.kind.writer().writes(m.role):
		return fmt.Errorf("message %s has the role %s", jsonv.Quote(c.id), jsonv.Quote(m.role))
	case !hasTextContent(m):
		return fmt.Errorf("message %s has content that is not text", jsonv.Quote(c.id))
	}
	return nil
}

// hasTextContent reports whether m's content is a string, null or absent: text
// to append to.
func hasTextContent(m Message) bool {
	c := m.v.Get("content")
	return c == nil || c.Kind() == jsonv.String || c.Kind() == jsonv.Null
}

// noText reports whether m has no text yet: its content is "", null or
// absent.
func noText(m Message) bool {
	c := m.v.Get("content")
	return c == nil || c.Kind() == jsonv.Null || (c.Kind() == jsonv.String && c.Text() == "")
}
