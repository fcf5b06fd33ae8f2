package aguistate

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/aguistate/aguistate/internal/jsonv"
)

// checkpointVersion names the checkpoint format; Restore refuses others.
const checkpointVersion = "aguistate-checkpoint/1"

var chunkKindNames = map[chunkKind]string{
	chunkText: "TEXT_MESSAGE_CHUNK", chunkReasoning: "REASONING_MESSAGE_CHUNK", chunkTool: "TOOL_CALL_CHUNK",
}

// Checkpoint returns everything that decides what the Consumer does with
// the next event, as one JSON object: the state, the messages, the diverged
// flag, the pending interrupts, the thread and run ids, the open chunk
// streams, and the count of events applied (which numbers the next event's
// errors). State, messages and interrupts are written verbatim, numbers and
// member order included. [Restore] reads it back. Subscribers and Options
// are not part of it. Do not depend on the layout of the object beyond
// passing it to Restore; its "format" member names the version.
func (c *Consumer) Checkpoint() []byte {
	v := c.cur.Load()
	events := v.events

	chunks := make([]*jsonv.Node, len(v.chunks))
	for i, s := range v.chunks {
		chunks[i] = newObject([]string{"lane", "kind", "id", "role", "name", "parent"},
			jsonv.NewString(s.lane), jsonv.NewString(chunkKindNames[s.kind]), jsonv.NewString(s.id),
			stringOr(s.role, s.hasRole), stringOr(s.name, s.hasName), stringOr(s.parent, s.hasParent))
	}
	interrupts := v.interrupts
	if interrupts == nil {
		interrupts = []*jsonv.Node{}
	}
	return jsonv.Marshal(jsonv.NewObject(
		[]string{"format", "events", "threadId", "runId", "diverged", "state", "messages", "interrupts", "chunks"},
		[]*jsonv.Node{jsonv.NewString(checkpointVersion), jsonv.NewNumber(strconv.Itoa(events)),
			jsonv.NewString(v.threadID), jsonv.NewString(v.runID), jsonv.NewBool(v.diverged), v.state,
			encodeMessages(v.messages), jsonv.NewArray(interrupts), jsonv.NewArray(chunks)}))
}

// Restore returns a Consumer that holds exactly what checkpoint, made by
// [Consumer.Checkpoint], says, configured by opts (nil means the defaults).
// Given the rest of a stream, it ends where the Consumer that made the
// checkpoint would have ended. It returns an error wrapping
// [ErrBadCheckpoint] when checkpoint is not one, or [ErrLimit] when it
// holds more than opts allows.
func Restore(checkpoint []byte, opts *Options) (*Consumer, error) {
	c := New(opts)
	n, err := jsonv.Parse(checkpoint, c.opts.MaxDepth+2) // the state and messages sit two levels down
	if errors.Is(err, jsonv.ErrTooDeep) {
		return nil, fmt.Errorf("%w: %w", ErrLimit, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadCheckpoint, err)
	}
	if n.Kind() != jsonv.Object {
		return nil, fmt.Errorf("%w: a %s, not an object", ErrBadCheckpoint, n.Kind())
	}
	f := &fields{n: n, kind: ErrBadCheckpoint}
	if format := f.str("format"); f.err == nil && format != checkpointVersion {
		return nil, fmt.Errorf("%w: format %q, want %q", ErrBadCheckpoint, format, checkpointVersion)
	}
	eventsText := f.of("events", jsonv.Number).Text()
	events, perr := strconv.Atoi(eventsText)
	v := &view{
		threadID: f.str("threadId"),
		runID:    f.str("runId"),
		diverged: f.of("diverged", jsonv.False, jsonv.True).Kind() == jsonv.True,
		state:    f.any("state"),
	}
	msgs, interrupts, chunks := f.of("messages", jsonv.Array), f.of("interrupts", jsonv.Array), f.of("chunks", jsonv.Array)
	if f.err != nil {
		return nil, f.err
	}
	if perr != nil || events < 0 || events > 1<<53 || strconv.Itoa(events) != eventsText {
		return nil, fmt.Errorf("%w: \"events\" is not a count", ErrBadCheckpoint)
	}
	if v.messages, err = decodeMessages(msgs, true); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadCheckpoint, err)
	}
	v.index = make(map[string]int, len(v.messages))
	reindex(v.index, v.messages)
	if len(v.index) != countIDs(v.messages) {
		return nil, fmt.Errorf("%w: two messages have one id", ErrBadCheckpoint)
	}
	for i, in := range interrupts.Elems() {
		if in.Kind() != jsonv.Object {
			return nil, fmt.Errorf("%w: interrupt %d is a %s, not an object", ErrBadCheckpoint, i, in.Kind())
		}
	}
	if interrupts.Len() > 0 {
		v.interrupts = interrupts.Elems()
	}
	lanes := make(map[string]bool)
	for i, s := range chunks.Elems() {
		cs, err := restoreChunk(s)
		if err == nil && lanes[cs.lane] {
			err = fmt.Errorf("%w: a second stream in lane %q", ErrBadCheckpoint, cs.lane)
		}
		if err != nil {
			return nil, fmt.Errorf("%w (in chunk stream %d)", err, i)
		}
		lanes[cs.lane] = true
		v.chunks = append(v.chunks, cs)
	}
	// The limits apply to a restored Consumer as to any event.
	t := newTxn(&view{state: jsonv.NewNull()}, &c.opts)
	t.next = *v
	t.touched = v.messages
	if err := t.checkLimits(&c.opts); err != nil {
		return nil, err
	}
	v.events = events
	c.cur.Store(v)
	return c, nil
}

func countIDs(ms []Message) int {
	n := 0
	for _, m := range ms {
		if m.ID != "" {
			n++
		}
	}
	return n
}

func restoreChunk(n *jsonv.Node) (chunkStream, error) {
	var s chunkStream
	if n.Kind() != jsonv.Object {
		return s, fmt.Errorf("%w: a %s, not an object", ErrBadCheckpoint, n.Kind())
	}
	f := &fields{n: n, kind: ErrBadCheckpoint}
	s.lane, s.id = f.str("lane"), f.id("id")
	kind := f.str("kind")
	for k, name := range chunkKindNames {
		if name == kind {
			s.kind = k
		}
	}
	s.role, s.hasRole = f.optStr("role")
	s.name, s.hasName = f.optStr("name")
	s.parent, s.hasParent = f.optStr("parent")
	if f.err == nil && s.kind == 0 {
		f.fail("unknown kind %q", kind)
	}
	return s, f.err
}
