// Text and reasoning messages: TEXT_MESSAGE_*, REASONING_* and
// REASONING_ENCRYPTED_VALUE.

package aguistate

import (
	"github.com/aguistate/aguistate/internal/jsonv"
)

// A reasoning message is built as a text message is, with the role
// "reasoning" and no name, so both families share these handlers. Both are
// constructs (construct.go), and write only into the roles of the write
// rule (write.go).

// textStart applies TEXT_MESSAGE_START.
func (t *txn) textStart(ev *jsonv.Node) error { return t.start(ev, textConstruct) }

// reasoningStart applies REASONING_MESSAGE_START.
func (t *txn) reasoningStart(ev *jsonv.Node) error { return t.start(ev, reasoningConstruct) }

// start opens a text message or a reasoning message, as k says.
func (t *txn) start(ev *jsonv.Node, k constructKind) error {
	f := eventFields(ev)
	id := f.id("messageId")
	role, name := roleReasoning, (*jsonv.Node)(nil)
	if k == reasoningConstruct {
		t.reasoningRole(f)
	} else {
		role = textRole(f)
		name = f.opt("name", jsonv.String)
	}
	sub, meta := f.opt("subagentRunId", jsonv.String), f.meta()
	if f.err != nil {
		return f.err
	}
	t.openText(k, id, role, name, sub, meta)
	return nil
}

// reasoningRole reads the "role" of a REASONING_MESSAGE_START, which is
// "reasoning" (AG-UI ReasoningMessageStartEvent). The role "assistant",
// which producers and clients before 1.0 wrote there, is read as
// "reasoning" with a warning; any other is malformed. It is the rule of
// textRole: a start's role is one its type allows, but for a pre-1.0
// shape, read as the reference client's runAgent reads the others.
func (t *txn) reasoningRole(f *fields) {
	switch role := f.str("role"); {
	case f.err != nil, role == roleReasoning:
	case role == roleAssistant:
		t.note("a REASONING_MESSAGE_START with the role \"assistant\" is a shape of a version before 1.0, read as the role \"reasoning\"")
	default:
		f.fail("\"role\" is %s; a reasoning message's role is \"reasoning\"", jsonv.Quote(role))
	}
}

// textRole reads the optional "role" of a text message event: one of the
// roles text message events write (AG-UI TextMessageRole), "assistant"
// when absent.
func textRole(f *fields) string {
	role, ok := f.optStr("role")
	if !ok {
		return roleAssistant
	}
	if !textWriter.writes(role) {
		f.fail("\"role\" is %s; a text message's role is %s", jsonv.Quote(role), quotedList(writeRule[textWriter].roles))
	}
	return role
}

// openText opens the text or reasoning message id (construct rule). A new
// message {id, role, content: "", name?, subagentRunId?, metadata?} is
// appended. A held message opens only when it has the role and no text yet;
// it is kept as it is and takes the metadata, as the reference client does.
// Any other held message skips the event: a replay, or a message of
// another role.
func (t *txn) openText(k constructKind, id, role string, name, sub, meta *jsonv.Node) {
	m, i, held := t.message(id)
	switch {
	case !held:
		v := jsonv.NewObjectOf([]string{"id", "role", "content", "name", "subagentRunId"},
			jsonv.NewString(id), jsonv.NewString(role), jsonv.NewString(""), name, sub)
		t.appendMessage(Message{id: id, role: role, v: t.mergeMetadata(v, meta)})
	case !k.writer().writes(m.role):
		t.wrongRole(k.writer(), m)
		return
	case m.role != role:
		t.noTarget("message %s has the role %s, and the event starts one of the role %s",
			quoted(id), quoted(m.role), quoted(role))
		return
	case t.isOpen(k, id) || !noText(m):
		t.noTarget("%s %s is held already: a start that names it is a replay", k, quoted(id))
		return
	default:
		t.editMessage(i, m, t.mergeMetadata(m.v, meta))
	}
	t.openConstruct(k, id)
}

