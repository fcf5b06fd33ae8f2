package aguistate

import (
	"errors"
	"fmt"

	"github.com/aguistate/aguistate/internal/jsonv"
)

// AG-UI event types this package applies (AG-UI 1.0 event set).
const (
	typeStateSnapshot    = "STATE_SNAPSHOT"
	typeStateDelta       = "STATE_DELTA"
	typeMessagesSnapshot = "MESSAGES_SNAPSHOT"

	typeRunStarted   = "RUN_STARTED"
	typeRunFinished  = "RUN_FINISHED"
	typeRunError     = "RUN_ERROR"
	typeStepStarted  = "STEP_STARTED"
	typeStepFinished = "STEP_FINISHED"

	typeTextStart    = "TEXT_MESSAGE_START"
	typeTextContent  = "TEXT_MESSAGE_CONTENT"
	typeTextEnd      = "TEXT_MESSAGE_END"
	typeTextChunk    = "TEXT_MESSAGE_CHUNK"
	typeReasonStart  = "REASONING_START"
	typeReasonEnd    = "REASONING_END"
	typeReasonMStart = "REASONING_MESSAGE_START"
	typeReasonMCont  = "REASONING_MESSAGE_CONTENT"
	typeReasonMEnd   = "REASONING_MESSAGE_END"
	typeReasonChunk  = "REASONING_MESSAGE_CHUNK"
	typeEncrypted    = "REASONING_ENCRYPTED_VALUE"

	typeToolStart  = "TOOL_CALL_START"
	typeToolArgs   = "TOOL_CALL_ARGS"
	typeToolEnd    = "TOOL_CALL_END"
	typeToolResult = "TOOL_CALL_RESULT"
	typeToolChunk  = "TOOL_CALL_CHUNK"

	typeActivitySnapshot = "ACTIVITY_SNAPSHOT"
	typeActivityDelta    = "ACTIVITY_DELTA"

	typeCustom           = "CUSTOM"
	typeSubagentFinished = "SUBAGENT_FINISHED"
	typeSubagentError    = "SUBAGENT_ERROR"
)

// Event is one AG-UI event as it arrived on the wire: a JSON object with a
// string "type" and camelCase fields. Every member is kept verbatim, so an
// event type this package does not know (the protocol grows) loses nothing.
type Event struct {
	// Position is the event's position among the events given to the
	// Consumer, from 1, rejected events included; it goes on across runs
	// and from a checkpoint. [ReadEvents] counts the events of its reader
	// instead. This is the one definition of an event's position.
	Position int
	// Type is the event's "type" member, such as "STATE_DELTA" or "CUSTOM".
	Type string
	v    *jsonv.Node
}

// Value returns the whole event object.
func (e Event) Value() Value { return valueOf(e.v) }

// MarshalJSON returns the event's JSON text as received. It never fails.
func (e Event) MarshalJSON() ([]byte, error) { return e.Value().MarshalJSON() }

// parseEvent reads one event in the AG-UI wire form. Invalid JSON, a
// duplicate member name anywhere, or a missing or non-string "type" wrap
// ErrMalformedEvent; nesting deeper than maxDepth wraps ErrLimit.
func parseEvent(data []byte, maxDepth int) (*jsonv.Node, string, error) {
	n, err := parseJSON(data, maxDepth)
	if err != nil {
		return nil, "", err
	}
	if n.Kind() != jsonv.Object {
		return nil, "", fmt.Errorf("%w: the event is %s, not an object", ErrMalformedEvent, n.Kind().Phrase())
	}
	t := n.Get("type")
	if t == nil || t.Kind() != jsonv.String {
		return nil, "", fmt.Errorf("%w: \"type\" is missing or not a string", ErrMalformedEvent)
	}
	return n, t.Text(), nil
}

// dispatch applies one parsed event to t. It returns a fatal error; a
// warning goes to t.warn. Event types without a handler (RAW, CUSTOM,
// SUBAGENT_*, types this package does not know) change nothing but the
// chunk streams they close.
func (t *txn) dispatch(ev Event) error {
	if err := t.closeChunks(ev.Type, ev.v); err != nil {
		return err
	}
	switch ev.Type {
	case typeStateSnapshot:
		return t.stateSnapshot(ev.v)
	case typeStateDelta:
		return t.stateDelta(ev.v)
	case typeMessagesSnapshot:
		return t.messagesSnapshot(ev.v)
	case typeRunStarted:
		return t.runStarted(ev.v)
	case typeRunFinished:
		return t.runFinished(ev.v)
	case typeRunError:
		f := eventFields(ev.v)
		f.str("message")
		return f.err
	case typeStepStarted, typeStepFinished:
		f := eventFields(ev.v)
		f.str("stepName")
		return f.err
	case typeTextStart:
		return t.textStart(ev.v, false)
	case typeReasonMStart:
		return t.textStart(ev.v, true)
	case typeTextContent, typeReasonMCont:
		return t.textContent(ev.v)
	case typeTextEnd, typeReasonMEnd:
		return t.textEnd(ev.v)
	case typeReasonStart, typeReasonEnd:
		f := eventFields(ev.v)
		f.id("messageId")
		return f.err
	case typeEncrypted:
		return t.encryptedValue(ev.v)
	case typeToolStart:
		return t.toolStart(ev.v)
	case typeToolArgs:
		return t.toolArgs(ev.v)
	case typeToolEnd:
		return t.toolEnd(ev.v)
	case typeToolResult:
		return t.toolResult(ev.v)
	case typeActivitySnapshot:
		return t.activitySnapshot(ev.v)
	case typeActivityDelta:
		return t.activityDelta(ev.v)
	case typeTextChunk:
		return t.textChunk(ev.v)
	case typeReasonChunk:
		return t.reasoningChunk(ev.v)
	case typeToolChunk:
		return t.toolChunk(ev.v)
	}
	return nil
}

// parseJSON parses an event or run input, wrapping ErrLimit when it nests
// deeper than maxDepth and ErrMalformedEvent when it is not JSON.
func parseJSON(data []byte, maxDepth int) (*jsonv.Node, error) {
	n, err := jsonv.Parse(data, maxDepth)
	switch {
	case errors.Is(err, jsonv.ErrTooDeep):
		return nil, fmt.Errorf("%w: %w", ErrLimit, err)
	case err != nil:
		return nil, fmt.Errorf("%w: %w", ErrMalformedEvent, err)
	}
	return n, nil
}
