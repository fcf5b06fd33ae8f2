package aguistate

import (
	"fmt"

	"github.com/aguistate/aguistate/internal/jsonv"
)

// Message roles with a special place in reconciliation (spec, MESSAGES_SNAPSHOT).
const (
	roleActivity  = "activity"
	roleReasoning = "reasoning"
)

// Message is one message of a thread, kept verbatim: every field the
// producer sent, known to this library or not (content, toolCalls,
// subagentRunId, metadata, encryptedValue, ...), goes out in
// [Message.MarshalJSON] exactly as it came in. ID and Role are copies of its
// "id" and "role" fields for convenience; changing them changes nothing else.
// ID is "" only for a message given in a run input without an id.
type Message struct {
	ID   string
	Role string
	v    *jsonv.Node // the whole message object
}

// Value returns the whole message object.
func (m Message) Value() Value { return valueOf(m.v) }

// MarshalJSON returns the message object's JSON text, as it was received. It
// never fails.
func (m Message) MarshalJSON() ([]byte, error) { return Value{m.v}.MarshalJSON() }

// decodeMessages checks a MESSAGES_SNAPSHOT's "messages" (spec,
// MESSAGES_SNAPSHOT): an array of objects, each with a non-empty string "id"
// that no other message in the array has and a string "role". When lenient
// (a run input's messages), "id" may be missing. Failures wrap
// ErrMalformedMessages.
func decodeMessages(n *jsonv.Node, lenient bool) ([]Message, error) {
	if n == nil || n.Kind() != jsonv.Array {
		return nil, fmt.Errorf("%w: \"messages\" is not an array", ErrMalformedMessages)
	}
	out := make([]Message, n.Len())
	seen := make(map[string]struct{}, n.Len())
	for i, m := range n.Elems() {
		if m.Kind() != jsonv.Object {
			return nil, fmt.Errorf("%w: message %d is a %s, not an object", ErrMalformedMessages, i, m.Kind())
		}
		id := m.Get("id")
		switch {
		case id == nil && lenient:
		case id == nil || id.Kind() != jsonv.String || id.Text() == "":
			return nil, fmt.Errorf("%w: message %d: \"id\" is missing or not a non-empty string", ErrMalformedMessages, i)
		}
		role := m.Get("role")
		if role == nil || role.Kind() != jsonv.String {
			return nil, fmt.Errorf("%w: message %d: \"role\" is missing or not a string", ErrMalformedMessages, i)
		}
		out[i] = Message{Role: role.Text(), v: m}
		if id == nil {
			continue
		}
		out[i].ID = id.Text()
		if _, dup := seen[out[i].ID]; dup {
			return nil, fmt.Errorf("%w: message %d: id %q appears twice", ErrMalformedMessages, i, out[i].ID)
		}
		seen[out[i].ID] = struct{}{}
	}
	return out, nil
}

// encodeMessages returns messages as one JSON array node.
func encodeMessages(ms []Message) *jsonv.Node {
	elems := make([]*jsonv.Node, len(ms))
	for i, m := range ms {
		elems[i] = m.v
	}
	return jsonv.NewArray(elems)
}
