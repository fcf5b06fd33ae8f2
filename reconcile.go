// The reconciler: MESSAGES_SNAPSHOT merged into the held messages by id.

package aguistate

import (
	"slices"

	"github.com/aguistate/aguistate/internal/jsonv"
)

// messagesSnapshot reconciles the held messages with the event's
// "messages" (spec, MESSAGES_SNAPSHOT), and closes the constructs that the
// new messages no longer allow.
func (t *txn) messagesSnapshot(ev *jsonv.Node) error {
	snap, err := decodeMessages(ev.Get("messages"), false)
	if err != nil {
		return err
	}
	t.reconcile(snap)
	t.pruneConstructs()
	t.pruneCalls()
	return nil
}

// reconcile merges a MESSAGES_SNAPSHOT into the held messages by id (spec,
// MESSAGES_SNAPSHOT, Reconciliation):
//   - a snapshot message replaces the held message with its id, in the held
//     position;
//   - a snapshot message with an unseen id is appended, in snapshot order;
//   - a held message absent from the snapshot is dropped, unless it is an
//     activity or reasoning message and the snapshot carries no message of
//     that role (the exception is per role and revoked by the snapshot).
//
// snap's ids are distinct. It reads each held message once and edits only
// those that change: O(n) for n held messages, and O(log n) for each edit.
func (t *txn) reconcile(snap []Message) {
	byID := make(map[string]int, len(snap))
	keep := map[string]bool{roleActivity: true, roleReasoning: true}
	for i, m := range snap {
		byID[m.id] = i
		if keep[m.role] {
			keep[m.role] = false
		}
	}
	held := &t.next.messages
	placed := make([]bool, len(snap))
	var replace, drop []int // held positions, in order
	i := 0
	for h := range held.All() {
		if j, ok := byID[h.id]; ok && h.id != "" {
			placed[j] = true
			if !jsonv.Equal(h.v, snap[j].v) {
				replace = append(replace, i)
			}
		} else if !keep[h.role] {
			drop = append(drop, i)
		}
		i++
	}
	fresh := len(snap) - (held.Len() - len(drop))
	if edits := len(replace) + len(drop) + fresh; edits*4 >= held.Len()+fresh {
		t.rebuild(snap, byID, placed, drop)
		return
	}
	for _, i := range replace {
		t.setMessage(i, snap[byID[held.At(i).id]])
	}
	for _, i := range drop {
		t.removed = append(t.removed, held.At(i).id)
	}
	for _, i := range slices.Backward(drop) {
		held.delete(t.ed().Owner(), i)
	}
	for j, m := range snap {
		if !placed[j] {
			t.appendMessage(m)
		}
	}
}

// rebuild makes the list that reconcile would, when its edits are many
// enough that a new list costs less: the held messages in order, each
// replaced by the snapshot's with its id or dropped (drop, positions in
// order), then the snapshot's messages that were not placed. It records
// the edits as reconcile does.
func (t *txn) rebuild(snap []Message, byID map[string]int, placed []bool, drop []int) {
	out := make([]Message, 0, len(snap)+t.next.messages.Len()-len(drop))
	i := 0
	for h := range t.next.messages.All() {
		j, restated := byID[h.id]
		switch {
		case len(drop) > 0 && drop[0] == i:
			drop = drop[1:]
			t.removed = append(t.removed, h.id)
		case restated && h.id != "":
			m := snap[j]
			if h.v != m.v && !jsonv.Equal(h.v, m.v) {
				t.replacedMessage(m)
			} else {
				m = h
			}
			out = append(out, m)
		default:
			out = append(out, h)
		}
		i++
	}
	for j, m := range snap {
		if !placed[j] {
			out = append(out, m)
			t.added = append(t.added, m.id)
			t.checkMessage(m)
		}
	}
	t.next.messages = newMessageList(out)
}
