// Checkpoint and Restore: the whole Consumer as JSON, and back.

package aguistate

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/aguistate/aguistate/internal/jsonv"
)

// checkpointVersion names the checkpoint format; Restore refuses others.
const checkpointVersion = "aguistate-checkpoint/2"

// Checkpoint returns, as one JSON object, everything that decides what the
// Consumer does with the next event. That is the state, the messages, the
// diverged flag, the pending interrupts, the thread and run ids, where the
// run lifecycle stands, the open constructs (text messages, reasoning
// messages and tool calls that take content), the open chunk streams and
// the count of events. Values are written verbatim.
// Subscribers and Options are not part of it. [Restore] reads it back. Do
// not depend on its layout; its "format" member names the version. It
// takes no lock, so a subscriber may checkpoint after each change.
func (c *Consumer) Checkpoint() []byte { return c.cur.Load().checkpoint() }

// checkpoint returns the view as Checkpoint writes it.
func (v *view) checkpoint() []byte {
	chunks := make([]*jsonv.Node, len(v.chunks))
	for i, s := range v.chunks {
		chunks[i] = jsonv.NewObjectOf([]string{"lane", "kind", "id", "role", "name", "parent"},
			jsonv.NewString(s.lane), jsonv.NewString(s.kind.chunkType()), jsonv.NewString(s.id),
			optString(s.role, s.hasRole), optString(s.name, s.hasName), optString(s.parent, s.hasParent))
	}
	open := make([]*jsonv.Node, 0, v.open.Len())
	for c := range v.open.all() {
		var chunked *jsonv.Node
		if c.chunked {
			chunked = jsonv.NewBool(true)
		}
		open = append(open, jsonv.NewObjectOf([]string{"kind", "id", "chunked"}, jsonv.NewString(c.kind.String()), jsonv.NewString(c.id), chunked))
	}
	interrupts := v.interrupts
	if interrupts == nil {
		interrupts = []*jsonv.Node{}
	}
	cp := jsonv.NewObject(
		[]string{"format", "events", "threadId", "runId", "run", "diverged", "state", "messages", "interrupts", "open", "chunks"},
		[]*jsonv.Node{jsonv.NewString(checkpointVersion), jsonv.NewNumber(strconv.Itoa(v.events)),
			jsonv.NewString(v.threadID), jsonv.NewString(v.runID), jsonv.NewString(runPhaseNames[v.run]), jsonv.NewBool(v.diverged), v.state,
			encodeMessages(v.messages.Slice()), jsonv.NewArray(interrupts), jsonv.NewArray(open), jsonv.NewArray(chunks)})
	return jsonv.Marshal(v.checkpointScopes(cp))
}

// checkpointScopes adds to a checkpoint the members that are written only
// when they hold something: the run's steps, reasoning spans and subagents,
// the events that ended it, the stream's event id, the tool calls the last
// run started, and the ids that a pre-1.0 producer's THINKING_* events
// continue.
func (v *view) checkpointScopes(cp *jsonv.Node) *jsonv.Node {
	if v.steps.Len() > 0 {
		steps := make([]*jsonv.Node, 0, v.steps.Len())
		for s := range v.steps.all() {
			steps = append(steps, jsonv.NewObjectOf([]string{"name", "subagentRunId"}, jsonv.NewString(s.name), s.sub))
		}
		cp = jsonv.WithMember(cp, "steps", jsonv.NewArray(steps))
	}
	if v.spans.Len() > 0 {
		spans := make([]*jsonv.Node, 0, v.spans.Len())
		for s := range v.spans.all() {
			spans = append(spans, jsonv.NewObjectOf([]string{"messageId", "subagentRunId"}, jsonv.NewString(s.id), s.sub))
		}
		cp = jsonv.WithMember(cp, "spans", jsonv.NewArray(spans))
	}
	if v.subagents.Len() > 0 {
		subs := make([]*jsonv.Node, 0, v.subagents.Len())
		for s := range v.subagents.all() {
			subs = append(subs, jsonv.NewObjectOf([]string{"event", "done"}, s.start, jsonv.NewBool(s.done)))
		}
		cp = jsonv.WithMember(cp, "subagents", jsonv.NewArray(subs))
	}
	if len(v.ends) > 0 {
		cp = jsonv.WithMember(cp, "ends", jsonv.NewArray(v.ends))
	}
	if v.eventID != "" {
		cp = jsonv.WithMember(cp, "eventId", jsonv.NewString(v.eventID))
	}
	if v.calls.Len() > 0 {
		calls := make([]*jsonv.Node, 0, v.calls.Len())
		for c := range v.calls.all() {
			var answered *jsonv.Node
			if c.answered {
				answered = jsonv.NewBool(true)
			}
			calls = append(calls, jsonv.NewObjectOf([]string{"id", "answered"}, jsonv.NewString(c.id), answered))
		}
		cp = jsonv.WithMember(cp, "calls", jsonv.NewArray(calls))
	}
	if v.thinking != (thinkingIDs{}) {
		cp = jsonv.WithMember(cp, "thinking", jsonv.NewObjectOf([]string{"messageId", "spanId"},
			optString(v.thinking.message, v.thinking.message != ""), optString(v.thinking.span, v.thinking.span != "")))
	}
	return cp
}

