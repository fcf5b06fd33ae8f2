// Chunk events: TEXT_MESSAGE_CHUNK, REASONING_MESSAGE_CHUNK and
// TOOL_CALL_CHUNK, their lanes, and what other events do to open chunk
// streams.

package aguistate

import (
	"fmt"
	"slices"

	"github.com/aguistate/aguistate/internal/jsonv"
)

// Chunk events (AG-UI TEXT_MESSAGE_CHUNK, REASONING_MESSAGE_CHUNK and
// TOOL_CALL_CHUNK) open, extend and close a message or tool call by
// themselves. They apply as the reference client's transformChunks expands
// them into START, CONTENT (or ARGS) and END events:
//
//   - Each lane (a subagentRunId; "" for the parent agent) has at most one
//     open chunk stream. A chunk goes to the lane of the open stream of its
//     kind with its id; else to the lane its subagentRunId names; else, with
//     neither id nor subagentRunId, to the parent lane when that has a stream
//     of its kind open, or to the one lane that has (two or more: fatal).
//   - A chunk continues its lane's stream when the stream is of its kind and
//     the chunk has no id or the stream's. A role, name, toolCallName or
//     parentMessageId it repeats must equal the stream's (else fatal).
//   - Otherwise it closes the lane's stream and opens a new one, which needs
//     an id (and, for a tool call, a toolCallName; else fatal), applying the
//     START the reference synthesizes (role defaults to "assistant"), unless
//     the construct with that id is open already: then it goes on with it.
//   - A delta (or rawEvent) is then applied as CONTENT or ARGS.
//   - Other events close streams before they apply, as the chunks column of
//     the eventTypes table says, skipped events included.
//
// Closing a stream changes no message, and leaves its construct open (see
// construct.go): the END the reference synthesizes carries no metadata, and
// a later chunk naming the id reopens the message there. The open streams
// are Consumer state (view.chunks), so that a fatal chunk leaves them as
// they were.

// chunkEventTypes names each kind of chunk stream by its event type.
var chunkEventTypes = [...]string{textConstruct: "TEXT_MESSAGE_CHUNK", reasoningConstruct: "REASONING_MESSAGE_CHUNK", toolConstruct: "TOOL_CALL_CHUNK"}

// chunkType returns the type of the chunk events that stream a construct of
// kind k.
func (k constructKind) chunkType() string { return chunkEventTypes[k] }

// chunkKindOf returns the kind of the chunk streams that events of type typ
// make, or 0 when typ is not a chunk event type.
func chunkKindOf(typ string) constructKind {
	for k, name := range chunkEventTypes {
		if name == typ && name != "" {
			return constructKind(k)
		}
	}
	return 0
}

// chunkStream is an open chunk stream, or the stream a chunk describes. It
// is never changed once it is in a view.
type chunkStream struct {
	lane string // subagentRunId of the lane, "" for the parent agent
	kind constructKind
	id   string // messageId or toolCallId

	role, name, parent          string // text: role, name; tool: toolCallName, parentMessageId
	hasRole, hasName, hasParent bool
}

// chunk is one parsed chunk event.
type chunk struct {
	chunkStream
	hasID    bool
	sub      string // subagentRunId
	hasSub   bool
	subNull  bool // "subagentRunId": null
	delta    string
	hasDelta bool
	raw      bool // rawEvent present
	meta     *jsonv.Node
}

// readChunk parses the fields common to the chunk events; idName names the
// id member.
func readChunk(f *fields, kind constructKind, idName string) chunk {
	c := chunk{chunkStream: chunkStream{kind: kind}}
	c.id, c.hasID = f.optID(idName)
	c.sub, c.hasSub = f.optStr("subagentRunId")
	if s := f.n.Get("subagentRunId"); s != nil && s.Kind() == jsonv.Null {
		c.subNull = true
	}
	c.delta, c.hasDelta = f.optStr("delta")
	if r := f.n.Get("rawEvent"); r != nil && r.Kind() != jsonv.Null {
		c.raw = true
	}
	c.meta = f.meta()
	return c
}

