// Runs: the run lifecycle, RUN_STARTED and its input, RUN_FINISHED and its
// interrupts, RUN_ERROR and steps.

package aguistate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/aguistate/aguistate/internal/jsonv"
)

// runPhase is where a thread is in the AG-UI run lifecycle.
type runPhase uint8

const (
	runNone     runPhase = iota // no RUN_STARTED yet: every event is taken
	runActive                   // after RUN_STARTED
	runFinished                 // after RUN_FINISHED: a new run, or RUN_ERROR
	runFailed                   // after RUN_ERROR: a new run only
)

// runPhaseNames are the phases as a checkpoint writes them.
var runPhaseNames = [...]string{runNone: "none", runActive: "started", runFinished: "finished", runFailed: "error"}

// checkLifecycle refuses an event of type typ that the run lifecycle does
// not allow, as the reference client's verifyEvents does: after
// RUN_FINISHED only RUN_STARTED and RUN_ERROR may come, and after RUN_ERROR
// only RUN_STARTED, until a RUN_STARTED begins the next run. Before the
// first RUN_STARTED every event is taken (a bare stream).
func (t *txn) checkLifecycle(typ string) error {
	var ended, allowed string
	switch t.next.run {
	case runFinished:
		if typ == "RUN_STARTED" || typ == "RUN_ERROR" {
			return nil
		}
		ended, allowed = "RUN_FINISHED", "RUN_STARTED (a new run) or RUN_ERROR"
	case runFailed:
		if typ == "RUN_STARTED" {
			return nil
		}
		ended, allowed = "RUN_ERROR", "RUN_STARTED (a new run)"
	default:
		return nil
	}
	return fmt.Errorf("%w: run %s ended with %s; only %s may follow it",
		ErrMalformedEvent, jsonv.Quote(t.next.runID), ended, allowed)
}

// runStarted starts a run (AG-UI RUN_STARTED): it records the thread and
// run ids and applies the event's optional "input" as [Consumer.StartRun]
// does. A RUN_STARTED while a run is active ends that run and starts this
// one. Every construct closes. A protocolVersion of a newer major version
// than this package's, or outside the grammar MAJOR.MINOR, is noted.
//
// A Consumer holds one thread, whose next run's input carries its state
// and messages back (spec, Cross-run behaviour): a RUN_STARTED naming
// another thread than the one the Consumer holds (that of an earlier run,
// or of the input StartRun or RunAgent sent), or than its own input's, is
// fatal, so that no producer moves the thread elsewhere.
func (t *txn) runStarted(ev *jsonv.Node) error {
	f := eventFields(ev)
	thread, run := f.str("threadId"), f.str("runId")
	f.optStr("parentRunId")
	version, declared := f.optStr("protocolVersion")
	input := f.opt("input", jsonv.Object)
	if f.err != nil {
		return f.err
	}
	var in RunAgentInput
	if input != nil {
		var err error
		if in, err = readRunInput(input); err != nil {
			return err
		}
	}
	if err := t.checkThread(thread, in.ThreadID); err != nil {
		return err
	}
	if declared && !speaks(version) {
		t.note("the producer declares protocol version %s; this package speaks %s, and reads what it knows of a newer major version",
			jsonv.Quote(version), ProtocolVersion)
	}
	if input != nil {
		t.runInput(in)
	}
	t.scope().threadID, t.scope().runID, t.scope().run = thread, run, runActive
	t.scope().thinking, t.scope().calls = thinkingIDs{}, keyedSet[runCall]{}
	t.closeConstructs()
	t.clearScopes()
	t.scope().ends = nil
	return nil
}

// checkThread fails with ErrMalformedEvent when a RUN_STARTED of thread
// (whose input names the thread input, "" when it names none) would move
// the Consumer to another thread than the one it holds, if it holds one.
func (t *txn) checkThread(thread, input string) error {
	if input != "" && input != thread {
		return fmt.Errorf("%w: it starts a run of thread %s, but its input is of thread %s",
			ErrMalformedEvent, jsonv.Quote(thread), jsonv.Quote(input))
	}
	if held := t.next.threadID; held != "" && thread != held {
		return fmt.Errorf("%w: it starts a run of thread %s, but the Consumer holds thread %s (a Consumer holds one thread)",
			ErrMalformedEvent, jsonv.Quote(thread), jsonv.Quote(held))
	}
	return nil
}

// speaks reports whether a producer that declares protocol version v
// speaks a version this package reads: v is MAJOR.MINOR, two decimal
// numbers, and its major version is not newer than [ProtocolVersion]'s. A
// newer minor version adds only what this package keeps verbatim; a value
// outside the grammar is taken for a newer one, as the reference client
// takes it.
func speaks(v string) bool {
	major, minor, ok := strings.Cut(v, ".")
	digits := func(s string) bool {
		return s != "" && strings.Trim(s, "0123456789") == ""
	}
	if !ok || !digits(major) || !digits(minor) {
		return false
	}
	major = strings.TrimLeft(major, "0")
	ours, _, _ := strings.Cut(ProtocolVersion, ".")
	return len(major) < len(ours) || len(major) == len(ours) && major <= ours
}

