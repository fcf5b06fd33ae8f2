// The reconciler: MESSAGES_SNAPSHOT merged into the held messages by id.

package aguistate

import "github.com/aguistate/aguistate/internal/jsonv"

// reconcile merges a MESSAGES_SNAPSHOT into the held messages by id (spec,
// MESSAGES_SNAPSHOT, Reconciliation):
//   - a snapshot message replaces the held message with its id, in the held
//     position;
//   - a snapshot message with an unseen id is appended, in snapshot order;
//   - a held message absent from the snapshot is dropped, unless it is an
//     activity or reasoning message and the snapshot carries no message of
//     that role (the exception is per role and revoked by the snapshot).
//
// Neither argument is modified; snap's ids are distinct.
func reconcile(held, snap []Message) []Message {
	byID := make(map[string]int, len(snap))
	keep := map[string]bool{roleActivity: true, roleReasoning: true}
	for i, m := range snap {
		byID[m.id] = i
		if keep[m.role] {
			keep[m.role] = false
		}
	}
	out := make([]Message, 0, len(snap)+len(held))
	placed := make([]bool, len(snap))
	for _, h := range held {
		if i, ok := byID[h.id]; ok && h.id != "" {
			if !placed[i] {
				out = append(out, snap[i])
				placed[i] = true
			}
			continue
		}
		if keep[h.role] {
			out = append(out, h)
		}
	}
	for i, m := range snap {
		if !placed[i] {
			out = append(out, m)
		}
	}
	return out
}

// messagesSnapshot reconciles the held messages with the event's
// "messages" (spec, MESSAGES_SNAPSHOT), and closes the constructs that the
// new messages no longer allow.
func (t *txn) messagesSnapshot(ev *jsonv.Node) error {
	snap, err := decodeMessages(ev.Get("messages"), false)
	if err != nil {
		return err
	}
	t.setMessages(reconcile(t.next.messages, snap))
	t.pruneConstructs()
	return nil
}
