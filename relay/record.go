// The record of a run: the RUN_STARTED that carries the run's input into the log.

package relay

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/aguistate/aguistate"
	"github.com/aguistate/aguistate/internal/jsonv"
)

// The record of a run's start. The log alone, from a checkpoint, must
// rebuild the thread, and the run's input is no event: so the relay
// records it in the run's RUN_STARTED, as its "input" (AG-UI
// RunStartedEvent.input), in place of any the agent sent, and makes a
// RUN_STARTED when the agent's first event is another. The input holds
// the thread and run ids and the input's messages that have an id and
// that the thread does not hold; a STATE_SNAPSHOT of the input's state
// follows when it is not the thread's state (or the thread has diverged),
// since the reference client does not take an input's state. A message
// without an id (which no AG-UI message schema allows) is left out of the
// record: no MESSAGES_SNAPSHOT could restate it.

// startEvents returns the events that record the start of a run with
// input in, whose request body gave the state state (nil when absent), on
// the thread that c holds: a RUN_STARTED, the agent's first event (agent[0])
// when it is one (fromAgent), else one the relay makes; then a
// STATE_SNAPSHOT when due. The ids are written as the thread's record
// reads them back, byte for byte: a lone surrogate escape (\ud800) stays
// one, where encoding/json would write U+FFFD.
func startEvents(c *aguistate.Consumer, in aguistate.RunAgentInput, state json.RawMessage, agent [][]byte) (events [][]byte, fromAgent bool, err error) {
	added := make(map[string]bool) // the ids taken so far: an input may repeat one
	messages := []aguistate.Message{}
	for _, m := range in.Messages {
		if id := m.ID(); id != "" && !added[id] {
			if _, held := c.Message(id); !held {
				added[id] = true
				messages = append(messages, m)
			}
		}
	}
	list, err := json.Marshal(messages)
	if err != nil {
		return nil, false, err
	}
	input := append(jsonv.AppendString([]byte(`{"threadId":`), in.ThreadID), `,"runId":`...)
	input = jsonv.AppendString(input, in.RunID)
	if in.ParentRunID != "" {
		input = jsonv.AppendString(append(input, `,"parentRunId":`...), in.ParentRunID)
	}
	input = append(append(append(input, `,"messages":`...), list...), '}')
	var start []byte
	if fromAgent = len(agent) > 0 && eventType(agent[0]) == "RUN_STARTED"; fromAgent {
		if start, err = withMember(agent[0], "input", input); err != nil {
			return nil, false, err
		}
	} else {
		start = append(jsonv.AppendString([]byte(`{"type":"RUN_STARTED","threadId":`), in.ThreadID), `,"runId":`...)
		start = append(append(append(jsonv.AppendString(start, in.RunID), `,"input":`...), input...), '}')
	}
	events = [][]byte{start}
	if state != nil && (c.Diverged() || !c.State().Equal(in.State)) {
		snap, err := json.Marshal(struct {
			Type     string          `json:"type"`
			Snapshot json.RawMessage `json:"snapshot"`
		}{"STATE_SNAPSHOT", state})
		if err != nil {
			return nil, false, err
		}
		events = append(events, snap)
	}
	return events, fromAgent, nil
}

// withMember returns the JSON object text obj with the member name set to
// value: in its place when obj has it, else last. Other members keep their
// order and text, names included: a name with a lone surrogate escape
// ("\ud800") stays that escape, as JSON.parse and JSON.stringify keep it,
// where encoding/json would write U+FFFD.
func withMember(obj []byte, name string, value json.RawMessage) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("aguistate: the event is not a JSON object")
	}
	out := []byte{'{'}
	set := false
	for dec.More() {
		from := dec.InputOffset() // white space and a comma, then the name
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		raw := obj[from:dec.InputOffset()]
		raw = raw[bytes.IndexByte(raw, '"'):] // the name's text, as obj writes it
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		if key == name {
			if set {
				continue
			}
			v, set = value, true
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(append(append(out, raw...), ':'), v...)
	}
	if !set {
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(append(quote(out, name), ':'), value...)
	}
	return append(out, '}'), nil
}

// quote appends s as a JSON string, escaping only what JSON requires.
func quote(dst []byte, s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return append(dst, bytes.TrimSuffix(b.Bytes(), []byte("\n"))...)
}

// oneLine returns a copy of event on one line: its JSON text without line
// ends (only white space between tokens may hold them), compacted, so that
// it is one SSE data field. Text that is no JSON (which no store of a
// relay holds) has each line end replaced by a space: it still cannot
// forge a field or an event.
func oneLine(event []byte) []byte {
	if bytes.IndexByte(event, '\n') < 0 && bytes.IndexByte(event, '\r') < 0 {
		return bytes.Clone(event)
	}
	var b bytes.Buffer
	if err := json.Compact(&b, event); err != nil {
		return bytes.Map(func(r rune) rune {
			if r == '\n' || r == '\r' {
				return ' '
			}
			return r
		}, event)
	}
	return b.Bytes()
}

// runCancelled returns the JSON text of a RUN_FINISHED of the run runID of
// thread with the outcome "cancelled" (AG-UI 1.0 RunFinishedOutcome, as
// @ag-ui/core 1.0.0 defines it: the run was stopped and did not fail).
func runCancelled(thread, runID string) []byte {
	ev := jsonv.AppendString([]byte(`{"type":"RUN_FINISHED","threadId":`), thread)
	ev = jsonv.AppendString(append(ev, `,"runId":`...), runID)
	return append(ev, `,"outcome":{"type":"cancelled"}}`...)
}