// runInput applies a run's input. Its state, when present, becomes the
// state and the baseline of the run's deltas, and ends divergence (spec,
// STATE_DELTA: "at the start of a run, the input's state"). Its messages
// that are not held are appended in order: by id, the first of two with one
// id winning; a message without an id is held when as many held messages
// without an id have its JSON text as the input has before it, so that an
// input built by NextInput adds nothing. Its thread and run ids, when not
// empty, are recorded.
func (t *txn) runInput(in RunAgentInput) {
	if in.State.n != nil {
		t.next.state, t.next.diverged = in.State.n, false
	}
	if in.ThreadID != "" {
		t.scope().threadID = in.ThreadID
	}
	if in.RunID != "" {
		t.scope().runID = in.RunID
	}
	var unnamed map[string]int // held messages without an id, by JSON text, not yet matched
	for _, m := range in.Messages {
		if m.id != "" {
			if _, _, held := t.message(m.id); !held {
				t.appendMessage(m)
			}
			continue
		}
		if unnamed == nil {
			unnamed = make(map[string]int)
			for h := range t.next.messages.All() {
				if h.id == "" {
					unnamed[string(jsonv.Marshal(h.v))]++
				}
			}
		}
		if text := string(jsonv.Marshal(m.v)); unnamed[text] > 0 {
			unnamed[text]--
			continue
		}
		t.appendMessage(m)
	}
}

// runFinished ends a run (AG-UI RUN_FINISHED). Its threadId and runId
// must be those of the run's RUN_STARTED, when one started it, and its
// usage well formed (readUsage). An outcome of type "interrupt" makes its
// interrupts the pending ones; any other outcome, or none, leaves none
// pending. Every construct closes.
func (t *txn) runFinished(ev *jsonv.Node) error {
	f := eventFields(ev)
	thread, run := f.str("threadId"), f.str("runId")
	outcome := f.opt("outcome", jsonv.Object)
	if f.err != nil {
		return f.err
	}
	if _, err := readUsage(ev); err != nil {
		return err
	}
	if t.next.run == runActive && (thread != t.next.threadID || run != t.next.runID) {
		return fmt.Errorf("%w: it ends run %s of thread %s, but the run that RUN_STARTED started is %s of thread %s",
			ErrMalformedEvent, jsonv.Quote(run), jsonv.Quote(thread), jsonv.Quote(t.next.runID), jsonv.Quote(t.next.threadID))
	}
	t.scope().run = runFinished
	t.closeConstructs()
	t.clearScopes()
	t.scope().ends = []*jsonv.Node{ev}
	if outcome == nil {
		t.scope().interrupts = nil
		return nil
	}
	o := eventFields(outcome)
	if typ := o.str("type"); typ != "interrupt" {
		t.scope().interrupts = nil
		if o.err == nil && typ == "success" {
			_, o.err = pendingIDs(outcome)
		}
		return o.err
	}
	list := o.of("interrupts", jsonv.Array)
	if o.err != nil {
		return fmt.Errorf("%w (in \"outcome\")", o.err)
	}
	pending := make([]*jsonv.Node, list.Len())
	for i := range list.Len() {
		in := list.Elem(i)
		if in.Kind() != jsonv.Object {
			return fmt.Errorf("%w: outcome: interrupt %d is %s, not an object", ErrMalformedEvent, i, in.Kind().Phrase())
		}
		if _, ok := interruptID(in); !ok { // AG-UI Interrupt: id is required, and resume entries name it
			return fmt.Errorf("%w: outcome: interrupt %d has no \"id\" (a non-empty string)", ErrMalformedEvent, i)
		}
		if sub := in.Get("subagentRunId"); sub != nil && sub.Kind() == jsonv.Null {
			in = jsonv.WithoutMember(in, "subagentRunId")
		}
		pending[i] = in
	}
	t.scope().interrupts = pending
	return nil
}

// runError ends a run that failed (AG-UI RUN_ERROR), whose usage must be
// well formed (readUsage). Every construct closes; the pending interrupts
// stay.
func (t *txn) runError(ev *jsonv.Node) error {
	f := eventFields(ev)
	f.str("message")
	if f.err != nil {
		return f.err
	}
	if _, err := readUsage(ev); err != nil {
		return err
	}
	if t.next.run == runFinished {
		t.scope().ends = append(slices.Clip(t.scope().ends), ev)
	} else {
		t.scope().ends = []*jsonv.Node{ev}
	}
	t.scope().run = runFailed
	t.closeConstructs()
	t.clearScopes()
	return nil
}

// Running reports whether a run is in progress on the thread: a
// RUN_STARTED has come, and no RUN_FINISHED or RUN_ERROR after it. A run
// input given to [Consumer.StartRun] does not start one.
func (c *Consumer) Running() bool { return c.cur.Load().run == runActive }

// Interrupts returns the interrupts pending on the thread: those of the
// last RUN_FINISHED whose outcome has type "interrupt". Each is an AG-UI
// 1.0 Interrupt object, kept verbatim but for a "subagentRunId": null
// member, which is removed. Any other RUN_FINISHED clears them; RUN_ERROR
// leaves them. It returns nil when none are pending. The slice is new on
// each call; the values are immutable views.
func (c *Consumer) Interrupts() []Value {
	in := c.cur.Load().interrupts
	if len(in) == 0 {
		return nil
	}
	out := make([]Value, len(in))
	for i, n := range in {
		out[i] = valueOf(n)
	}
	return out
}
