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
	// Index is the event's position among the events given to the Consumer,
	// counted from 1.
	Index int
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
		return nil, "", fmt.Errorf("%w: the event is a %s, not an object", ErrMalformedEvent, n.Kind())
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
		_, err := stringField(ev.v, "message")
		return err
	case typeStepStarted, typeStepFinished:
		_, err := stringField(ev.v, "stepName")
		return err
	case typeTextStart:
		return t.textStart(ev.v, false)
	case typeReasonMStart:
		return t.textStart(ev.v, true)
	case typeTextContent, typeReasonMCont:
		return t.textContent(ev.v)
	case typeTextEnd, typeReasonMEnd:
		return t.textEnd(ev.v)
	case typeReasonStart, typeReasonEnd:
		_, err := idField(ev.v, "messageId")
		return err
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

// field returns the event's member name, failing with ErrMalformedEvent when
// it is absent.
func field(ev *jsonv.Node, name string) (*jsonv.Node, error) {
	v := ev.Get(name)
	if v == nil {
		return nil, fmt.Errorf("%w: %q is missing", ErrMalformedEvent, name)
	}
	return v, nil
}

// stringField returns the event's string member name, failing with
// ErrMalformedEvent when it is absent or not a string.
func stringField(ev *jsonv.Node, name string) (string, error) {
	v := ev.Get(name)
	if v == nil || v.Kind() != jsonv.String {
		return "", fmt.Errorf("%w: %q is missing or not a string", ErrMalformedEvent, name)
	}
	return v.Text(), nil
}

// idField returns the event's id member name (messageId, toolCallId, ...),
// failing with ErrMalformedEvent when it is absent or not a non-empty string.
func idField(ev *jsonv.Node, name string) (string, error) {
	s, err := stringField(ev, name)
	if err == nil && s == "" {
		err = fmt.Errorf("%w: %q is empty", ErrMalformedEvent, name)
	}
	return s, err
}

// objectField returns the event's object member name, failing with
// ErrMalformedEvent when it is absent or not an object.
func objectField(ev *jsonv.Node, name string) (*jsonv.Node, error) {
	v := ev.Get(name)
	if v == nil || v.Kind() != jsonv.Object {
		return nil, fmt.Errorf("%w: %q is missing or not an object", ErrMalformedEvent, name)
	}
	return v, nil
}

// optField returns the event's optional member name, or nil when it is absent
// or null. It fails with ErrMalformedEvent when the member has another kind
// than kind.
func optField(ev *jsonv.Node, name string, kind jsonv.Kind) (*jsonv.Node, error) {
	v := ev.Get(name)
	if v == nil || v.Kind() == jsonv.Null {
		return nil, nil
	}
	if v.Kind() != kind {
		return nil, fmt.Errorf("%w: %q is a %s, not a %s", ErrMalformedEvent, name, v.Kind(), kind)
	}
	return v, nil
}

// optString is optField for a string member: its text, and whether it is
// present (not absent, not null).
func optString(ev *jsonv.Node, name string) (string, bool, error) {
	v, err := optField(ev, name, jsonv.String)
	if v == nil {
		return "", false, err
	}
	return v.Text(), true, nil
}

// optID is optString for an id member, which must not be empty.
func optID(ev *jsonv.Node, name string) (string, bool, error) {
	s, ok, err := optString(ev, name)
	if ok && s == "" {
		return "", false, fmt.Errorf("%w: %q is empty", ErrMalformedEvent, name)
	}
	return s, ok, err
}

// optBool returns the event's optional boolean member name, or def when it
// is absent or null.
func optBool(ev *jsonv.Node, name string, def bool) (bool, error) {
	switch v := ev.Get(name); {
	case v == nil || v.Kind() == jsonv.Null:
		return def, nil
	case v.Kind() == jsonv.True || v.Kind() == jsonv.False:
		return v.Kind() == jsonv.True, nil
	default:
		return false, fmt.Errorf("%w: %q is a %s, not a boolean", ErrMalformedEvent, name, v.Kind())
	}
}

// metadata returns the event's optional "metadata" object, or nil.
func metadata(ev *jsonv.Node) (*jsonv.Node, error) { return optField(ev, "metadata", jsonv.Object) }