// textChunk applies TEXT_MESSAGE_CHUNK.
func (t *txn) textChunk(ev *jsonv.Node) error {
	f := eventFields(ev)
	c := readChunk(f, textConstruct, "messageId")
	if _, ok := f.optStr("role"); ok {
		c.role, c.hasRole = textRole(f), true
	}
	c.name, c.hasName = f.optStr("name")
	if f.err != nil {
		return f.err
	}
	return t.applyChunk(c, "messageId")
}

// reasoningChunk applies REASONING_MESSAGE_CHUNK.
func (t *txn) reasoningChunk(ev *jsonv.Node) error {
	f := eventFields(ev)
	c := readChunk(f, reasoningConstruct, "messageId")
	if f.err != nil {
		return f.err
	}
	return t.applyChunk(c, "messageId")
}

// toolChunk applies TOOL_CALL_CHUNK.
func (t *txn) toolChunk(ev *jsonv.Node) error {
	f := eventFields(ev)
	c := readChunk(f, toolConstruct, "toolCallId")
	c.name, c.hasName = f.optStr("toolCallName")
	c.parent, c.hasParent = f.optStr("parentMessageId")
	if f.err != nil {
		return f.err
	}
	return t.applyChunk(c, "toolCallId")
}

// applyChunk continues or opens c's stream and applies its delta.
func (t *txn) applyChunk(c chunk, idName string) error {
	lane, err := t.chunkLane(c)
	if err != nil {
		return err
	}
	s, open := t.stream(lane)
	started := false
	if open && s.kind == c.kind && (!c.hasID || c.id == s.id) {
		if err := s.continues(c.chunkStream); err != nil {
			return err
		}
	} else {
		t.closeLane(lane)
		if !c.hasID {
			return fmt.Errorf("%w: the first %s chunk of a stream has no %q (any event of another type, skipped or not, ends its lane's stream)",
				ErrMalformedEvent, c.kind, idName)
		}
		if c.kind == toolConstruct && !c.hasName {
			return fmt.Errorf("%w: the first tool call chunk of a stream has no \"toolCallName\"", ErrMalformedEvent)
		}
		s = c.chunkStream
		s.lane = lane
		if s.kind == textConstruct && !s.hasRole {
			s.role, s.hasRole = roleAssistant, true
		}
		t.openStream(s)
		if !t.isOpen(s.kind, s.id) { // else the stream goes on with the open construct
			t.startChunk(s, c)
			started = true
		}
		t.chunkConstruct(s.kind, s.id)
	}
	if c.hasDelta || c.raw || (!started && (c.meta != nil || c.subNull)) {
		if c.kind == toolConstruct {
			t.appendToolArgs(s.id, c.delta, c.meta)
		} else {
			t.appendText(c.kind, s.id, c.delta, c.meta)
		}
	}
	return nil
}

// startChunk applies the START event that opening stream s synthesizes.
func (t *txn) startChunk(s chunkStream, c chunk) {
	sub := optString(c.sub, c.hasSub)
	switch s.kind {
	case textConstruct:
		t.openText(textConstruct, s.id, s.role, optString(s.name, s.hasName), sub, c.meta)
	case reasoningConstruct:
		t.openText(reasoningConstruct, s.id, roleReasoning, nil, sub, c.meta)
	default:
		t.startToolCall(s.id, s.name, s.parent, sub, c.meta)
	}
}

// continues checks that a chunk describing c may continue stream s: each of
// role, name (toolCallName) and parentMessageId it has must equal s's.
func (s chunkStream) continues(c chunkStream) error {
	check := func(what, got string, has bool, want string, wantHas bool) error {
		if !has || (wantHas && got == want) {
			return nil
		}
		shown := "(absent)"
		if wantHas {
			shown = jsonv.Quote(want)
		}
		return fmt.Errorf("%w: cannot continue %s %s: the chunk's %s %s is not the stream's %s",
			ErrMalformedEvent, s.kind, jsonv.Quote(s.id), what, jsonv.Quote(got), shown)
	}
	nameField := "name"
	if s.kind == toolConstruct {
		nameField = "toolCallName"
	}
	if err := check("role", c.role, c.hasRole, s.role, s.hasRole); err != nil {
		return err
	}
	if err := check(nameField, c.name, c.hasName, s.name, s.hasName); err != nil {
		return err
	}
	return check("parentMessageId", c.parent, c.hasParent, s.parent, s.hasParent)
}

