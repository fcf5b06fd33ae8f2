// Tool calls: TOOL_CALL_START, _ARGS, _END and _RESULT.

package aguistate

import (
	"github.com/aguistate/aguistate/internal/jsonv"
)

// A tool call lives in the "toolCalls" array of an assistant message as
// {id, type: "function", function: {name, arguments}, metadata?}.

// toolCallRef locates one tool call: the position of its message and the
// message, the message's "toolCalls" array, and the call's index and object
// in it.
type toolCallRef struct {
	msg   int
	m     Message
	calls *jsonv.Node
	i     int
	call  *jsonv.Node
}

// findToolCall returns the first tool call with id in the held messages,
// looking only at assistant messages when assistant is true.
func (t *txn) findToolCall(id string, assistant bool) (toolCallRef, bool) {
	return t.next.messages.toolCall(id, assistant)
}

// setToolCall replaces the tool call r with call, which has its id.
func (t *txn) setToolCall(r toolCallRef, call *jsonv.Node) {
	if call == r.call {
		return
	}
	calls := t.ed().SetAt(r.calls, r.i, call)
	m := messageOf(t.with(r.m.v, "toolCalls", calls))
	t.next.messages.setCall(t.ed().Owner(), r.msg, m, "")
	t.replacedMessage(m)
}

// toolStart applies TOOL_CALL_START, which opens a tool call (construct
// rule). A tool call whose id is already held is left as it is: the event
// is a replay, skipped with a warning. The new call goes to the end of the
// "toolCalls" of its owner: the assistant message parentMessageId; a new
// assistant message with that id when none is held; and, without a
// parentMessageId or when it names a message that is not an assistant's,
// the message with the tool call's own id, created
// {id, role: "assistant", toolCalls: [], subagentRunId?} when not held.
func (t *txn) toolStart(ev *jsonv.Node) error {
	f := eventFields(ev)
	id, name := f.id("toolCallId"), f.str("toolCallName")
	parent, _ := f.optStr("parentMessageId")
	sub, meta := f.opt("subagentRunId", jsonv.String), f.meta()
	if f.err != nil {
		return f.err
	}
	t.startToolCall(id, name, parent, sub, meta)
	return nil
}

func (t *txn) startToolCall(id, name, parent string, sub, meta *jsonv.Node) {
	if _, ok := t.findToolCall(id, false); ok {
		t.noTarget("tool call %s is held already: a start that names it is a replay", quoted(id))
		return
	}
	call := t.mergeMetadata(jsonv.NewObjectOf([]string{"id", "type", "function"},
		jsonv.NewString(id), jsonv.NewString("function"),
		jsonv.NewObjectOf([]string{"name", "arguments"}, jsonv.NewString(name), jsonv.NewString(""))), meta)
	owner := id
	if parent != "" {
		if m, _, held := t.message(parent); !held || m.role == roleAssistant {
			owner = parent
		}
	}
	m, i, held := t.message(owner)
	switch {
	case !held:
		v := jsonv.NewObjectOf([]string{"id", "role", "toolCalls", "subagentRunId"},
			jsonv.NewString(owner), jsonv.NewString(roleAssistant), jsonv.NewArray([]*jsonv.Node{call}), sub)
		t.appendMessage(Message{id: owner, role: roleAssistant, v: v})
	case !toolCallWriter.writes(m.role):
		t.wrongRole(toolCallWriter, m)
		return
	case callsOf(m) == nil:
		t.setMessage(i, messageOf(t.with(m.v, "toolCalls", jsonv.NewArray([]*jsonv.Node{call}))))
	default:
		calls := callsOf(m)
		m = messageOf(t.with(m.v, "toolCalls", t.ed().InsertElem(calls, calls.Len(), call)))
		t.next.messages.setCall(t.ed().Owner(), i, m, id)
		t.replacedMessage(m)
	}
	t.openConstruct(toolConstruct, id)
	t.startedCall(id)
}

// toolArgs applies TOOL_CALL_ARGS: delta is appended to the open call's
// function.arguments (not checked as JSON), and the call takes the event's
// metadata.
func (t *txn) toolArgs(ev *jsonv.Node) error {
	f := eventFields(ev)
	id, delta, meta := f.id("toolCallId"), f.str("delta"), f.meta()
	if f.err != nil {
		return f.err
	}
	t.appendToolArgs(id, delta, meta)
	return nil
}

