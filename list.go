// The message list: the held messages in order, found by id, with their
// tool calls found by id.

package aguistate

import (
	"iter"
	"strconv"

	"github.com/aguistate/aguistate/internal/jsonv"
	"github.com/aguistate/aguistate/internal/persist"
)

// messageList is the list of messages a view holds. It is persistent: an
// edit returns a new list that shares all but O(log n) of the old one, and
// finding a message or a tool call by id costs O(log n). Edits made with the
// same persist.Owner change in place what that Owner made (see persist).
//
// Each message is held as its key and its object: the key is its id, or
// for a message without one (a run input's) a key of its own, and the rest
// of a Message is read from its object (see entryMessage). The list keeps,
// in its summary, the total size of the messages and how many of them are
// not tool messages. Its index of tool calls (callindex.go) finds the
// messages whose "toolCalls" hold a call of an id.
type messageList struct {
	ms    persist.Map[*jsonv.Node, listSummary, listMeasure]
	calls callIndex
	anon  uint64 // keys handed to messages without an id so far
}

// listSummary is what the list knows of a run of its messages.
type listSummary struct {
	size    int // bytes of compact JSON text
	nonTool int // messages whose role is not "tool"
}

type listMeasure struct{}

func (listMeasure) Of(e persist.Entry[*jsonv.Node]) listSummary {
	s := listSummary{size: e.Value.Size(), nonTool: 1}
	if str(e.Value, "role") == roleTool {
		s.nonTool = 0
	}
	return s
}

func (listMeasure) Add(a, b listSummary) listSummary {
	return listSummary{a.size + b.size, a.nonTool + b.nonTool}
}

func (listMeasure) Sub(a, b listSummary) (listSummary, bool) {
	return listSummary{a.size - b.size, a.nonTool - b.nonTool}, true
}

// keyOf returns the key of the message with id (not ""): the id itself,
// unless it begins with the byte 0xFF, which then doubles. Text never has
// that byte, and the keys of messages without an id are 0xFF and a number.
func keyOf(id string) string {
	if id != "" && id[0] == 0xFF {
		return "\xff" + id
	}
	return id
}

// newKey returns the key of a new message without an id.
func (l *messageList) newKey() string {
	l.anon++
	return "\xff" + strconv.FormatUint(l.anon, 10)
}

// entryMessage returns the message held with key as its object v.
func entryMessage(key string, v *jsonv.Node) Message {
	id := key
	if key != "" && key[0] == 0xFF {
		id = "" // a message without an id
		if len(key) > 1 && key[1] == 0xFF {
			id = key[1:]
		}
	}
	return Message{id: id, role: str(v, "role"), v: v}
}

// Len returns the number of messages.
func (l *messageList) Len() int { return l.ms.Len() }

// Size returns the total size of the messages, in bytes of compact JSON
// text.
func (l *messageList) Size() int { return l.ms.Summary().size }

// All yields the messages in order.
func (l *messageList) All() iter.Seq[Message] {
	return func(yield func(Message) bool) {
		for entries := range l.ms.Chunks() {
			for _, e := range entries {
				if !yield(entryMessage(e.Key, e.Value)) {
					return
				}
			}
		}
	}
}

// Slice returns the messages in a new slice.
func (l *messageList) Slice() []Message {
	out := make([]Message, 0, l.Len())
	for entries := range l.ms.Chunks() {
		for _, e := range entries {
			out = append(out, entryMessage(e.Key, e.Value))
		}
	}
	return out
}

// Get returns the message with id, and its position.
func (l *messageList) Get(id string) (Message, int, bool) {
	if id == "" {
		return Message{}, -1, false
	}
	i, v := l.ms.Find(keyOf(id))
	if i < 0 {
		return Message{}, -1, false
	}
	return Message{id: id, role: str(v, "role"), v: v}, i, true
}

// At returns the message at position i, in [0, Len).
func (l *messageList) At(i int) Message {
	return entryMessage(l.ms.At(i))
}

// afterTools returns the position after the tool messages that follow
// position i, in O(log n): the first message after i that is not a tool
// message, or Len.
func (l *messageList) afterTools(i int) int {
	before := l.ms.Prefix(i + 1).nonTool
	return l.ms.Search(func(s listSummary) bool { return s.nonTool > before })
}

// The edits. Each takes the Owner of the change (nil for none).

// insert puts m, whose id is not held, at position i, in [0, Len].
func (l *messageList) insert(o *persist.Owner, i int, m Message) {
	key := keyOf(m.id)
	if m.id == "" {
		key = l.newKey()
	}
	l.ms, _ = l.ms.Insert(o, i, key, m.v)
	l.index(o, key, i, m)
}

// set replaces the message at position i with m, which has the same id.
func (l *messageList) set(o *persist.Owner, i int, m Message) {
	key, v := l.ms.At(i)
	old := entryMessage(key, v)
	same := callsOf(old) == callsOf(m) && (old.role == roleAssistant) == (m.role == roleAssistant)
	if !same {
		l.unindex(o, key, i, old)
	}
	l.ms = l.ms.UpdateAt(o, i, func(*jsonv.Node) *jsonv.Node { return m.v })
	if !same {
		l.index(o, key, i, m)
	}
}

// update replaces the message at position i with m, which has its id, its
// role and its "toolCalls".
func (l *messageList) update(o *persist.Owner, i int, m Message) {
	l.ms = l.ms.UpdateAt(o, i, func(*jsonv.Node) *jsonv.Node { return m.v })
}

// setCall replaces the message at position i with m, whose "toolCalls" hold
// calls of the same ids at the same indexes: one call changed, or a call
// with an id no message holds appended to an assistant message's.
func (l *messageList) setCall(o *persist.Owner, i int, m Message, appended string) {
	key, _ := l.ms.At(i)
	l.ms = l.ms.UpdateAt(o, i, func(*jsonv.Node) *jsonv.Node { return m.v })
	if appended != "" {
		l.addCall(o, appended, m.role == roleAssistant, key, i, callsOf(m).Len()-1)
	}
}

// delete removes the message at position i.
func (l *messageList) delete(o *persist.Owner, i int) {
	key, v := l.ms.At(i)
	l.unindex(o, key, i, entryMessage(key, v))
	l.ms, _, _ = l.ms.DeleteAt(o, i)
}

// newMessageList returns the list of ms, whose ids are distinct, in
// O(n log n).
func newMessageList(ms []Message) messageList {
	var l messageList
	entries := make([]persist.Entry[*jsonv.Node], len(ms))
	for i, m := range ms {
		key := keyOf(m.id)
		if m.id == "" {
			key = l.newKey()
		}
		entries[i] = persist.Entry[*jsonv.Node]{Key: key, Value: m.v}
	}
	l.ms, _ = persist.MapOf[*jsonv.Node, listSummary, listMeasure](entries...)
	l.calls = buildCallIndex(ms, entries)
	return l
}