// textDelta applies the CONTENT event of a construct of kind k.
func (t *txn) textDelta(ev *jsonv.Node, k constructKind) error {
	f := eventFields(ev)
	id, delta, meta := f.id("messageId"), f.str("delta"), f.meta()
	if f.err != nil {
		return f.err
	}
	t.appendText(k, id, delta, meta)
	return nil
}

// textContent applies TEXT_MESSAGE_CONTENT.
func (t *txn) textContent(ev *jsonv.Node) error { return t.textDelta(ev, textConstruct) }

// reasoningContent applies REASONING_MESSAGE_CONTENT.
func (t *txn) reasoningContent(ev *jsonv.Node) error { return t.textDelta(ev, reasoningConstruct) }

// appendText appends delta to the content of the open message id, and
// merges meta into the message. A message without content gets it as its
// last member, as the reference client does.
func (t *txn) appendText(k constructKind, id, delta string, meta *jsonv.Node) {
	m, i, ok := t.openTarget(k, id)
	if !ok {
		return
	}
	t.appendTo(k, i, m, delta, meta)
}

// appendTo is appendText to m, the open message at position i.
func (t *txn) appendTo(k constructKind, i int, m Message, delta string, meta *jsonv.Node) {
	id := m.id
	before := m.v.Get("content")
	after := t.concatText(before, delta)
	t.editMessage(i, m, t.mergeMetadata(t.with(m.v, "content", after), meta))
	t.appendedText(k, id, before, after, delta)
}

// textEnd applies the END event of a construct of kind k: the message
// takes the event's metadata and is closed.
func (t *txn) textEnd(ev *jsonv.Node, k constructKind) error {
	f := eventFields(ev)
	id, meta := f.id("messageId"), f.meta()
	if f.err != nil {
		return f.err
	}
	if m, i, ok := t.openTarget(k, id); ok {
		t.editMessage(i, m, t.mergeMetadata(m.v, meta))
		t.closeConstruct(k, id)
	}
	return nil
}

// textMessageEnd applies TEXT_MESSAGE_END.
func (t *txn) textMessageEnd(ev *jsonv.Node) error { return t.textEnd(ev, textConstruct) }

// reasoningEnd applies REASONING_MESSAGE_END.
func (t *txn) reasoningEnd(ev *jsonv.Node) error { return t.textEnd(ev, reasoningConstruct) }

// openTarget returns the held message id that an event of a construct of
// kind k changes, or skips the event with a warning: no message has the
// id, it has a role the event does not write, or it is not open.
func (t *txn) openTarget(k constructKind, id string) (Message, int, bool) {
	m, i, ok := t.target(k.writer(), id)
	if ok && !t.isOpen(k, id) {
		t.noTarget("%s %s is not open: its start was skipped, or it has ended", k, quoted(id))
		return Message{}, -1, false
	}
	return m, i, ok
}

// encryptedValue applies REASONING_ENCRYPTED_VALUE: the entity's
// "encryptedValue" member is set (replaced where it is, or appended). The
// entity is, for subtype "tool-call", the first tool call with id entityId
// in an assistant message, and otherwise the message entityId, of a role
// the write rule lets encrypted values write.
func (t *txn) encryptedValue(ev *jsonv.Node) error {
	f := eventFields(ev)
	subtype, id, val := f.str("subtype"), f.id("entityId"), f.of("encryptedValue", jsonv.String)
	if f.err != nil {
		return f.err
	}
	if subtype == "tool-call" {
		tc, ok := t.findToolCall(id, true)
		if !ok {
			t.noTarget("no tool call %s in an assistant message", quoted(id))
			return nil
		}
		t.setToolCall(tc, t.with(tc.call, "encryptedValue", val))
		return nil
	}
	if m, i, ok := t.target(encryptedWriter, id); ok {
		t.editMessage(i, m, t.with(m.v, "encryptedValue", val))
	}
	return nil
}