func (t *txn) appendToolArgs(id, delta string, meta *jsonv.Node) {
	r, ok := t.openToolCall(id)
	if !ok {
		return
	}
	fn := r.call.Get("function")
	if fn == nil || fn.Kind() != jsonv.Object {
		t.noTarget("tool call %s has no \"function\" object", quoted(id))
		return
	}
	before := fn.Get("arguments")
	after := t.concatText(before, delta)
	t.setToolCall(r, t.mergeMetadata(t.with(r.call, "function", t.with(fn, "arguments", after)), meta))
	t.appendedText(toolConstruct, id, before, after, delta)
}

// toolEnd applies TOOL_CALL_END: the open call takes the event's metadata
// and is closed.
func (t *txn) toolEnd(ev *jsonv.Node) error {
	f := eventFields(ev)
	id, meta := f.id("toolCallId"), f.meta()
	if f.err != nil {
		return f.err
	}
	if r, ok := t.openToolCall(id); ok {
		t.setToolCall(r, t.mergeMetadata(r.call, meta))
		t.closeConstruct(toolConstruct, id)
	}
	return nil
}

// openToolCall returns the open tool call id in an assistant message, or
// skips the event with a warning: no message holds it, the message that
// does is not an assistant's, or the call is not open.
func (t *txn) openToolCall(id string) (toolCallRef, bool) {
	r, ok := t.findToolCall(id, true)
	switch {
	case !ok:
		if r, held := t.findToolCall(id, false); held {
			t.wrongRole(toolCallWriter, r.m)
		} else {
			t.noTarget("no tool call %s", quoted(id))
		}
	case !t.isOpen(toolConstruct, id):
		t.noTarget("tool call %s is not open: its start was skipped, or it has ended", quoted(id))
	default:
		return r, true
	}
	return toolCallRef{}, false
}

// toolResult applies TOOL_CALL_RESULT: the message
// {id, toolCallId, role: "tool", content, subagentRunId?, metadata?}
// replaces the held tool message with its id and tool call id, in place
// (an updated result). A held message of another role, or the result of
// another tool call, is never overwritten: the event is skipped with an
// ErrNoTarget warning. A new result goes right after the first assistant
// message that holds the tool call and the tool messages that follow it,
// or at the end when no assistant message does.
func (t *txn) toolResult(ev *jsonv.Node) error {
	f := eventFields(ev)
	id, callID, content := f.id("messageId"), f.id("toolCallId"), f.of("content", jsonv.String, jsonv.Array)
	role := roleTool
	if r, ok := f.optStr("role"); ok && r != "" && r != roleTool { // "" reads as "tool", as in the reference
		f.fail("\"role\" is %s; a tool call result's role is \"tool\"", jsonv.Quote(r))
	}
	sub, meta := f.opt("subagentRunId", jsonv.String), f.meta()
	if f.err != nil {
		return f.err
	}
	v := t.mergeMetadata(jsonv.NewObjectOf([]string{"id", "toolCallId", "role", "content", "subagentRunId"},
		jsonv.NewString(id), jsonv.NewString(callID), jsonv.NewString(role), content, sub), meta)
	msg := Message{id: id, role: role, v: v}
	if _, _, held := t.message(id); held {
		old, i, ok := t.target(toolResultWriter, id)
		if !ok {
			return nil
		}
		if held := old.v.Get("toolCallId"); held == nil || held.Kind() != jsonv.String || held.Text() != callID {
			t.noTarget("message %s holds the result of tool call %s, not of tool call %s",
				quoted(id), quoted(toolCallIDOf(held)), quoted(callID))
			return nil
		}
		t.setMessage(i, msg)
		t.answeredCall(callID)
		return nil
	}
	at := t.next.messages.Len()
	if r, ok := t.findToolCall(callID, true); ok {
		at = t.next.messages.afterTools(r.msg)
	}
	t.insertMessage(at, msg)
	t.answeredCall(callID)
	return nil
}

// toolCallIDOf returns a tool message's "toolCallId" as a string: its
// text, or its JSON text when it is not a string.
func toolCallIDOf(n *jsonv.Node) string {
	switch {
	case n == nil:
		return ""
	case n.Kind() == jsonv.String:
		return n.Text()
	}
	return string(jsonv.Marshal(n))
}
