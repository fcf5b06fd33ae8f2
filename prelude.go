// The prelude: events that bring a viewer who has seen nothing of a thread
// to where a Consumer stands, so that it can follow the thread's next
// events.

package aguistate

import (
	"iter"
	"slices"

	"github.com/aguistate/aguistate/internal/jsonv"
)

// Prelude returns, as JSON texts, the events that bring a viewer who has
// seen nothing of the thread to where the Consumer stands, so that the
// thread's next events apply to the viewer as they apply to the Consumer.
// A relay sends them to a viewer who joins mid-thread, then the events
// that follow. The viewer may be this package or the reference client,
// whose event verification they pass. In order:
//
//   - RUN_STARTED with the thread and run ids, unless no run has started;
//   - STATE_SNAPSHOT with the state;
//   - MESSAGES_SNAPSHOT with the messages, where an open text or reasoning
//     message has no text yet, and an assistant message holding an open
//     tool call holds only the calls before it;
//   - the run's subagents (SUBAGENT_STARTED as it arrived, and
//     SUBAGENT_FINISHED for those that have ended), open steps
//     (STEP_STARTED) and open reasoning spans (REASONING_START);
//   - for each open text or reasoning message, its START and one CONTENT
//     with its text so far; for each open tool call, its START and one ARGS
//     with its arguments so far, and the calls after it in its message
//     again, each with START, ARGS and END; a construct that a chunk stream
//     opened is sent as one chunk instead, since only a chunk may go on
//     with it, followed by an empty STATE_DELTA in its lane when its stream
//     has closed; the chunk streams that are open are sent last, one chunk
//     each, so that a chunk without an id goes on with them (a stream whose
//     construct is not open, such as one whose start was skipped, is sent
//     too: the viewer skips its chunk as the Consumer did, with a warning);
//   - the RUN_FINISHED and RUN_ERROR that ended the run, if it has ended.
//
// It returns nil for a Consumer that holds nothing (no event, run, state
// or message). Events cannot carry what the prelude leaves out: a message
// without an id (a run input may have one; a MESSAGES_SNAPSHOT cannot),
// the diverged flag (the snapshot ends divergence), interrupts left
// pending by an earlier run than the last one, the ids of a run that
// StartRun started and no event has reached, the reasoning message and
// span that a pre-1.0 producer's THINKING_* events go on with, which they
// name by no id, and which tool calls the run has started and answered, so
// that a viewer derives the pending ones ([Consumer.PendingToolCalls]) from
// those it sees start only. A chunk stream that does not
// stream the message its id names is not reproduced exactly: where an END
// from another lane ended the message and it has no text, the viewer holds
// it open; where the stream's role is not the message's and a START opened
// the message after the stream, the viewer takes the message as chunked.
// The cost is that of writing the state and messages as JSON.
func (c *Consumer) Prelude() [][]byte {
	var out [][]byte
	c.cur.Load().prelude(func(ev []byte) bool {
		out = append(out, ev)
		return true
	})
	return out
}

// PreludeSeq returns the events of [Consumer.Prelude] as a sequence that
// makes each event when it reaches it, so that a relay sends the first
// (RUN_STARTED, or STATE_SNAPSHOT when no run has started) before the state
// and messages are written, and holds one event at a time rather than the
// whole prelude. The sequence reads the Consumer as it was when PreludeSeq
// was called, whatever events the Consumer applies meanwhile. It yields
// nothing for a Consumer that holds nothing, and otherwise at least two
// events: the first is never the last. Each event is a new slice, which
// the caller may keep. The sequence may be iterated more than once.
func (c *Consumer) PreludeSeq() iter.Seq[[]byte] {
	v := c.cur.Load()
	return func(yield func([]byte) bool) { v.prelude(yield) }
}

