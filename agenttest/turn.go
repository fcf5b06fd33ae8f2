// Turns and steps: what the scripted agent does in a run, built typed.

package agenttest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aguistate/aguistate"
)

// Turn is what the agent does in one run: its steps, in order, between
// the RUN_STARTED and the RUN_FINISHED (or RUN_ERROR) that the Server adds.
// A turn with an [Interrupt] finishes with the outcome "interrupt"; one
// with a [Fail] step ends there with RUN_ERROR; any other finishes with
// success, leaving its unanswered tool calls for the client.
type Turn []Step

// Step is one thing the agent does in a run: the events it streams. Make
// one with the functions of this package.
type Step struct {
	emit func(r *run)
}

// run builds the events of one run.
type run struct {
	ids             *ids
	threadID, runID string
	events          []json.RawMessage
	message         string // the assistant message the run writes into, for its tool calls
	call            string // the run's last tool call
	interrupts      []json.RawMessage
	failed          json.RawMessage // the RUN_ERROR that ends the run, if it fails
	err             error
}

// events returns the events of turn t for a run of input in, or why a
// step cannot make its events.
func (t Turn) events(in aguistate.RunAgentInput, ids *ids) ([]json.RawMessage, error) {
	r := &run{ids: ids, threadID: in.ThreadID, runID: in.RunID}
	r.emit("RUN_STARTED", "threadId", r.threadID, "runId", r.runID)
	for _, step := range t {
		if r.failed != nil || r.err != nil {
			break
		}
		step.emit(r)
	}
	switch {
	case r.err != nil:
		return nil, r.err
	case r.failed != nil:
		r.events = append(r.events, r.failed)
	case len(r.interrupts) > 0:
		r.emit("RUN_FINISHED", "threadId", r.threadID, "runId", r.runID, "outcome", struct {
			Type       string            `json:"type"`
			Interrupts []json.RawMessage `json:"interrupts"`
		}{"interrupt", r.interrupts})
	default:
		r.emit("RUN_FINISHED", "threadId", r.threadID, "runId", r.runID)
	}
	return r.events, r.err
}

// emit appends the event of type typ with the members of kv (name, value,
// ...), in order.
func (r *run) emit(typ string, kv ...any) {
	r.events = append(r.events, r.event(typ, kv...))
}

// event returns the event of type typ with the members of kv, in order.
func (r *run) event(typ string, kv ...any) json.RawMessage {
	var b strings.Builder
	b.WriteString(`{"type":`)
	b.WriteString(jsonText(typ, &r.err))
	for i := 0; i+1 < len(kv); i += 2 {
		fmt.Fprintf(&b, ",%s:%s", jsonText(kv[i], &r.err), jsonText(kv[i+1], &r.err))
	}
	b.WriteByte('}')
	return json.RawMessage(b.String())
}

// jsonText returns v as JSON text, and records in *err why it cannot.
func jsonText(v any, err *error) string {
	out, e := json.Marshal(v)
	if e != nil && *err == nil {
		*err = e
	}
	return string(out)
}

// pieces splits text as a model streams it: a word at a time, each with
// the space after it. Empty text has no piece.
func pieces(text string) []string {
	if text == "" {
		return nil
	}
	return strings.SplitAfter(text, " ")
}

// Text streams an assistant message with text: TEXT_MESSAGE_START, a
// TEXT_MESSAGE_CONTENT for each word, TEXT_MESSAGE_END. The tool calls
// after it in the turn belong to it.
func Text(text string) Step {
	return Step{func(r *run) {
		r.message = r.ids.message()
		r.emit("TEXT_MESSAGE_START", "messageId", r.message, "role", "assistant")
		for _, p := range pieces(text) {
			r.emit("TEXT_MESSAGE_CONTENT", "messageId", r.message, "delta", p)
		}
		r.emit("TEXT_MESSAGE_END", "messageId", r.message)
	}}
}

// TextChunks streams an assistant message with text as a producer that
// sends only chunks does (Mastra, for one): a TEXT_MESSAGE_CHUNK with the
// message's id and the first word, then one for each other word, without
// it, and no START or END.
func TextChunks(text string) Step {
	return Step{func(r *run) {
		r.message = r.ids.message()
		ps := pieces(text)
		if len(ps) == 0 {
			ps = []string{""}
		}
		r.emit("TEXT_MESSAGE_CHUNK", "messageId", r.message, "role", "assistant", "delta", ps[0])
		for _, p := range ps[1:] {
			r.emit("TEXT_MESSAGE_CHUNK", "delta", p)
		}
	}}
}

// Reasoning streams a reasoning message with text, in a reasoning span:
// REASONING_START, REASONING_MESSAGE_START, a REASONING_MESSAGE_CONTENT
// for each word, REASONING_MESSAGE_END and REASONING_END.
func Reasoning(text string) Step {
	return Step{func(r *run) {
		id := r.ids.message()
		r.emit("REASONING_START", "messageId", id)
		r.emit("REASONING_MESSAGE_START", "messageId", id, "role", "reasoning")
		for _, p := range pieces(text) {
			r.emit("REASONING_MESSAGE_CONTENT", "messageId", id, "delta", p)
		}
		r.emit("REASONING_MESSAGE_END", "messageId", id)
		r.emit("REASONING_END", "messageId", id)
	}}
}

