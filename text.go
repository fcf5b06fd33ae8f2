// Text and reasoning messages: TEXT_MESSAGE_*, REASONING_* and
// REASONING_ENCRYPTED_VALUE.

package aguistate

import (
	"github.com/aguistate/aguistate/internal/jsonv"
)

// A reasoning message is built as a text message is, with the role
// "reasoning" and no name, so both families share these handlers.

// textStart applies TEXT_MESSAGE_START.
func (t *txn) textStart(ev *jsonv.Node) error { return t.start(ev, false) }

// reasoningStart applies REASONING_MESSAGE_START.
func (t *txn) reasoningStart(ev *jsonv.Node) error { return t.start(ev, true) }

// reasoningBoundary checks a REASONING_START or REASONING_END, which
// change nothing.
func (t *txn) reasoningBoundary(ev *jsonv.Node) error {
	f := eventFields(ev)
	f.id("messageId")
	return f.err
}

// start opens a text message or, when reasoning is true, a reasoning
// message.
func (t *txn) start(ev *jsonv.Node, reasoning bool) error {
	f := eventFields(ev)
	id := f.id("messageId")
	role, name := roleReasoning, (*jsonv.Node)(nil)
	if reasoning {
		f.str("role")
	} else {
		if r, ok := f.optStr("role"); ok {
			role = r
		} else {
			role = roleAssistant
		}
		name = f.opt("name", jsonv.String)
	}
	sub, meta := f.opt("subagentRunId", jsonv.String), f.meta()
	if f.err != nil {
		return f.err
	}
	t.openText(id, role, name, sub, meta)
	return nil
}

// openText starts the text or reasoning message id. A held message with that
// id is reused as it is (role, name and content kept) and only takes the
// metadata, as the reference client does; an activity message cannot be
// reused and the event is skipped. Otherwise a new message
// {id, role, content: "", name?, subagentRunId?, metadata?} is appended.
func (t *txn) openText(id, role string, name, sub, meta *jsonv.Node) {
	if m, i, held := t.message(id); held {
		if m.role == roleActivity {
			t.noTarget("message %s is an activity message", jsonv.Quote(id))
			return
		}
		t.setMessage(i, messageOf(mergeMetadata(m.v, meta)))
		return
	}
	v := jsonv.NewObjectOf([]string{"id", "role", "content", "name", "subagentRunId"},
		jsonv.NewString(id), jsonv.NewString(role), jsonv.NewString(""), name, sub)
	t.appendMessage(Message{id: id, role: role, v: mergeMetadata(v, meta)})
}

// textContent applies TEXT_MESSAGE_CONTENT and REASONING_MESSAGE_CONTENT.
func (t *txn) textContent(ev *jsonv.Node) error {
	f := eventFields(ev)
	id, delta, meta := f.id("messageId"), f.str("delta"), f.meta()
	if f.err != nil {
		return f.err
	}
	t.appendText(id, delta, meta)
	return nil
}

// appendText appends delta to the string content of message id, whatever
// its role but activity. Content that is not a string (content parts) is
// replaced by delta, and a message without content gets it as its last
// member, as the reference client does.
func (t *txn) appendText(id, delta string, meta *jsonv.Node) {
	m, i, ok := t.textTarget(id)
	if !ok {
		return
	}
	v := jsonv.WithMember(m.v, "content", t.concatText(m.v.Get("content"), delta))
	t.setMessage(i, messageOf(mergeMetadata(v, meta)))
}

// textEnd applies TEXT_MESSAGE_END and REASONING_MESSAGE_END: the message
// takes the event's metadata and nothing else changes.
func (t *txn) textEnd(ev *jsonv.Node) error {
	f := eventFields(ev)
	id, meta := f.id("messageId"), f.meta()
	if f.err != nil {
		return f.err
	}
	if m, i, ok := t.textTarget(id); ok {
		t.setMessage(i, messageOf(mergeMetadata(m.v, meta)))
	}
	return nil
}

// textTarget returns the held message id that a text or reasoning event may
// change, or skips the event with a warning.
func (t *txn) textTarget(id string) (Message, int, bool) {
	m, i, ok := t.message(id)
	switch {
	case !ok:
		t.noTarget("no message %s", jsonv.Quote(id))
	case m.role == roleActivity:
		t.noTarget("message %s is an activity message", jsonv.Quote(id))
	default:
		return m, i, true
	}
	return Message{}, -1, false
}

// encryptedValue applies REASONING_ENCRYPTED_VALUE: the entity's
// "encryptedValue" member is set (replaced where it is, or appended). The
// entity is, for subtype "tool-call", the first tool call with id entityId
// in an assistant message, and otherwise the message entityId, which must
// not be an activity message.
func (t *txn) encryptedValue(ev *jsonv.Node) error {
	f := eventFields(ev)
	subtype, id, val := f.str("subtype"), f.id("entityId"), f.of("encryptedValue", jsonv.String)
	if f.err != nil {
		return f.err
	}
	if subtype == "tool-call" {
		tc, ok := t.findToolCall(id, "assistant")
		if !ok {
			t.noTarget("no tool call %s in an assistant message", jsonv.Quote(id))
			return nil
		}
		t.setToolCall(tc, jsonv.WithMember(tc.call, "encryptedValue", val))
		return nil
	}
	if m, i, ok := t.textTarget(id); ok {
		t.setMessage(i, messageOf(jsonv.WithMember(m.v, "encryptedValue", val)))
	}
	return nil
}
