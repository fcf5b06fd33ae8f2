// Composing the thread from Go: messages made by the application, and the
// local changes (messages added, state set or patched) that travel in the
// next run's input.

package aguistate

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aguistate/aguistate/internal/jsonv"
)

// Part is one content part of a user or tool message (AG-UI 1.0
// ContentPart): text, or an image, audio, video or document given by a
// URL, inline base64 data or a provider's file id. [UserMessage] and
// [ToolMessage] write it, [Message.Parts] reads it.
type Part struct {
	// Type is "text", "image", "audio", "video" or "document".
	Type string
	// Text is the text of a "text" part.
	Text string
	// Source says how Value gives a media part: "url", "data" (base64) or
	// "file" (a provider's file id).
	Source string
	// Value is the URL, the base64 data or the file id.
	Value string
	// MIMEType is the media type, such as "image/png": required with
	// "data", optional otherwise.
	MIMEType string
}

// node returns p as an AG-UI 1.0 content part object, or an error when it
// is not one.
func (p Part) node() (*jsonv.Node, error) {
	switch p.Type {
	case "text":
		return jsonv.NewObjectOf([]string{"type", "text"}, jsonv.NewString("text"), jsonv.NewString(p.Text)), nil
	case "image", "audio", "video", "document":
	default:
		return nil, fmt.Errorf("part type %s is not one of text, image, audio, video and document", jsonv.Quote(p.Type))
	}
	switch {
	case p.Source != "url" && p.Source != "data" && p.Source != "file":
		return nil, fmt.Errorf("%s part: source %s is not one of url, data and file", p.Type, jsonv.Quote(p.Source))
	case p.Value == "":
		return nil, fmt.Errorf("%s part: the value is empty", p.Type)
	case p.Source == "data" && p.MIMEType == "":
		return nil, fmt.Errorf("%s part: data needs a MIME type", p.Type)
	}
	names, vals := []string{"type", "value"}, []*jsonv.Node{jsonv.NewString(p.Source), jsonv.NewString(p.Value)}
	if p.MIMEType != "" {
		names, vals = append(names, "mimeType"), append(vals, jsonv.NewString(p.MIMEType))
	}
	return jsonv.NewObjectOf([]string{"type", "source"}, jsonv.NewString(p.Type), jsonv.NewObject(names, vals)), nil
}

// UserMessage returns a user message {"id", "role": "user", "content"} with
// a new random UUID as its id. With no parts, content is text. With parts,
// content is an array of AG-UI 1.0 content parts: text as a text part
// (when not empty), then parts. A part that is not one makes a Message
// that [Consumer.AddMessages] and [Message.MarshalJSON] refuse, saying
// why.
func UserMessage(text string, parts ...Part) Message {
	content, err := contentOf(text, parts)
	if err != nil {
		return Message{err: fmt.Errorf("UserMessage: %w", err)}
	}
	return newMessage(roleUser, content)
}

// contentOf returns the content of a message of text and parts: text when
// there are no parts, else an array of AG-UI 1.0 content parts, text as a
// text part (when not empty) and then parts. It fails for a part that is
// not one.
func contentOf(text string, parts []Part) (*jsonv.Node, error) {
	if len(parts) == 0 {
		return jsonv.NewString(text), nil
	}
	var elems []*jsonv.Node
	if text != "" {
		elems = append(elems, jsonv.NewObjectOf([]string{"type", "text"}, jsonv.NewString("text"), jsonv.NewString(text)))
	}
	for i, p := range parts {
		n, err := p.node()
		if err != nil {
			return nil, fmt.Errorf("part %d: %w", i, err)
		}
		elems = append(elems, n)
	}
	return jsonv.NewArray(elems), nil
}

// SystemMessage returns a system message {"id", "role": "system",
// "content": text} with a new random UUID as its id.
func SystemMessage(text string) Message { return textMessage("system", text) }

// DeveloperMessage returns a developer message {"id", "role": "developer",
// "content": text} with a new random UUID as its id.
func DeveloperMessage(text string) Message { return textMessage("developer", text) }

// AssistantMessage returns an assistant message {"id", "role":
// "assistant", "content": text} with a new random UUID as its id.
func AssistantMessage(text string) Message { return textMessage("assistant", text) }

// ToolMessage returns a tool message {"id", "role": "tool", "content",
// "toolCallId"}: the result of the tool call toolCallID, such as one the
// agent left for the application to run ([Consumer.PendingToolCalls]).
// Its id is a new random UUID. With no parts, content is text, such as
// the JSON text a tool returned. With parts, content is an array of AG-UI
// 1.0 content parts, as [UserMessage] makes it: text as a text part (when
// not empty), then parts, such as an image the tool made. An empty
// toolCallID, or a part that is not one, makes a Message that
// [Consumer.AddMessages] and [Message.MarshalJSON] refuse, saying why.
func ToolMessage(toolCallID, text string, parts ...Part) Message {
	if toolCallID == "" {
		return Message{err: errors.New("ToolMessage: the tool call id is empty")}
	}
	content, err := contentOf(text, parts)
	if err != nil {
		return Message{err: fmt.Errorf("ToolMessage: %w", err)}
	}
	m := newMessage(roleTool, content)
	m.v = jsonv.WithMember(m.v, "toolCallId", jsonv.NewString(toolCallID))
	return m
}