// Restore returns a Consumer that holds what checkpoint says, configured by
// opts (nil means the defaults). Given the rest of a stream, it ends where
// the Consumer that made the checkpoint would have ended. The limits and
// ValidateState apply as they do to a run input. It refuses what no stream
// could have made: an open construct that is not held where its events may
// write, a chunk stream that no chunk could have opened, either of them
// after the run ended. It returns an error wrapping [ErrLimit] or
// [ErrStateRejected], or one saying that the data is not a checkpoint.
func Restore(checkpoint []byte, opts *Options) (*Consumer, error) {
	c := New(opts)
	if err := c.restore(checkpoint); err != nil {
		return nil, apiError(err)
	}
	return c, nil
}

// restore loads a checkpoint into the new Consumer c.
func (c *Consumer) restore(checkpoint []byte) error {
	n, err := jsonv.Parse(checkpoint, c.opts.MaxDepth+envelopeDepth)
	switch {
	case errors.Is(err, jsonv.ErrTooDeep):
		return fmt.Errorf("%w: %w", ErrLimit, err)
	case err != nil:
		return fmt.Errorf("%w: %w", errBadCheckpoint, err)
	case n.Kind() != jsonv.Object:
		return fmt.Errorf("%w: %s, not an object", errBadCheckpoint, n.Kind().Phrase())
	}
	f := &fields{n: n, kind: errBadCheckpoint}
	if format := f.str("format"); f.err == nil && format != checkpointVersion {
		return fmt.Errorf("%w: format %s, want %q", errBadCheckpoint, jsonv.Quote(format), checkpointVersion)
	}
	eventsText := f.of("events", jsonv.Number).Text()
	threadID, runID, phaseName := f.str("threadId"), f.str("runId"), f.str("run")
	diverged := f.of("diverged", jsonv.False, jsonv.True).Kind() == jsonv.True
	state := f.any("state")
	msgs, interrupts := f.of("messages", jsonv.Array), f.of("interrupts", jsonv.Array)
	open, chunks := f.of("open", jsonv.Array), f.of("chunks", jsonv.Array)
	if f.err != nil {
		return f.err
	}
	phase := slices.Index(runPhaseNames[:], phaseName)
	if phase < 0 {
		return fmt.Errorf("%w: \"run\" is %s, not one of %s", errBadCheckpoint, jsonv.Quote(phaseName), strings.Join(runPhaseNames[:], ", "))
	}
	events, err := strconv.Atoi(eventsText)
	if err != nil || events < 0 || events > 1<<53 || strconv.Itoa(events) != eventsText {
		return fmt.Errorf("%w: \"events\" is not a count", errBadCheckpoint)
	}
	ms, err := decodeMessages(msgs, true)
	if err != nil {
		return fmt.Errorf("%w: %w", errBadCheckpoint, err)
	}
	ids := make(map[string]bool, len(ms))
	for _, m := range ms {
		if m.id != "" && ids[m.id] {
			return fmt.Errorf("%w: two messages have the id %s", errBadCheckpoint, jsonv.Quote(m.id))
		}
		ids[m.id] = true
	}

	defer c.done()
	t := c.begin(c.cur.Load())
	t.next.state, t.next.diverged = state, diverged
	t.scope().threadID, t.scope().runID, t.scope().run = threadID, runID, runPhase(phase)
	t.setMessages(ms)
	for i, in := range interrupts.All() {
		if in.Kind() != jsonv.Object {
			return fmt.Errorf("%w: interrupt %d is %s, not an object", errBadCheckpoint, i, in.Kind().Phrase())
		}
		if _, ok := interruptID(in); !ok {
			return fmt.Errorf("%w: interrupt %d has no \"id\"", errBadCheckpoint, i)
		}
		t.scope().interrupts = append(t.scope().interrupts, in)
	}
	if err := t.restoreOpen(open); err != nil {
		return err
	}
	if err := t.restoreChunks(chunks); err != nil {
		return err
	}
	if err := t.restoreScopes(n); err != nil {
		return err
	}
	if ended := t.next.run == runFinished || t.next.run == runFailed; ended && t.next.open.Len()+len(t.next.chunks) > 0 {
		return fmt.Errorf("%w: an open construct or chunk stream after the run ended", errBadCheckpoint)
	}
	if err := c.check(t); err != nil {
		return err
	}
	t.next.events = events
	c.publish(t)
	return nil
}