// prelude yields the events of [Consumer.Prelude] for view v, each as it
// is made, until yield returns false.
func (v *view) prelude(yield func([]byte) bool) {
	if v.events == 0 && v.run == runNone && v.messages.Len() == 0 && isEmptyObject(v.state) {
		return
	}
	next := *v
	p := &preluder{v: v, t: &txn{old: v, next: &next}, streamed: make(map[construct]sofar), yield: yield}
	if v.run != runNone {
		thread, run := v.threadID, v.runID
		if len(v.ends) > 0 && str(v.ends[0], "type") == "RUN_FINISHED" { // its ids must be the run's
			thread, run = str(v.ends[0], "threadId"), str(v.ends[0], "runId")
		}
		p.add("RUN_STARTED", []string{"threadId", "runId"}, jsonv.NewString(thread), jsonv.NewString(run))
	}
	p.add("STATE_SNAPSHOT", []string{"snapshot"}, v.state)
	if p.stopped {
		return
	}
	p.messages()
	for s := range v.subagents.all() {
		p.emit(jsonv.Marshal(s.start))
	}
	for s := range v.subagents.all() {
		if s.done {
			p.add("SUBAGENT_FINISHED", []string{"subagentRunId"}, jsonv.NewString(s.id))
		}
	}
	for s := range v.steps.all() {
		if p.stopped {
			return
		}
		p.add("STEP_STARTED", []string{"stepName", "subagentRunId"}, jsonv.NewString(s.name), s.sub)
	}
	for s := range v.spans.all() {
		p.add("REASONING_START", []string{"messageId", "subagentRunId"}, jsonv.NewString(s.id), s.sub)
	}
	for _, ev := range p.reopen {
		p.emit(ev)
	}
	var after [][]byte
	for _, s := range v.chunks {
		so := p.streamed[construct{kind: s.kind, id: s.id}]
		if so.owner != "" {
			s.parent, s.hasParent = so.owner, true
		}
		p.emit(chunkEvent(s, so))
		after = append(after, so.after...)
	}
	for _, ev := range after {
		p.emit(ev)
	}
	p.ends()
}

// preluder builds a prelude: it yields the events as it makes them, and
// collects those that reopen the open constructs, which go after the
// scopes, and the text or arguments so far of the constructs that open
// chunk streams go on with, which the chunks that reopen those streams
// carry last.
type preluder struct {
	v        *view
	t        *txn // reads v's messages
	yield    func([]byte) bool
	stopped  bool // yield returned false: nothing more is yielded
	reopen   [][]byte
	streamed map[construct]sofar
}

// emit yields ev, unless the caller has stopped the sequence.
func (p *preluder) emit(ev []byte) {
	if !p.stopped && !p.yield(ev) {
		p.stopped = true
	}
}

// sofar is what an open construct holds so far, for the chunk that
// reopens it: its text or arguments (nil for none), a tool call's
// metadata and the message that holds it, and the events that follow the
// chunk (a tool call's encrypted value), which close no chunk stream.
type sofar struct {
	delta, meta *jsonv.Node
	owner       string
	after       [][]byte
}

// add appends an event of type typ with the members names[i]: vals[i] that
// are not nil.
func (p *preluder) add(typ string, names []string, vals ...*jsonv.Node) {
	if !p.stopped {
		p.emit(event(typ, names, vals...))
	}
}

// event returns the JSON text of an event of type typ with the members
// names[i]: vals[i] that are not nil.
func event(typ string, names []string, vals ...*jsonv.Node) []byte {
	size := len(typ) + 12
	for i, v := range vals {
		if v != nil {
			size += len(names[i]) + 4 + v.Size()
		}
	}
	b := jsonv.AppendString(append(make([]byte, 0, size), `{"type":`...), typ)
	for i, v := range vals {
		if v != nil {
			b = jsonv.Append(append(jsonv.AppendString(append(b, ','), names[i]), ':'), v)
		}
	}
	return append(b, '}')
}

// messages adds the MESSAGES_SNAPSHOT, and collects the events that reopen
// the open constructs its messages leave out.
func (p *preluder) messages() {
	v := p.v
	claimed := make(map[string]bool) // open tool calls found, each in the first assistant message that holds it
	snap := make([]*jsonv.Node, 0, v.messages.Len())
	for m := range v.messages.All() {
		if m.id == "" {
			continue // a snapshot cannot restate it
		}
		mv := m.v
		for _, k := range []constructKind{textConstruct, reasoningConstruct} {
			if c, ok := v.openConstruct(k, m.id); ok && k.writer().writes(m.role) {
				mv = p.reopenText(c, m, mv)
			}
		}
		if m.role == roleAssistant {
			mv = p.reopenToolCalls(m, mv, claimed)
		}
		snap = append(snap, mv)
	}
	p.add("MESSAGES_SNAPSHOT", []string{"messages"}, jsonv.NewArray(snap))
}

// openConstruct returns the open construct of kind k with id.
func (v *view) openConstruct(k constructKind, id string) (construct, bool) {
	return v.open.get(constructKey(k, id))
}

// stream returns the open chunk stream of the construct of kind k with id.
func (v *view) stream(k constructKind, id string) (chunkStream, bool) {
	i := slices.IndexFunc(v.chunks, func(s chunkStream) bool { return s.kind == k && s.id == id })
	if i < 0 {
		return chunkStream{}, false
	}
	return v.chunks[i], true
}