// ToolCall streams a call of the tool name with arguments (JSON text):
// TOOL_CALL_START, TOOL_CALL_ARGS in two pieces, TOOL_CALL_END. The call
// belongs to the turn's last assistant message, or to a new one. Unless a
// [ToolResult] answers it, the run leaves it for the client.
func ToolCall(name, arguments string) Step {
	return Step{func(r *run) {
		r.call = r.ids.call()
		if r.message == "" {
			r.message = r.ids.message()
		}
		r.emit("TOOL_CALL_START", "toolCallId", r.call, "toolCallName", name, "parentMessageId", r.message)
		half := len(arguments) / 2
		for _, p := range []string{arguments[:half], arguments[half:]} {
			if p != "" {
				r.emit("TOOL_CALL_ARGS", "toolCallId", r.call, "delta", p)
			}
		}
		r.emit("TOOL_CALL_END", "toolCallId", r.call)
	}}
}

// ToolCallChunks streams a call of the tool name with arguments as a
// producer that sends only chunks does: a TOOL_CALL_CHUNK with the call's
// id, name and parent message and the first half of the arguments, then
// one with the rest, and no START or END.
func ToolCallChunks(name, arguments string) Step {
	return Step{func(r *run) {
		r.call = r.ids.call()
		if r.message == "" {
			r.message = r.ids.message()
		}
		half := len(arguments) / 2
		r.emit("TOOL_CALL_CHUNK", "toolCallId", r.call, "toolCallName", name, "parentMessageId", r.message, "delta", arguments[:half])
		if arguments[half:] != "" {
			r.emit("TOOL_CALL_CHUNK", "delta", arguments[half:])
		}
	}}
}

// ToolResult answers the turn's last tool call with content, as the agent
// does for a tool it runs itself: a TOOL_CALL_RESULT, in a tool message of
// its own. The call is then not left for the client.
func ToolResult(content string) Step {
	return Step{func(r *run) {
		if r.call == "" {
			r.err = fmt.Errorf("ToolResult with no ToolCall before it in the turn")
			return
		}
		r.emit("TOOL_CALL_RESULT", "messageId", r.ids.message(), "toolCallId", r.call, "role", "tool", "content", content)
	}}
}

// State sends a STATE_SNAPSHOT of state, which encoding/json marshals.
func State(state any) Step {
	return Step{func(r *run) { r.emit("STATE_SNAPSHOT", "snapshot", state) }}
}

// Op is one operation of an RFC 6902 JSON Patch: Op is "add", "remove",
// "replace", "move", "copy" or "test"; Path and From are JSON Pointers;
// Value is marshalled by encoding/json, and left out when nil for remove,
// move and copy.
type Op struct {
	Op, Path, From string
	Value          any
}

// Delta sends a STATE_DELTA of the operations ops.
func Delta(ops ...Op) Step {
	return Step{func(r *run) {
		patch := make([]map[string]any, len(ops))
		for i, o := range ops {
			p := map[string]any{"op": o.Op, "path": o.Path}
			if o.From != "" {
				p["from"] = o.From
			}
			if o.Value != nil || (o.Op != "remove" && o.Op != "move" && o.Op != "copy") {
				p["value"] = o.Value
			}
			patch[i] = p
		}
		r.emit("STATE_DELTA", "delta", patch)
	}}
}

// Interrupt makes the run finish with the outcome "interrupt", waiting on
// the interrupt id for the reason reason, with message for the user. A
// turn may hold several; the next run resumes with an answer for each
// (its input's Resume).
func Interrupt(id, reason, message string) Step {
	return Step{func(r *run) {
		in := struct {
			ID      string `json:"id"`
			Reason  string `json:"reason"`
			Message string `json:"message,omitempty"`
		}{id, reason, message}
		r.interrupts = append(r.interrupts, json.RawMessage(jsonText(in, &r.err)))
	}}
}

// Fail ends the run with RUN_ERROR, with message and, when not empty,
// code. The steps after it do not run.
func Fail(message, code string) Step {
	return Step{func(r *run) {
		if code == "" {
			r.failed = r.event("RUN_ERROR", "message", message)
		} else {
			r.failed = r.event("RUN_ERROR", "message", message, "code", code)
		}
	}}
}

// Event sends event, an AG-UI event as JSON text, as it is: for what the
// other steps do not make.
func Event(event string) Step {
	return Step{func(r *run) {
		if !json.Valid([]byte(event)) {
			r.err = fmt.Errorf("Event: %q is not JSON", event)
			return
		}
		r.events = append(r.events, json.RawMessage(event))
	}}
}