// restoreOpen reads the open constructs of a checkpoint into t, whose
// messages are restored: each is held where its events may write, once.
func (t *txn) restoreOpen(list *jsonv.Node) error {
	for i, n := range list.All() {
		if n.Kind() != jsonv.Object {
			return fmt.Errorf("%w: open construct %d is %s, not an object", errBadCheckpoint, i, n.Kind().Phrase())
		}
		f := &fields{n: n, kind: errBadCheckpoint}
		kind, id, chunked := f.str("kind"), f.id("id"), f.optBool("chunked", false)
		named := slices.Index(constructNames[:], kind)
		k := constructKind(max(named, 0))
		switch {
		case f.err != nil:
		case named <= 0:
			f.fail("unknown kind %s", jsonv.Quote(kind))
		case t.isOpen(k, id):
			f.fail("%s %s is open twice", k, jsonv.Quote(id))
		default:
			if err := t.reachable(construct{kind: k, id: id}); err != nil {
				f.fail("%s %s is open, but %v", k, jsonv.Quote(id), err)
			}
		}
		if f.err != nil {
			return fmt.Errorf("%w (in open construct %d)", f.err, i)
		}
		t.openConstruct(k, id)
		if chunked {
			t.chunkConstruct(k, id)
		}
	}
	return nil
}

// restoreChunks reads the open chunk streams of a checkpoint into t: at
// most one a lane and one a construct, each as a chunk could open it. It
// refuses more than MaxChunkLanes before it compares them, so that it costs
// O(MaxChunkLanes) for each.
func (t *txn) restoreChunks(list *jsonv.Node) error {
	if n := list.Len(); n > t.opts.MaxChunkLanes {
		return fmt.Errorf("%w: %d lanes would have an open chunk stream, more than MaxChunkLanes (%d)", ErrLimit, n, t.opts.MaxChunkLanes)
	}
	for i, n := range list.All() {
		s, err := restoreChunk(n)
		if err == nil {
			for _, o := range t.next.chunks {
				if o.lane == s.lane {
					err = fmt.Errorf("%w: a second stream in lane %s", errBadCheckpoint, jsonv.Quote(s.lane))
				} else if o.kind == s.kind && o.id == s.id {
					err = fmt.Errorf("%w: a second stream of %s %s", errBadCheckpoint, s.kind, jsonv.Quote(s.id))
				}
			}
		}
		if err != nil {
			return fmt.Errorf("%w (in chunk stream %d)", err, i)
		}
		t.next.chunks = append(t.next.chunks, s)
	}
	return nil
}

// restoreChunk reads one chunk stream as Checkpoint writes it. A text
// stream has a role of a text message and no parent, a reasoning stream
// none of role, name and parent, a tool call stream a name and no role:
// what opening a stream of its kind makes.
func restoreChunk(n *jsonv.Node) (chunkStream, error) {
	var s chunkStream
	if n.Kind() != jsonv.Object {
		return s, fmt.Errorf("%w: %s, not an object", errBadCheckpoint, n.Kind().Phrase())
	}
	f := &fields{n: n, kind: errBadCheckpoint}
	s.lane, s.id = f.str("lane"), f.id("id")
	kind := f.str("kind")
	s.kind = chunkKindOf(kind)
	s.role, s.hasRole = f.optStr("role")
	s.name, s.hasName = f.optStr("name")
	s.parent, s.hasParent = f.optStr("parent")
	switch {
	case f.err != nil:
	case s.kind == 0:
		f.fail("unknown kind %s", jsonv.Quote(kind))
	case s.kind == textConstruct && (!s.hasRole || !textWriter.writes(s.role) || s.hasParent):
		f.fail("a text message stream has a role of a text message, and no parent")
	case s.kind == reasoningConstruct && (s.hasRole || s.hasName || s.hasParent):
		f.fail("a reasoning message stream has no role, name or parent")
	case s.kind == toolConstruct && (!s.hasName || s.hasRole):
		f.fail("a tool call stream has a name and no role")
	}
	return s, f.err
}

