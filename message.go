// Message: a message of the thread, its roles, and the rules for reading a list of them.

package aguistate

import (
	"fmt"

	"github.com/aguistate/aguistate/internal/jsonv"
)

// The message roles this package treats apart (AG-UI 1.0 message roles).
const (
	roleAssistant = "assistant" // the default role of text and tool calls
	roleTool      = "tool"      // a tool call result
	roleActivity  = "activity"  // client-only; never sent to the producer
	roleReasoning = "reasoning" // kept, like activity, by a snapshot without its role
	roleUser      = "user"
	roleSystem    = "system"
	roleDeveloper = "developer"
)

// Message is one message of a thread, kept verbatim. Every member the
// producer sent, known to this package or not, goes out in
// [Message.MarshalJSON] as it came in. ID and Role copy its "id" and "role"
// for convenience; changing them changes nothing else. ID is "" only for a
// run input's message without an id.
type Message struct {
	ID   string
	Role string
	v    *jsonv.Node // the whole message object
}

// Value returns the whole message object.
func (m Message) Value() Value { return valueOf(m.v) }

// MarshalJSON returns the message object's compact JSON text, members and
// numbers as received. It never fails.
func (m Message) MarshalJSON() ([]byte, error) { return Value{m.v}.MarshalJSON() }

// UnmarshalJSON sets m to the message object in data, kept verbatim. The
// object has a string "role", and a non-empty string "id" when it has one
// (a run input's messages may lack one). It returns an error wrapping
// [ErrMalformedEvent].
func (m *Message) UnmarshalJSON(data []byte) error {
	n, err := parseJSON(data, 0)
	if err == nil {
		var ms []Message
		if ms, err = decodeMessages(jsonv.NewArray([]*jsonv.Node{n}), true); err == nil {
			*m = ms[0]
			return nil
		}
	}
	return apiError(err)
}

// decodeMessages checks a MESSAGES_SNAPSHOT's "messages" (spec,
// MESSAGES_SNAPSHOT): an array of objects, each with a non-empty string "id"
// that no other message in the array has and a string "role". When lenient
// (a run input's messages), "id" may be missing and two messages may share
// one. Failures wrap errMalformedMessages.
func decodeMessages(n *jsonv.Node, lenient bool) ([]Message, error) {
	if n == nil || n.Kind() != jsonv.Array {
		return nil, fmt.Errorf("%w: \"messages\" is not an array", errMalformedMessages)
	}
	out := make([]Message, n.Len())
	seen := make(map[string]struct{}, n.Len())
	for i, m := range n.All() {
		if m.Kind() != jsonv.Object {
			return nil, fmt.Errorf("%w: message %d is %s, not an object", errMalformedMessages, i, m.Kind().Phrase())
		}
		id := m.Get("id")
		switch {
		case id == nil && lenient:
		case id == nil || id.Kind() != jsonv.String || id.Text() == "":
			return nil, fmt.Errorf("%w: message %d: \"id\" is missing or not a non-empty string", errMalformedMessages, i)
		}
		role := m.Get("role")
		if role == nil || role.Kind() != jsonv.String {
			return nil, fmt.Errorf("%w: message %d: \"role\" is missing or not a string", errMalformedMessages, i)
		}
		out[i] = Message{Role: role.Text(), v: m}
		if id == nil {
			continue
		}
		out[i].ID = id.Text()
		if _, dup := seen[out[i].ID]; dup && !lenient {
			return nil, fmt.Errorf("%w: message %d: id %s appears twice", errMalformedMessages, i, jsonv.Quote(out[i].ID))
		}
		seen[out[i].ID] = struct{}{}
	}
	return out, nil
}

// encodeMessages returns messages as one JSON array node.
func encodeMessages(ms []Message) *jsonv.Node {
	elems := make([]*jsonv.Node, len(ms))
	for i, m := range ms {
		elems[i] = Value{m.v}.node()
	}
	return jsonv.NewArray(elems)
}

// messageOf returns the message whose whole object is v, an object whose
// "id" and "role", when strings, become ID and Role.
func messageOf(v *jsonv.Node) Message {
	m := Message{v: v}
	if id := v.Get("id"); id != nil && id.Kind() == jsonv.String {
		m.ID = id.Text()
	}
	if role := v.Get("role"); role != nil && role.Kind() == jsonv.String {
		m.Role = role.Text()
	}
	return m
}

// mergeMetadata returns object o with an event's "metadata" object merged
// into its own shallowly, as the reference client's mergeMetadata does:
// {...o.metadata, ...meta}. Members already there keep their place and take
// the event's value; new ones, and a "metadata" member o did not have, go at
// the end. A "metadata" that is not an object is replaced. A nil meta
// returns o.
func mergeMetadata(o, meta *jsonv.Node) *jsonv.Node {
	if meta == nil {
		return o
	}
	held := o.Get("metadata")
	if held == nil || held.Kind() != jsonv.Object {
		held = jsonv.NewObject(nil, nil)
	}
	return jsonv.WithMember(o, "metadata", jsonv.Merged(held, meta))
}
