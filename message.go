// Message: a message of the thread, its roles, and the rules for reading a list of them.

package aguistate

import (
	"errors"
	"fmt"
	"strings"

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
// [Message.MarshalJSON] as it came in. Its methods read the AG-UI 1.0
// message members. Make one with [UserMessage] and the other constructors,
// or with [Message.UnmarshalJSON]; the zero Message is no message and
// cannot be sent.
type Message struct {
	id, role string      // copies of its "id" and "role"
	v        *jsonv.Node // the whole message object; nil for no message
	err      error       // why a constructor made no message
}

// check returns why m cannot be sent, or nil.
func (m Message) check() error {
	switch {
	case m.err != nil:
		return m.err
	case m.v == nil:
		return errors.New("the zero Message is no message")
	}
	return nil
}

// ID returns the message's "id". It is "" only for a run input's message
// without an id.
func (m Message) ID() string { return m.id }

// Role returns the message's "role", such as "user" or "assistant".
func (m Message) Role() string { return m.role }

// Name returns the message's "name", the author's display name, or "".
func (m Message) Name() string { return m.str("name") }

// Text returns the message's text: its "content" when that is a string,
// the text of its text parts joined in order when it is an array of
// parts (media parts are left out, as the reference client's
// contentToText does), and "" otherwise (an activity's object content).
func (m Message) Text() string {
	content := m.member("content")
	switch {
	case content == nil:
		return ""
	case content.Kind() == jsonv.String:
		return content.Text()
	case content.Kind() != jsonv.Array:
		return ""
	}
	var b strings.Builder
	for _, p := range content.All() {
		if p.Kind() == jsonv.Object && str(p, "type") == "text" {
			b.WriteString(str(p, "text"))
		}
	}
	return b.String()
}

// Content returns the message's "content" as sent: a string, an array of
// content parts, an activity's object, or the zero Value (null) when it
// has none.
func (m Message) Content() Value { return valueOf(m.member("content")) }

// Parts returns the content parts of a message whose "content" is an array
// (AG-UI 1.0 ContentPart), in order, or nil when it is not. A member a
// part lacks, or has of another type, reads as "".
func (m Message) Parts() []Part {
	content := m.member("content")
	if content == nil || content.Kind() != jsonv.Array {
		return nil
	}
	parts := make([]Part, 0, content.Len())
	for _, p := range content.All() {
		if p.Kind() != jsonv.Object {
			continue
		}
		part := Part{Type: str(p, "type"), Text: str(p, "text")}
		if src := p.Get("source"); src != nil && src.Kind() == jsonv.Object {
			part.Source, part.Value, part.MIMEType = str(src, "type"), str(src, "value"), str(src, "mimeType")
		}
		parts = append(parts, part)
	}
	return parts
}

// ToolCall is one tool call of an assistant message (AG-UI ToolCall), as
// [Message.ToolCalls] reads it.
type ToolCall struct {
	ID   string // the call's "id"; a tool message answers it by this id
	Name string // the tool's name: "function"."name"
	// Arguments is "function"."arguments": JSON text as the model wrote it.
	// It may not be valid JSON, and is partial while the call streams.
	Arguments      string
	EncryptedValue string // the call's "encryptedValue", or ""
}

// ToolCalls returns the tool calls of an assistant message ("toolCalls"),
// in order, or nil when it has none. A member a call lacks, or has of
// another type, reads as "".
func (m Message) ToolCalls() []ToolCall {
	calls := m.member("toolCalls")
	if calls == nil || calls.Kind() != jsonv.Array {
		return nil
	}
	out := make([]ToolCall, 0, calls.Len())
	for _, tc := range calls.All() {
		if tc.Kind() == jsonv.Object {
			out = append(out, toolCallOf(tc))
		}
	}
	return out
}

// toolCallOf reads the tool call object tc.
func toolCallOf(tc *jsonv.Node) ToolCall {
	call := ToolCall{ID: str(tc, "id"), EncryptedValue: str(tc, "encryptedValue")}
	if fn := tc.Get("function"); fn != nil && fn.Kind() == jsonv.Object {
		call.Name, call.Arguments = str(fn, "name"), str(fn, "arguments")
	}
	return call
}

// ToolCallID returns the "toolCallId" of a tool message: the id of the
// call it answers, or "".
func (m Message) ToolCallID() string { return m.str("toolCallId") }

// ActivityType returns the "activityType" of an activity message, or "".
// Its content is [Message.Content].
func (m Message) ActivityType() string { return m.str("activityType") }

// EncryptedValue returns the message's "encryptedValue", a provider's
// opaque artefact to send back on a later turn, or "".
func (m Message) EncryptedValue() string { return m.str("encryptedValue") }

// member returns the member name of the message object, or nil.
func (m Message) member(name string) *jsonv.Node {
	if m.v == nil {
		return nil
	}
	return m.v.Get(name)
}

// str returns the string member name of the message object, or "".
func (m Message) str(name string) string {
	if m.v == nil {
		return ""
	}
	return str(m.v, name)
}

// str returns the string member name of object o, or "" when it is absent
// or not a string.
func str(o *jsonv.Node, name string) string {
	text, _ := o.StringMember(name)
	return text
}

// Value returns the whole message object.
func (m Message) Value() Value { return valueOf(m.v) }

// MarshalJSON returns the message object's compact JSON text, members and
// numbers as received. It fails for the zero Message and for one whose
// constructor failed, rather than write null.
func (m Message) MarshalJSON() ([]byte, error) {
	if err := m.check(); err != nil {
		return nil, apiError(err)
	}
	return Value{m.v}.MarshalJSON()
}

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
	for i := range n.Len() { // not n.All(): a return from its loop costs allocations
		m := n.Elem(i)
		if m.Kind() != jsonv.Object {
			return nil, fmt.Errorf("%w: message %d is %s, not an object", errMalformedMessages, i, m.Kind().Phrase())
		}
		id, hasID := m.StringMember("id")
		switch {
		case !hasID && lenient && m.Get("id") == nil:
		case id == "":
			return nil, fmt.Errorf("%w: message %d: \"id\" is missing or not a non-empty string", errMalformedMessages, i)
		}
		role, ok := m.StringMember("role")
		if !ok {
			return nil, fmt.Errorf("%w: message %d: \"role\" is missing or not a string", errMalformedMessages, i)
		}
		out[i] = Message{role: role, v: m}
		if !hasID {
			continue
		}
		out[i].id = id
		if _, dup := seen[out[i].id]; dup && !lenient {
			return nil, fmt.Errorf("%w: message %d: id %s appears twice", errMalformedMessages, i, jsonv.Quote(out[i].id))
		}
		seen[out[i].id] = struct{}{}
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
		m.id = id.Text()
	}
	if role := v.Get("role"); role != nil && role.Kind() == jsonv.String {
		m.role = role.Text()
	}
	return m
}

// mergeMetadata returns object o with an event's "metadata" object merged
// into its own shallowly, as the reference client's mergeMetadata does:
// {...o.metadata, ...meta}. Members already there keep their place and take
// the event's value; new ones, and a "metadata" member o did not have, go at
// the end. A "metadata" that is not an object is replaced. A nil meta
// returns o. It edits in the change's batch.
//
// It costs O(m log n) for m members merged into n: one at a time while m is
// small, and for more by making the merged object anew, in
// O((n+m) log(n+m)).
func (t *txn) mergeMetadata(o, meta *jsonv.Node) *jsonv.Node {
	if meta == nil {
		return o
	}
	held := o.Get("metadata")
	switch {
	case held == nil || held.Kind() != jsonv.Object || held.Len() == 0:
		held = meta // {...{}, ...meta}: meta's members in its order
	case meta.Len() > 32 && meta.Len() > held.Len()/8:
		held = jsonv.Merged(held, meta)
	default:
		for name, v := range meta.Members() {
			held = t.with(held, name, v)
		}
	}
	return t.with(o, "metadata", held)
}
