// Run scopes: the steps, reasoning spans and subagents open in a run, and
// the events that ended it. They change no state or message; a Consumer
// keeps them so that a prelude (prelude.go) can open them again for a viewer
// who joins mid-run.

package aguistate

import (
	"strconv"

	"github.com/aguistate/aguistate/internal/jsonv"
)

// The reference client's event verification tracks, within a run, the
// steps that STEP_STARTED opened (per subagent), the reasoning spans that
// REASONING_START opened, and the subagents that SUBAGENT_STARTED started
// (active or finished). An event that would close one it never saw open is
// an error there, so a viewer who joins mid-run must see them opened again.
// A Consumer tracks them as they are; it checks nothing more than it did:
// a second STEP_STARTED of an open step, or a STEP_FINISHED of one that is
// not open, changes nothing. RUN_STARTED, RUN_FINISHED and RUN_ERROR clear
// them all. What they hold is bounded by MaxScopeSize, in bytes of JSON
// text as a checkpoint writes them, which bounds their number too; each is
// found by its key in O(log n) (keyed.go).

// openStep is an open step: its name and the subagentRunId of its
// STEP_STARTED (none for the parent agent).
type openStep struct {
	name string
	sub  *jsonv.Node // a string, or nil
}

// stepKey returns the key of the step name of subagent run sub (nil for
// none): the name itself for none, so that the parent agent's steps, the
// common ones, make no key; else the byte 0xFF, the length of the
// subagentRunId in decimal, ":", the subagentRunId and the name. No name
// starts with 0xFF: names are read by jsonv, whose strings are UTF-8 or
// WTF-8 (for lone surrogates), where that byte never appears.
func stepKey(name string, sub *jsonv.Node) string {
	if sub == nil {
		return name
	}
	id := sub.Text()
	return "\xff" + strconv.Itoa(len(id)) + ":" + id + name
}

func (s openStep) key() string { return stepKey(s.name, s.sub) }

// size is the length of the step's entry in a checkpoint:
// {"name":NAME,"subagentRunId":SUB}.
func (s openStep) size() int { return scopeSize(len(`{"name":}`), s.name, s.sub) }

// openSpan is an open reasoning span: the messageId and subagentRunId of its
// REASONING_START.
type openSpan struct {
	id  string
	sub *jsonv.Node // a string, or nil
}

func (s openSpan) key() string { return s.id }

// size is the length of the span's entry in a checkpoint:
// {"messageId":ID,"subagentRunId":SUB}.
func (s openSpan) size() int { return scopeSize(len(`{"messageId":}`), s.id, s.sub) }

// scopeSize returns the length of a step's or a span's entry in a
// checkpoint: fixed bytes, the string name, and the member subagentRunId
// when sub is not nil.
func scopeSize(fixed int, name string, sub *jsonv.Node) int {
	n := fixed + jsonv.StringSize(name)
	if sub != nil {
		n += len(`,"subagentRunId":`) + sub.Size()
	}
	return n
}

// subagent is a subagent started in the run: its SUBAGENT_STARTED, as it
// arrived, and whether SUBAGENT_FINISHED or SUBAGENT_ERROR has ended it.
type subagent struct {
	id    string
	start *jsonv.Node
	done  bool
}

func (s subagent) key() string { return s.id }

// size is the length of the subagent's entry in a checkpoint:
// {"event":EVENT,"done":false}.
func (s subagent) size() int {
	if s.done {
		return len(`{"event":,"done":true}`) + s.start.Size()
	}
	return len(`{"event":,"done":false}`) + s.start.Size()
}

// scopeSize returns the bytes of JSON text that v's steps, reasoning spans
// and subagents hold, as a checkpoint writes them (MaxScopeSize).
func (v *view) scopeSize() int { return v.steps.size() + v.spans.size() + v.subagents.size() }

// stepStarted applies STEP_STARTED: the step opens unless it is open.
func (t *txn) stepStarted(ev *jsonv.Node) error {
	f := eventFields(ev)
	name, sub := f.str("stepName"), f.opt("subagentRunId", jsonv.String)
	if f.err != nil {
		return f.err
	}
	t.scope().steps.add(t.ed().Owner(), openStep{name, sub})
	return nil
}

// stepFinished applies STEP_FINISHED: the step closes if it is open.
func (t *txn) stepFinished(ev *jsonv.Node) error {
	f := eventFields(ev)
	name, sub := f.str("stepName"), f.opt("subagentRunId", jsonv.String)
	if f.err != nil {
		return f.err
	}
	t.scope().steps.remove(t.ed().Owner(), stepKey(name, sub))
	return nil
}

// reasoningSpanStart applies REASONING_START: the span opens unless it is
// open.
func (t *txn) reasoningSpanStart(ev *jsonv.Node) error {
	f := eventFields(ev)
	id, sub := f.id("messageId"), f.opt("subagentRunId", jsonv.String)
	if f.err != nil {
		return f.err
	}
	t.scope().spans.add(t.ed().Owner(), openSpan{id, sub})
	return nil
}

// reasoningSpanEnd applies REASONING_END: the span closes if it is open.
func (t *txn) reasoningSpanEnd(ev *jsonv.Node) error {
	f := eventFields(ev)
	id := f.id("messageId")
	if f.err != nil {
		return f.err
	}
	t.scope().spans.remove(t.ed().Owner(), id)
	return nil
}

// subagentStarted applies SUBAGENT_STARTED, an event this package only
// passes on: one with a string subagentRunId that the run has not started
// is recorded. It is never an error (but for MaxScopeSize).
func (t *txn) subagentStarted(ev *jsonv.Node) error {
	id := ev.Get("subagentRunId")
	if id == nil || id.Kind() != jsonv.String {
		return nil
	}
	t.scope().subagents.add(t.ed().Owner(), subagent{id: id.Text(), start: ev})
	return nil
}

// subagentEnded applies SUBAGENT_FINISHED and SUBAGENT_ERROR: the subagent
// their string subagentRunId names, if the run started it, is done. It is
// never an error.
func (t *txn) subagentEnded(ev *jsonv.Node) error {
	id := ev.Get("subagentRunId")
	if id == nil || id.Kind() != jsonv.String {
		return nil
	}
	if s, ok := t.next.subagents.get(id.Text()); ok && !s.done {
		s.done = true
		t.scope().subagents.put(t.ed().Owner(), s)
	}
	return nil
}

// clearScopes closes the steps, spans and subagents, as a run's start or
// end does.
func (t *txn) clearScopes() {
	t.scope().steps, t.scope().spans, t.scope().subagents = keyedSet[openStep]{}, keyedSet[openSpan]{}, keyedSet[subagent]{}
}
