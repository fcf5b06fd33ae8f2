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
// run lifecycle stands, the open chunk streams and the count of events. Values are written verbatim.
// Subscribers and Options are not part of it. [Restore] reads it back. Do
// not depend on its layout; its "format" member names the version. It
// takes no lock, so a subscriber may checkpoint after each change.
func (c *Consumer) Checkpoint() []byte { return c.cur.Load().checkpoint() }

// checkpoint returns the view as Checkpoint writes it.
func (v *view) checkpoint() []byte {
	chunks := make([]*jsonv.Node, len(v.chunks))
	for i, s := range v.chunks {
		chunks[i] = jsonv.NewObjectOf([]string{"lane", "kind", "id", "role", "name", "parent"},
			jsonv.NewString(s.lane), jsonv.NewString(s.kind.eventType()), jsonv.NewString(s.id),
			optString(s.role, s.hasRole), optString(s.name, s.hasName), optString(s.parent, s.hasParent))
	}
	interrupts := v.interrupts
	if interrupts == nil {
		interrupts = []*jsonv.Node{}
	}
	return jsonv.Marshal(jsonv.NewObject(
		[]string{"format", "events", "threadId", "runId", "run", "diverged", "state", "messages", "interrupts", "chunks"},
		[]*jsonv.Node{jsonv.NewString(checkpointVersion), jsonv.NewNumber(strconv.Itoa(v.events)),
			jsonv.NewString(v.threadID), jsonv.NewString(v.runID), jsonv.NewString(runPhaseNames[v.run]), jsonv.NewBool(v.diverged), v.state,
			encodeMessages(v.messages), jsonv.NewArray(interrupts), jsonv.NewArray(chunks)}))
}

// Restore returns a Consumer that holds what checkpoint says, configured by
// opts (nil means the defaults). Given the rest of a stream, it ends where
// the Consumer that made the checkpoint would have ended. The limits and
// ValidateState apply as they do to a run input. It returns an error
// wrapping [ErrLimit] or [ErrStateRejected], or one saying that the data is
// not a checkpoint.
func Restore(checkpoint []byte, opts *Options) (*Consumer, error) {
	c := New(opts)
	if err := c.restore(checkpoint); err != nil {
		return nil, apiError(err)
	}
	return c, nil
}

// restore loads a checkpoint into the new Consumer c.
func (c *Consumer) restore(checkpoint []byte) error {
	n, err := jsonv.Parse(checkpoint, c.opts.MaxDepth+2) // the state and messages sit two levels down
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
	msgs, interrupts, chunks := f.of("messages", jsonv.Array), f.of("interrupts", jsonv.Array), f.of("chunks", jsonv.Array)
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
		if m.ID != "" && ids[m.ID] {
			return fmt.Errorf("%w: two messages have the id %s", errBadCheckpoint, jsonv.Quote(m.ID))
		}
		ids[m.ID] = true
	}

	t := c.begin(c.cur.Load())
	t.next.state, t.next.diverged = state, diverged
	t.next.threadID, t.next.runID, t.next.run = threadID, runID, runPhase(phase)
	t.setMessages(ms)
	for i, in := range interrupts.All() {
		if in.Kind() != jsonv.Object {
			return fmt.Errorf("%w: interrupt %d is %s, not an object", errBadCheckpoint, i, in.Kind().Phrase())
		}
		t.next.interrupts = append(t.next.interrupts, in)
	}
	lanes := make(map[string]bool)
	for i, s := range chunks.All() {
		cs, err := restoreChunk(s)
		if err == nil && lanes[cs.lane] {
			err = fmt.Errorf("%w: a second stream in lane %s", errBadCheckpoint, jsonv.Quote(cs.lane))
		}
		if err != nil {
			return fmt.Errorf("%w (in chunk stream %d)", err, i)
		}
		lanes[cs.lane] = true
		t.next.chunks = append(t.next.chunks, cs)
	}
	if err := c.check(t); err != nil {
		return err
	}
	t.next.events = events
	c.publish(t)
	return nil
}

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
	if f.err == nil && s.kind == 0 {
		f.fail("unknown kind %s", jsonv.Quote(kind))
	}
	return s, f.err
}