// chunkLane returns the lane chunk c belongs to.
func (t *txn) chunkLane(c chunk) (string, error) {
	if c.hasID {
		for _, s := range t.next.chunks {
			if s.kind == c.kind && s.id == c.id {
				if c.hasSub && c.sub != s.lane {
					return "", fmt.Errorf("%w: cannot continue %s %s: the chunk's subagentRunId %s is not the stream's %s",
						ErrMalformedEvent, c.kind, jsonv.Quote(c.id), jsonv.Quote(c.sub), jsonv.Quote(s.lane))
				}
				return s.lane, nil
			}
		}
		return c.sub, nil
	}
	if c.hasSub {
		return c.sub, nil
	}
	if s, ok := t.stream(""); ok && s.kind == c.kind {
		return "", nil
	}
	lane, n := "", 0
	for _, s := range t.next.chunks {
		if s.kind == c.kind {
			lane, n = s.lane, n+1
		}
	}
	if n > 1 {
		return "", fmt.Errorf("%w: a %s chunk with neither an id nor a subagentRunId, and %d lanes with an open %s",
			ErrMalformedEvent, c.kind, n, c.kind)
	}
	return lane, nil
}

// stream returns the open stream of lane.
func (t *txn) stream(lane string) (chunkStream, bool) {
	for _, s := range t.next.chunks {
		if s.lane == lane {
			return s, true
		}
	}
	return chunkStream{}, false
}

// openStream makes s the open stream of its lane, after the other lanes'.
func (t *txn) openStream(s chunkStream) {
	t.closeLane(s.lane)
	t.touch(s.kind, s.id)
	t.next.chunks = append(slices.Clip(t.next.chunks), s)
}

// closeLane closes the open stream of lane, if any.
func (t *txn) closeLane(lane string) {
	for i, s := range t.next.chunks {
		if s.lane == lane {
			t.touch(s.kind, s.id)
			t.next.chunks = slices.Concat(t.next.chunks[:i], t.next.chunks[i+1:])
			return
		}
	}
}

// chunkEffect is what an event does to the open chunk streams before it
// applies (see the eventTypes table).
type chunkEffect uint8

const (
	// keepChunks leaves every stream open.
	keepChunks chunkEffect = iota
	// ownChunks is for the chunk events, which manage the streams themselves.
	ownChunks
	// closeAll closes every stream.
	closeAll
	// closeLane closes the stream of the event's lane, named by its
	// "subagentRunId" ("" for the parent), which must be a string.
	closeLane
	// closeLaneLoosely is closeLane for an event this package only passes
	// on: a "subagentRunId" that is not a string names the parent's lane.
	closeLaneLoosely
	// closeNamedLane closes the lane that a string "subagentRunId" names,
	// and none otherwise.
	closeNamedLane
)

// closeChunks closes the chunk streams that effect says event ev ends.
func (t *txn) closeChunks(effect chunkEffect, ev *jsonv.Node) error {
	lane, named := "", false
	if s := ev.Get("subagentRunId"); s != nil && s.Kind() == jsonv.String {
		lane, named = s.Text(), true
	}
	switch effect {
	case closeAll:
		for _, s := range t.next.chunks {
			t.touch(s.kind, s.id)
		}
		t.next.chunks = nil
	case closeLaneLoosely:
		t.closeLane(lane)
	case closeLane:
		f := eventFields(ev)
		f.optStr("subagentRunId")
		if f.err != nil {
			return f.err
		}
		t.closeLane(lane)
	case closeNamedLane:
		if named {
			t.closeLane(lane)
		}
	}
	return nil
}

// optString returns s as a JSON string, or nil when ok is false.
func optString(s string, ok bool) *jsonv.Node {
	if !ok {
		return nil
	}
	return jsonv.NewString(s)
}