// reopenText collects the events that reopen the open text or reasoning
// message m (construct c), and returns its value mv without its text.
func (p *preluder) reopenText(c construct, m Message, mv *jsonv.Node) *jsonv.Node {
	text := ""
	if content := mv.Get("content"); content != nil && content.Kind() == jsonv.String {
		text = content.Text()
		mv = jsonv.WithMember(mv, "content", jsonv.NewString(""))
	}
	sub := mv.Get("subagentRunId")
	if sub != nil && sub.Kind() != jsonv.String {
		sub = nil
	}
	delta := optString(text, text != "")
	if s, ok := p.v.stream(c.kind, c.id); ok && (c.kind != textConstruct || s.role == m.role) {
		p.streamed[construct{kind: c.kind, id: c.id}] = sofar{delta: delta}
		return mv
	} // a stream of another role went on with it: it opens as it did, and the stream goes on with it
	if c.chunked {
		s := chunkStream{kind: c.kind, id: c.id}
		if c.kind == textConstruct {
			s.role, s.hasRole = m.role, true
			if name := mv.Get("name"); name != nil && name.Kind() == jsonv.String {
				s.name, s.hasName = name.Text(), true
			}
		}
		if sub != nil {
			s.lane = sub.Text()
		}
		p.reopenChunked(s, sofar{delta: delta})
		return mv
	}
	typ, role := "TEXT_MESSAGE", m.role
	if c.kind == reasoningConstruct {
		typ, role = "REASONING_MESSAGE", roleReasoning
	}
	p.reopen = append(p.reopen, event(typ+"_START", []string{"messageId", "role", "subagentRunId"},
		jsonv.NewString(c.id), jsonv.NewString(role), sub))
	if delta != nil {
		p.reopen = append(p.reopen, event(typ+"_CONTENT", []string{"messageId", "delta"}, jsonv.NewString(c.id), delta))
	}
	return mv
}

// reopenToolCalls collects the events that reopen the open tool calls of
// assistant message m and make the calls after the first of them again,
// and returns m's value mv with only the calls before it. claimed holds
// the open calls found so far, each in the first message that holds it.
func (p *preluder) reopenToolCalls(m Message, mv *jsonv.Node, claimed map[string]bool) *jsonv.Node {
	calls := mv.Get("toolCalls")
	if calls == nil || calls.Kind() != jsonv.Array {
		return mv
	}
	first, open := -1, make(map[int]bool)
	for i, call := range calls.All() {
		if id := str(call, "id"); id != "" && !claimed[id] && p.v.isOpenToolCall(id) {
			claimed[id], open[i] = true, true
			if first < 0 {
				first = i
			}
		}
	}
	if first < 0 {
		return mv
	}
	kept := make([]*jsonv.Node, 0, first)
	for i, call := range calls.All() {
		if i < first {
			kept = append(kept, call)
		} else {
			p.remakeToolCall(m, mv, call, open[i])
		}
	}
	return jsonv.WithMember(mv, "toolCalls", jsonv.NewArray(kept))
}

// isOpenToolCall reports whether the tool call id is open.
func (v *view) isOpenToolCall(id string) bool {
	_, ok := v.openConstruct(toolConstruct, id)
	return ok
}

