// The index of tool calls by id, which the message list keeps.

package aguistate

import (
	"cmp"
	"hash/maphash"
	"math"
	"slices"

	"github.com/aguistate/aguistate/internal/jsonv"
	"github.com/aguistate/aguistate/internal/persist"
)

// callIndex has one entry for each message that holds a tool call of an id,
// sorted by key (the id's hash and the message's class), then by id, then
// by the message's position in the list. Finding the first message that
// holds a call, inserting an entry and removing one cost O(log n); the
// summary of a run of entries is their greatest key, by which the index is
// searched.
type callIndex = persist.Seq[callEntry, uint64, callMax]

// callEntry records that the message with key msg holds, at index call of
// its "toolCalls", the first call with id.
type callEntry struct {
	k    uint64 // the hash of id, with its lowest bit 0 for an assistant message, 1 for another
	id   string
	msg  string
	call int
}

type callMax struct{}

func (callMax) Of(e callEntry) uint64          { return e.k }
func (callMax) Add(a, b uint64) uint64         { return max(a, b) }
func (callMax) Sub(a, b uint64) (uint64, bool) { return a, b < a }

var callSeed = maphash.MakeSeed()

// callHash hashes a tool call id with a seed chosen when the program starts,
// so that no producer can choose ids whose entries collide. Tests replace
// it with a weak one.
var callHash = func(id string) uint64 { return maphash.String(callSeed, id) }

// callKey returns the key of the entries of the calls with id in messages
// of the class that assistant says.
func callKey(id string, assistant bool) uint64 {
	k := callHash(id) &^ 1
	if !assistant {
		k |= 1
	}
	return k
}

// callAt returns where the entry of a call with id and key k, in the
// message at position pos, is or goes: the first entry of key k or more,
// when it has another key (the usual case: one message holds the id), or
// else a binary search over the entries of key k, by id and then by
// position.
func (l *messageList) callAt(k uint64, id string, pos int) int {
	lo, e, ok := l.calls.Seek(func(m uint64) bool { return m >= k })
	if !ok || e.k != k {
		return lo
	}
	hi := l.calls.Len()
	if k < math.MaxUint64 {
		hi, _, _ = l.calls.Seek(func(m uint64) bool { return m > k })
	}
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		e := l.calls.At(mid)
		if c := cmp.Compare(e.id, id); c < 0 || c == 0 && l.ms.Index(e.msg) < pos {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// index adds the tool calls of m, at position pos with key, to the index.
func (l *messageList) index(o *persist.Owner, key string, pos int, m Message) {
	firstCalls(callsOf(m), func(id string, call int) {
		l.addCall(o, id, m.role == roleAssistant, key, pos, call)
	})
}

// addCall records that the message at position pos with key holds the first
// call with id at index call.
func (l *messageList) addCall(o *persist.Owner, id string, assistant bool, key string, pos, call int) {
	k := callKey(id, assistant)
	l.calls = l.calls.Insert(o, l.callAt(k, id, pos), callEntry{k, id, key, call})
}

// unindex takes the tool calls of m, at position pos with key, out of the
// index.
func (l *messageList) unindex(o *persist.Owner, key string, pos int, m Message) {
	firstCalls(callsOf(m), func(id string, _ int) {
		k := callKey(id, m.role == roleAssistant)
		i := l.callAt(k, id, pos)
		if i == l.calls.Len() || l.calls.At(i).msg != key {
			panic("aguistate: the tool call index lost a message")
		}
		l.calls, _ = l.calls.Delete(o, i)
	})
}

// firstCall returns the entry of the first message of the class that
// assistant says holding a call with id.
func (l *messageList) firstCall(id string, assistant bool) (callEntry, bool) {
	k := callKey(id, assistant)
	i, e, ok := l.calls.Seek(func(m uint64) bool { return m >= k })
	for ok && e.k == k && e.id <= id {
		if e.id == id {
			return e, true
		}
		if i++; i == l.calls.Len() {
			break
		}
		e = l.calls.At(i)
	}
	return callEntry{}, false
}

// toolCall returns the first tool call with id in the list, in an assistant
// message when assistant is true and in any message otherwise.
func (l *messageList) toolCall(id string, assistant bool) (toolCallRef, bool) {
	first, ok := l.firstCall(id, true)
	if !assistant {
		if other, held := l.firstCall(id, false); held && (!ok || l.ms.Index(other.msg) < l.ms.Index(first.msg)) {
			first, ok = other, true
		}
	}
	if !ok {
		return toolCallRef{}, false
	}
	i, v := l.ms.Find(first.msg)
	m := entryMessage(first.msg, v)
	calls := callsOf(m)
	return toolCallRef{msg: i, m: m, calls: calls, i: first.call, call: calls.Elem(first.call)}, true
}

// buildCallIndex returns the index of the tool calls of ms, held with the
// keys of entries, in O(n log n).
func buildCallIndex(ms []Message, entries []persist.Entry[*jsonv.Node]) callIndex {
	type placed struct {
		callEntry
		pos int
	}
	var all []placed
	for i, m := range ms {
		firstCalls(callsOf(m), func(id string, call int) {
			all = append(all, placed{callEntry{callKey(id, m.role == roleAssistant), id, entries[i].Key, call}, i})
		})
	}
	slices.SortFunc(all, func(a, b placed) int {
		if c := cmp.Compare(a.k, b.k); c != 0 {
			return c
		}
		if c := cmp.Compare(a.id, b.id); c != 0 {
			return c
		}
		return cmp.Compare(a.pos, b.pos)
	})
	var b persist.Builder[callEntry, uint64, callMax]
	for _, p := range all {
		b.Add(p.callEntry)
	}
	return b.Seq()
}

// The tool calls of a message.

// callsOf returns a message's "toolCalls" array, or nil.
func callsOf(m Message) *jsonv.Node {
	if m.v == nil {
		return nil
	}
	calls := m.v.Get("toolCalls")
	if calls == nil || calls.Kind() != jsonv.Array {
		return nil
	}
	return calls
}

// firstCalls calls each with the id of each tool call in calls (nil for
// none), in order, and the index of the first call that has it. A call
// that is not an object with a string "id" has none.
func firstCalls(calls *jsonv.Node, each func(id string, call int)) {
	if calls == nil {
		return
	}
	var seen map[string]bool
	var room [8]string
	few := room[:0] // the ids so far, while there are few
	for i := range calls.Len() {
		text, ok := calls.Elem(i).StringMember("id")
		if !ok {
			continue
		}
		switch {
		case seen != nil:
			if seen[text] {
				continue
			}
			seen[text] = true
		case slices.Contains(few, text):
			continue
		case len(few) < len(room):
			few = append(few, text)
		default:
			seen = make(map[string]bool)
			for _, s := range few {
				seen[s] = true
			}
			seen[text] = true
		}
		each(text, i)
	}
}
