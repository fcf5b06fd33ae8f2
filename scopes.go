// Run scopes: the steps, reasoning spans and subagents open in a run, and
// the events that ended it. They change no state or message; a Consumer
// keeps them so that a prelude (prelude.go) can open them again for a viewer
// who joins mid-run.

package aguistate

import (
	"slices"

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
// them all.

// openStep is an open step: its name and the subagentRunId of its
// STEP_STARTED (none for the parent agent).
type openStep struct {
	name string
	sub  *jsonv.Node // a string, or nil
}

// openSpan is an open reasoning span: the messageId and subagentRunId of its
// REASONING_START.
type openSpan struct {
	id  string
	sub *jsonv.Node // a string, or nil
}

// subagent is a subagent started in the run: its SUBAGENT_STARTED, as it
// arrived, and whether SUBAGENT_FINISHED or SUBAGENT_ERROR has ended it.
type subagent struct {
	id    string
	start *jsonv.Node
	done  bool
}

// sameSub reports whether two optional subagentRunId strings are equal.
func sameSub(a, b *jsonv.Node) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Text() == b.Text()
}

// stepStarted applies STEP_STARTED: the step opens unless it is open.
func (t *txn) stepStarted(ev *jsonv.Node) error {
	f := eventFields(ev)
	name, sub := f.str("stepName"), f.opt("subagentRunId", jsonv.String)
	if f.err != nil {
		return f.err
	}
	if t.stepIndex(name, sub) < 0 {
		t.next.steps = append(slices.Clip(t.next.steps), openStep{name, sub})
	}
	return nil
}

// stepFinished applies STEP_FINISHED: the step closes if it is open.
func (t *txn) stepFinished(ev *jsonv.Node) error {
	f := eventFields(ev)
	name, sub := f.str("stepName"), f.opt("subagentRunId", jsonv.String)
	if f.err != nil {
		return f.err
	}
	if i := t.stepIndex(name, sub); i >= 0 {
		t.next.steps = slices.Concat(t.next.steps[:i], t.next.steps[i+1:])
	}
	return nil
}

func (t *txn) stepIndex(name string, sub *jsonv.Node) int {
	return slices.IndexFunc(t.next.steps, func(s openStep) bool { return s.name == name && sameSub(s.sub, sub) })
}

// reasoningSpanStart applies REASONING_START: the span opens unless it is
// open.
func (t *txn) reasoningSpanStart(ev *jsonv.Node) error {
	f := eventFields(ev)
	id, sub := f.id("messageId"), f.opt("subagentRunId", jsonv.String)
	if f.err != nil {
		return f.err
	}
	if t.spanIndex(id) < 0 {
		t.next.spans = append(slices.Clip(t.next.spans), openSpan{id, sub})
	}
	return nil
}

// reasoningSpanEnd applies REASONING_END: the span closes if it is open.
func (t *txn) reasoningSpanEnd(ev *jsonv.Node) error {
	f := eventFields(ev)
	id := f.id("messageId")
	if f.err != nil {
		return f.err
	}
	if i := t.spanIndex(id); i >= 0 {
		t.next.spans = slices.Concat(t.next.spans[:i], t.next.spans[i+1:])
	}
	return nil
}

func (t *txn) spanIndex(id string) int {
	return slices.IndexFunc(t.next.spans, func(s openSpan) bool { return s.id == id })
}

// subagentStarted applies SUBAGENT_STARTED, an event this package only
// passes on: one with a string subagentRunId that the run has not started
// is recorded. It is never an error.
func (t *txn) subagentStarted(ev *jsonv.Node) error {
	id := ev.Get("subagentRunId")
	if id == nil || id.Kind() != jsonv.String || t.subagentIndex(id.Text()) >= 0 {
		return nil
	}
	t.next.subagents = append(slices.Clip(t.next.subagents), subagent{id: id.Text(), start: ev})
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
	if i := t.subagentIndex(id.Text()); i >= 0 && !t.next.subagents[i].done {
		t.next.subagents = slices.Clone(t.next.subagents)
		t.next.subagents[i].done = true
	}
	return nil
}

func (t *txn) subagentIndex(id string) int {
	return slices.IndexFunc(t.next.subagents, func(s subagent) bool { return s.id == id })
}

// clearScopes closes the steps, spans and subagents, as a run's start or
// end does.
func (t *txn) clearScopes() {
	t.next.steps, t.next.spans, t.next.subagents = nil, nil, nil
}