// remakeToolCall collects the events that make call again in assistant
// message m (value mv): an open call is left open, and a call that a chunk
// stream opened is sent as a chunk.
func (p *preluder) remakeToolCall(m Message, mv, call *jsonv.Node, open bool) {
	id, name, args := str(call, "id"), "", ""
	if fn := call.Get("function"); fn != nil {
		name, args = str(fn, "name"), str(fn, "arguments")
	}
	delta := optString(args, args != "")
	var encrypted [][]byte
	if ev := call.Get("encryptedValue"); ev != nil && ev.Kind() == jsonv.String {
		encrypted = [][]byte{event("REASONING_ENCRYPTED_VALUE", []string{"subtype", "entityId", "encryptedValue"},
			jsonv.NewString("tool-call"), jsonv.NewString(id), ev)}
	}
	so := sofar{delta: delta, meta: call.Get("metadata"), after: encrypted}
	if c, _ := p.v.openConstruct(toolConstruct, id); open && c.chunked {
		s, streamed := p.v.stream(toolConstruct, id)
		switch {
		case streamed && s.name == name && p.toolCallOwner(s.parent, id) == m.id:
			// The chunk names the message it holds the call: the reference
			// client makes a new message for a call without a parent, even
			// where one has its id. No chunk that goes on with the stream
			// can tell.
			so.owner = m.id
			p.streamed[construct{kind: toolConstruct, id: id}] = so
			return
		case !streamed:
			s = chunkStream{kind: toolConstruct, id: id, name: name, hasName: true, parent: m.id, hasParent: true}
			if sub := mv.Get("subagentRunId"); sub != nil && sub.Kind() == jsonv.String {
				s.lane = sub.Text()
			}
			p.reopenChunked(s, so)
			return
		}
		// A stream that names another owner or name went on with the call:
		// the call opens as it started, and the stream goes on with it.
	}
	p.reopen = append(p.reopen, event("TOOL_CALL_START", []string{"toolCallId", "toolCallName", "parentMessageId", "metadata"},
		jsonv.NewString(id), jsonv.NewString(name), jsonv.NewString(m.id), call.Get("metadata")))
	p.reopen = append(p.reopen, encrypted...)
	if delta != nil {
		p.reopen = append(p.reopen, event("TOOL_CALL_ARGS", []string{"toolCallId", "delta"}, jsonv.NewString(id), delta))
	}
	if !open {
		p.reopen = append(p.reopen, event("TOOL_CALL_END", []string{"toolCallId"}, jsonv.NewString(id)))
	}
}

// reopenChunked collects the events that reopen a construct that a chunk
// stream opened, whose stream has closed: a chunk that opens stream s with
// what the construct holds, then an empty STATE_DELTA in its lane that
// closes the stream again and changes nothing else. The reference client
// then holds the construct closed, as it does after the stream closed, and
// this package holds it open, as it does.
func (p *preluder) reopenChunked(s chunkStream, so sofar) {
	p.reopen = append(p.reopen, chunkEvent(s, so))
	p.reopen = append(p.reopen, so.after...)
	p.reopen = append(p.reopen, event("STATE_DELTA", []string{"delta", "subagentRunId"}, jsonv.NewArray(nil), optString(s.lane, s.lane != "")))
}

// toolCallOwner returns the id of the message that a tool call id started
// with parentMessageId parent goes to, as TOOL_CALL_START places it: parent,
// unless it names a held message that is not an assistant's; else id.
func (p *preluder) toolCallOwner(parent, id string) string {
	if parent == "" {
		return id
	}
	if m, _, held := p.t.message(parent); held && m.role != roleAssistant {
		return id
	}
	return parent
}

// chunkEvent returns the chunk that opens stream s with what its
// construct holds so far: what the stream established, repeated, so that
// the chunks that go on with it agree.
func chunkEvent(s chunkStream, so sofar) []byte {
	lane := optString(s.lane, s.lane != "")
	switch s.kind {
	case textConstruct:
		return event(s.kind.chunkType(), []string{"messageId", "role", "name", "subagentRunId", "delta"},
			jsonv.NewString(s.id), optString(s.role, s.hasRole), optString(s.name, s.hasName), lane, so.delta)
	case reasoningConstruct:
		return event(s.kind.chunkType(), []string{"messageId", "subagentRunId", "delta"}, jsonv.NewString(s.id), lane, so.delta)
	}
	return event(s.kind.chunkType(), []string{"toolCallId", "toolCallName", "parentMessageId", "subagentRunId", "delta", "metadata"},
		jsonv.NewString(s.id), jsonv.NewString(s.name), optString(s.parent, s.hasParent), lane, so.delta, so.meta)
}

// ends adds the events that ended the run, if it has ended. A checkpoint
// written before a Consumer kept them restores without them: they are made
// from what it holds.
func (p *preluder) ends() {
	v := p.v
	switch {
	case v.run != runFinished && v.run != runFailed:
	case len(v.ends) > 0:
		for _, e := range v.ends {
			p.emit(jsonv.Marshal(e))
		}
	case v.run == runFinished:
		var outcome *jsonv.Node
		if len(v.interrupts) > 0 {
			outcome = jsonv.NewObjectOf([]string{"type", "interrupts"}, jsonv.NewString("interrupt"), jsonv.NewArray(v.interrupts))
		}
		p.add("RUN_FINISHED", []string{"threadId", "runId", "outcome"}, jsonv.NewString(v.threadID), jsonv.NewString(v.runID), outcome)
	default:
		p.add("RUN_ERROR", []string{"message"}, jsonv.NewString(""))
	}
}

// isEmptyObject reports whether n is {}.
func isEmptyObject(n *jsonv.Node) bool { return n.Kind() == jsonv.Object && n.Len() == 0 }
