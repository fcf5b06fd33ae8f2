// Tool calls left for the client: the tool calls a run started and what
// answered them, and the calls its end leaves pending.

package aguistate

import (
	"fmt"

	"github.com/aguistate/aguistate/internal/jsonv"
)

// An AG-UI 1.0 run that stopped on tool calls the client runs (frontend
// tools) finishes with outcome "success", and may name them in the
// outcome's pendingToolCallIds. When it names none, a consumer derives the
// list from the stream, as the reference client does: the calls the run
// started (TOOL_CALL_START, or the chunk that opened one) and no
// TOOL_CALL_RESULT of the run answered, in the order they started. A
// Consumer keeps that tally for the run (view.calls) from its RUN_STARTED
// to the next one, in the checkpoint too, but for the calls that a
// MESSAGES_SNAPSHOT takes out of the thread (pruneCalls): so it holds only
// calls the thread holds, and needs no limit of its own. A skipped event
// changes nothing in it.

// runCall is a tool call the run started, and whether a TOOL_CALL_RESULT
// of the run answered it.
type runCall struct {
	id       string
	answered bool
}

func (c runCall) key() string { return c.id }

// size is the length of the call's entry in a checkpoint:
// {"id":ID,"answered":true}, the last member only when it is true.
func (c runCall) size() int {
	n := len(`{"id":}`) + jsonv.StringSize(c.id)
	if c.answered {
		n += len(`,"answered":true`)
	}
	return n
}

// startedCall records that the run started the tool call id.
func (t *txn) startedCall(id string) {
	t.scope().calls.add(t.ed().Owner(), runCall{id: id})
}

// pruneCalls forgets the tool calls of the run that a change which
// restates messages (a MESSAGES_SNAPSHOT) took out of the thread: the
// calls of the messages it removed or replaced that no assistant message
// holds any more. It costs O(log n) for each call of those messages, which
// the change has paid for already. So the run's tally holds only calls the
// thread holds, which the limits on messages bound.
func (t *txn) pruneCalls() {
	if t.next.calls.Len() == 0 {
		return
	}
	for _, ids := range [][]string{t.removed, t.replaced} {
		for _, id := range ids {
			m, _, ok := t.old.messages.Get(id)
			if !ok {
				continue
			}
			firstCalls(callsOf(m), func(call string, _ int) {
				if _, held := t.findToolCall(call, true); !held && t.next.calls.has(call) {
					t.scope().calls.remove(t.ed().Owner(), call)
				}
			})
		}
	}
}

// answeredCall records that a TOOL_CALL_RESULT of the run answered the
// tool call id, if the run started it.
func (t *txn) answeredCall(id string) {
	if c, ok := t.next.calls.get(id); ok && !c.answered {
		c.answered = true
		t.scope().calls.put(t.ed().Owner(), c)
	}
}

// pendingIDs reads the optional pendingToolCallIds of a success outcome:
// an array of non-empty strings (AG-UI RunFinishedSuccessOutcome), or an
// error wrapping ErrMalformedEvent.
func pendingIDs(outcome *jsonv.Node) ([]string, error) {
	f := eventFields(outcome)
	list := f.opt("pendingToolCallIds", jsonv.Array)
	if f.err != nil || list == nil {
		return nil, f.err
	}
	ids := make([]string, 0, list.Len())
	for i := range list.Len() {
		id := list.Elem(i)
		if id.Kind() != jsonv.String || id.Text() == "" {
			return nil, fmt.Errorf("%w: outcome: pendingToolCallIds %d is %s, not a tool call id", ErrMalformedEvent, i, id.Kind().Phrase())
		}
		ids = append(ids, id.Text())
	}
	return ids, nil
}

// pending returns the ids of the tool calls that the last run left for
// the client, as its RUN_FINISHED says or the tally derives them, or nil
// when the last run has not finished, or finished with an interrupt, a
// cancellation or a RUN_ERROR after it.
func (v *view) pending() []string {
	if v.run != runFinished || len(v.ends) != 1 {
		return nil
	}
	typ := ""
	outcome := v.ends[0].Get("outcome")
	if outcome != nil && outcome.Kind() == jsonv.Object {
		typ = str(outcome, "type")
	}
	switch typ {
	case "interrupt", "cancelled":
		return nil
	case "success":
		if ids, _ := pendingIDs(outcome); len(ids) > 0 { // RUN_FINISHED checked them
			return ids
		}
	}
	var ids []string
	for c := range v.calls.all() {
		if !c.answered {
			ids = append(ids, c.id)
		}
	}
	return ids
}

// PendingToolCalls returns the tool calls that the last run left for the
// client to answer (AG-UI 1.0 frontend tools) and that no held tool
// message answers yet, in order. They are those its RUN_FINISHED names in
// its success outcome's pendingToolCallIds, or, when it names none, the
// calls the run started that no TOOL_CALL_RESULT of the run answered, as
// the reference client derives them, but for those the thread no longer
// holds. A call that the producer names and the thread does not hold has
// only its ID. It returns nil while a run is in progress, and after a run
// that ended with an interrupt, cancelled or failed. It costs O(n) in the
// n messages held when a call is pending.
//
// Answer each call with [Consumer.AddMessages] and [ToolMessage], then run
// the agent again; [Consumer.RunTools] does it all with Go functions.
func (c *Consumer) PendingToolCalls() []ToolCall { return c.cur.Load().pendingToolCalls() }

// pendingToolCalls is PendingToolCalls on view v.
func (v *view) pendingToolCalls() []ToolCall {
	ids := v.pending()
	if len(ids) == 0 {
		return nil
	}
	answered := make(map[string]bool)
	for m := range v.messages.All() {
		if m.role == roleTool {
			answered[m.str("toolCallId")] = true
		}
	}
	var out []ToolCall
	for _, id := range ids {
		if answered[id] {
			continue
		}
		answered[id] = true // once, should the producer name it twice
		call := ToolCall{ID: id}
		if r, ok := v.messages.toolCall(id, true); ok {
			call = toolCallOf(r.call)
		}
		out = append(out, call)
	}
	return out
}