// WithID returns m with the id id in place of its own. An empty id makes a
// Message that [Consumer.AddMessages] and [Message.MarshalJSON] refuse.
func (m Message) WithID(id string) Message {
	switch {
	case m.check() != nil:
		return m
	case id == "":
		return Message{err: errors.New("WithID: the id is empty")}
	}
	m.id, m.v = id, jsonv.WithMember(m.v, "id", jsonv.NewString(id))
	return m
}

func textMessage(role, text string) Message { return newMessage(role, jsonv.NewString(text)) }

func newMessage(role string, content *jsonv.Node) Message {
	id := newUUID()
	return Message{id: id, role: role, v: jsonv.NewObjectOf([]string{"id", "role", "content"},
		jsonv.NewString(id), jsonv.NewString(role), content)}
}

// AddMessages appends messages to the thread in order, as one local
// change: the user's next message, or the result of a tool call the agent
// left to the application. They go to the agent in the next run's input.
// Subscribers get one [Change] with the zero Event.
//
// Each message needs an id that the thread does not hold and that no other
// of messages has, and a role. It returns an error, and adds nothing, when
// one has not (the zero Message, or one whose constructor failed
// included), or an error wrapping [ErrLimit] when the thread would exceed
// [Options] MaxMessages or a message MaxMessageSize.
func (c *Consumer) AddMessages(messages ...Message) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	defer c.done()
	t := c.begin(c.cur.Load())
	for i, m := range messages {
		err := m.check()
		switch {
		case err != nil:
		case m.id == "":
			err = errors.New("it has no id")
		case m.role == "":
			err = errors.New("it has no role")
		default:
			if _, _, held := t.message(m.id); held {
				err = fmt.Errorf("the thread holds a message with the id %s", jsonv.Quote(m.id))
			}
		}
		if err != nil {
			return apiError(fmt.Errorf("AddMessages: message %d: %w", i, err))
		}
		t.appendMessage(m)
	}
	return apiError(c.commitLocal(t))
}

// SetState replaces the state with state, as one local change: shared
// state that the user edited. It goes to the agent in the next run's input
// (spec, Cross-run behaviour). state is a [Value]; JSON text, as a
// json.RawMessage or a []byte (never marshalled as base64); or any other
// value encoding/json marshals, so that a Go string is a JSON string.
// Subscribers get one [Change] with the zero Event when the state changed.
// The diverged flag is left as it is.
//
// It returns an error, and changes nothing, when state cannot be
// marshalled or is not valid JSON text, an error wrapping [ErrLimit] when
// it is larger or deeper than [Options] allow, or one wrapping
// [ErrStateRejected] when [Options].ValidateState refuses it. Do not call
// it while a run is streaming: the agent's deltas apply to the state the
// run started from.
func (c *Consumer) SetState(state any) error {
	n, err := c.stateNode(state)
	if err != nil {
		return apiError(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	defer c.done()
	t := c.begin(c.cur.Load())
	t.next.state = n
	return apiError(c.commitLocal(t))
}

// stateNode returns state as a JSON tree, parsed under the Consumer's
// MaxDepth.
func (c *Consumer) stateNode(state any) (*jsonv.Node, error) {
	switch s := state.(type) {
	case Value:
		return s.node(), nil
	case []byte: // JSON text, as json.RawMessage: not base64
		state = json.RawMessage(s)
	}
	data, err := json.Marshal(state)
	if err != nil {
		return nil, fmt.Errorf("SetState: %w", err)
	}
	return parseJSON(data, c.opts.MaxDepth)
}

// PatchState applies the RFC 6902 JSON Patch patch (JSON text) to the
// state, all operations or none, as one local change. It is
// [Consumer.SetState] for a part of the state, with the rules of a
// STATE_DELTA, but returns what a delta would warn of.
//
// It returns an error holding a *[PatchError] and wrapping
// [ErrMalformedEvent] for a malformed patch or [ErrPatchFailed] for one
// that does not apply; one wrapping [ErrLimit] or [ErrStateRejected] as
// SetState does. It then changes nothing.
func (c *Consumer) PatchState(patch json.RawMessage) error {
	lim := c.opts.stateLimits()
	n, err := parseJSON(patch, c.opts.MaxDepth)
	if err != nil {
		return apiError(fmt.Errorf("%w (in the patch)", err))
	}
	ops, err := decodePatch(n, lim)
	if err != nil {
		return apiError(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	defer c.done()
	t := c.begin(c.cur.Load())
	if t.next.state, err = applyPatch(t.next.state, ops, lim); err != nil {
		return apiError(err)
	}
	return apiError(c.commitLocal(t))
}