// restoreScopes reads into t the optional members of checkpoint n that
// checkpointScopes writes. Steps, spans and subagents are open only while
// a run may be (none after it ended), each once; the events that ended the
// run are a RUN_FINISHED, a RUN_ERROR, or both in that order, as its phase
// says.
func (t *txn) restoreScopes(n *jsonv.Node) error {
	f := &fields{n: n, kind: errBadCheckpoint}
	list := func(name string) *jsonv.Node {
		if l := f.opt(name, jsonv.Array); l != nil {
			return l
		}
		return jsonv.NewArray(nil)
	}
	steps, spans, subs, ends, calls := list("steps"), list("spans"), list("subagents"), list("ends"), list("calls")
	t.next.eventID, _ = f.optStr("eventId")
	if thinking := f.opt("thinking", jsonv.Object); thinking != nil {
		g := &fields{n: thinking, kind: errBadCheckpoint}
		t.scope().thinking.message, _ = g.optID("messageId")
		t.scope().thinking.span, _ = g.optID("spanId")
		if g.err != nil {
			return fmt.Errorf("%w (in \"thinking\")", g.err)
		}
	}
	if f.err != nil {
		return f.err
	}
	ended := t.next.run == runFinished || t.next.run == runFailed
	if ended && steps.Len()+spans.Len()+subs.Len() > 0 {
		return fmt.Errorf("%w: an open step, reasoning span or subagent after the run ended", errBadCheckpoint)
	}
	each := func(list *jsonv.Node, what string, read func(f *fields) error) error {
		for i, e := range list.All() {
			if e.Kind() != jsonv.Object {
				return fmt.Errorf("%w: %s %d is %s, not an object", errBadCheckpoint, what, i, e.Kind().Phrase())
			}
			f := &fields{n: e, kind: errBadCheckpoint}
			err := read(f)
			if f.err != nil {
				err = f.err
			}
			if err != nil {
				return fmt.Errorf("%w (in %s %d)", err, what, i)
			}
		}
		return nil
	}
	err := each(steps, "step", func(f *fields) error {
		name, sub := f.str("name"), f.opt("subagentRunId", jsonv.String)
		if !t.scope().steps.add(t.ed().Owner(), openStep{name, sub}) && f.err == nil {
			f.fail("step %s is open twice", jsonv.Quote(name))
		}
		return nil
	})
	if err == nil {
		err = each(spans, "reasoning span", func(f *fields) error {
			id, sub := f.id("messageId"), f.opt("subagentRunId", jsonv.String)
			if !t.scope().spans.add(t.ed().Owner(), openSpan{id, sub}) && f.err == nil {
				f.fail("reasoning span %s is open twice", jsonv.Quote(id))
			}
			return nil
		})
	}
	if err == nil {
		err = each(subs, "subagent", func(f *fields) error {
			ev, done := f.of("event", jsonv.Object), f.optBool("done", false)
			if f.err != nil {
				return nil
			}
			id := &fields{n: ev, kind: errBadCheckpoint}
			if typ := id.str("type"); id.err == nil && typ != "SUBAGENT_STARTED" {
				id.fail("\"type\" is %s, not \"SUBAGENT_STARTED\"", jsonv.Quote(typ))
			}
			sid := id.str("subagentRunId")
			if id.err != nil {
				return id.err
			}
			if !t.scope().subagents.add(t.ed().Owner(), subagent{id: sid, start: ev, done: done}) {
				return fmt.Errorf("%w: subagent %s started twice", errBadCheckpoint, jsonv.Quote(sid))
			}
			return nil
		})
	}
	if err == nil {
		err = each(calls, "tool call", func(f *fields) error {
			id, answered := f.id("id"), f.optBool("answered", false)
			if f.err == nil && t.next.calls.has(id) {
				f.fail("tool call %s is started twice", jsonv.Quote(id))
			}
			t.scope().calls.put(t.ed().Owner(), runCall{id: id, answered: answered})
			return nil
		})
	}
	if err != nil {
		return err
	}
	var types []string
	err = each(ends, "end of the run", func(f *fields) error {
		typ := f.str("type")
		switch typ {
		case "RUN_FINISHED":
			f.str("threadId")
			f.str("runId")
		case "RUN_ERROR":
			f.str("message")
		}
		types = append(types, typ)
		t.scope().ends = append(t.scope().ends, f.n)
		return nil
	})
	if err != nil {
		return err
	}
	allowed := map[runPhase][][]string{
		runFinished: {nil, {"RUN_FINISHED"}},
		runFailed:   {nil, {"RUN_ERROR"}, {"RUN_FINISHED", "RUN_ERROR"}},
	}[t.next.run]
	if !slices.ContainsFunc(append(allowed, nil), func(w []string) bool { return slices.Equal(w, types) }) {
		return fmt.Errorf("%w: \"ends\" holds %s, which cannot end a run in phase %s",
			errBadCheckpoint, strings.Join(types, ", "), jsonv.Quote(runPhaseNames[t.next.run]))
	}
	return nil
}
