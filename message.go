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

// UnmarshalJSON sets m to the message object in data, kept verbatim: an
// object with a string "role" and, when it has one, a string "id" (a run
// input's messages may lack one). It returns an error wrapping
// [ErrMalformedMessages].
func (m *Message) UnmarshalJSON(data []byte) error {
	n, err := jsonv.Parse(data, 0)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrMalformedMessages, err)
	}
	ms, err := decodeMessages(jsonv.NewArray([]*jsonv.Node{n}), true)
	if err != nil {
		return err
	}
	*m = ms[0]
	return nil
}

// decodeMessages checks a MESSAGES_SNAPSHOT's "messages" (spec,
// MESSAGES_SNAPSHOT): an array of objects, each with a non-empty string "id"
// that no other message in the array has and a string "role". When lenient
// (a run input's messages), "id" may be missing and two messages may share
// one. Failures wrap ErrMalformedMessages.
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
		if _, dup := seen[out[i].ID]; dup && !lenient {
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

// newObject is [jsonv.NewObject] without the members whose value is nil, so
// that optional members can be listed in place.
func newObject(names []string, vals ...*jsonv.Node) *jsonv.Node {
	ns, vs := names[:0:0], vals[:0:0]
	for i, v := range vals {
		if v != nil {
			ns, vs = append(ns, names[i]), append(vs, v)
		}
	}
	return jsonv.NewObject(ns, vs)
}

// withMember returns a copy of object o with member name set to v: replaced
// where it is when o has it, appended at the end otherwise, as a JavaScript
// spread {...o, name: v} does. o is not modified.
func withMember(o *jsonv.Node, name string, v *jsonv.Node) *jsonv.Node {
	c := o.Owned(jsonv.NewGen())
	if i := c.Lookup(name); i >= 0 {
		c.SetMember(i, v)
	} else {
		c.AddMember(name, v)
	}
	return c
}

// withoutMember returns a copy of object o without member name, or o itself
// when it has no such member. o is not modified.
func withoutMember(o *jsonv.Node, name string) *jsonv.Node {
	i := o.Lookup(name)
	if i < 0 {
		return o
	}
	c := o.Owned(jsonv.NewGen())
	c.RemoveMember(i)
	return c
}

// withElem returns a copy of array a with element i replaced by v.
func withElem(a *jsonv.Node, i int, v *jsonv.Node) *jsonv.Node {
	c := a.Owned(jsonv.NewGen())
	c.SetElem(i, v)
	return c
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
	merged := o.Get("metadata")
	if merged == nil || merged.Kind() != jsonv.Object {
		merged = jsonv.NewObject(nil, nil)
	}
	merged = merged.Owned(jsonv.NewGen())
	for i := range meta.Len() {
		name, v := meta.Member(i)
		if j := merged.Lookup(name); j >= 0 {
			merged.SetMember(j, v)
		} else {
			merged.AddMember(name, v)
		}
	}
	return withMember(o, "metadata", merged)
}

// stringOr returns s as a JSON string, or nil when ok is false.
func stringOr(s string, ok bool) *jsonv.Node {
	if !ok {
		return nil
	}
	return jsonv.NewString(s)
}
