// Events: the Event type, the parser of an event's text, and the table of
// event types with their handlers.

package aguistate

import (
	"errors"
	"fmt"

	"github.com/aguistate/aguistate/internal/jsonv"
)

// Event is one AG-UI event as it arrived: a JSON object with a string
// "type". Every member is kept verbatim, so an event of a type this package
// does not know loses nothing.
type Event struct {
	// Position is the event's place in its thread: the count of events
	// given to the Consumer, from 1, by Apply, Run and RunAgent alike. It
	// goes on across runs and from a checkpoint, so it names one event of
	// the thread (an event log can use it as its index). A fatal event
	// counts; an SSE keep-alive, a local change and a stream cut short do
	// not. [ReadEvents], which has no thread, counts the events of its
	// reader the same way: from 1, as a new Consumer's Run would. Every
	// error and [Change] names events by this position.
	Position int
	// Type is the event's "type" member, such as "STATE_DELTA" or "CUSTOM".
	Type string
	v    *jsonv.Node
}

// Value returns the whole event object.
func (e Event) Value() Value { return valueOf(e.v) }

// MarshalJSON returns the event's compact JSON text, members and numbers
// as received. It never fails.
func (e Event) MarshalJSON() ([]byte, error) { return e.Value().MarshalJSON() }

// parseEvent reads one event in the AG-UI wire form. Invalid JSON, a
// duplicate member name anywhere, or a missing or non-string "type" wrap
// ErrMalformedEvent. Nesting deeper than maxDepth plus the envelope wraps
// ErrLimit; the values the event makes are checked against maxDepth when
// they are committed.
func parseEvent(data []byte, maxDepth int) (*jsonv.Node, string, error) {
	n, err := parseJSON(data, maxDepth+envelopeDepth)
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

// eventType is what this package does with the events of one type.
type eventType struct {
	// apply applies the event to t: it returns a fatal error, and sets
	// t.warn to skip the event. nil means the event changes nothing.
	apply func(t *txn, ev *jsonv.Node) error
	// chunks is what the event does first to the open chunk streams.
	chunks chunkEffect
}

// eventTypes is the table of the AG-UI 1.0 event types this package acts
// on. Adding an event type is adding its row. Types not in it (RAW, types
// this package does not know) change nothing and are still delivered to
// subscribers. Steps, reasoning spans and subagents change no state or
// message; the Consumer keeps them for a prelude (scopes.go).
var eventTypes = map[string]eventType{
	"STATE_SNAPSHOT":    {(*txn).stateSnapshot, closeLane},
	"STATE_DELTA":       {(*txn).stateDelta, closeLane},
	"MESSAGES_SNAPSHOT": {(*txn).messagesSnapshot, closeAll},

	"RUN_STARTED":   {(*txn).runStarted, closeAll},
	"RUN_FINISHED":  {(*txn).runFinished, closeAll},
	"RUN_ERROR":     {(*txn).runError, closeAll},
	"STEP_STARTED":  {(*txn).stepStarted, closeLane},
	"STEP_FINISHED": {(*txn).stepFinished, closeLane},

	"TEXT_MESSAGE_START":   {(*txn).textStart, closeLane},
	"TEXT_MESSAGE_CONTENT": {(*txn).textContent, closeLane},
	"TEXT_MESSAGE_END":     {(*txn).textMessageEnd, closeLane},
	"TEXT_MESSAGE_CHUNK":   {(*txn).textChunk, ownChunks},

	"REASONING_START":           {(*txn).reasoningSpanStart, closeLane},
	"REASONING_END":             {(*txn).reasoningSpanEnd, closeLane},
	"REASONING_MESSAGE_START":   {(*txn).reasoningStart, closeLane},
	"REASONING_MESSAGE_CONTENT": {(*txn).reasoningContent, closeLane},
	"REASONING_MESSAGE_END":     {(*txn).reasoningEnd, closeLane},
	"REASONING_MESSAGE_CHUNK":   {(*txn).reasoningChunk, ownChunks},
	"REASONING_ENCRYPTED_VALUE": {(*txn).encryptedValue, keepChunks},

	// Pre-1.0 events, read as their REASONING_* equivalents (legacy.go).
	"THINKING_START":                {(*txn).thinkingStart, closeLane},
	"THINKING_END":                  {(*txn).thinkingEnd, closeLane},
	"THINKING_TEXT_MESSAGE_START":   {(*txn).thinkingMessageStart, closeLane},
	"THINKING_TEXT_MESSAGE_CONTENT": {(*txn).thinkingMessageContent, closeLane},
	"THINKING_TEXT_MESSAGE_END":     {(*txn).thinkingMessageEnd, closeLane},

	"TOOL_CALL_START":  {(*txn).toolStart, closeLane},
	"TOOL_CALL_ARGS":   {(*txn).toolArgs, closeLane},
	"TOOL_CALL_END":    {(*txn).toolEnd, closeLane},
	"TOOL_CALL_RESULT": {(*txn).toolResult, closeLane},
	"TOOL_CALL_CHUNK":  {(*txn).toolChunk, ownChunks},

	"ACTIVITY_SNAPSHOT": {(*txn).activitySnapshot, keepChunks},
	"ACTIVITY_DELTA":    {(*txn).activityDelta, keepChunks},

	"CUSTOM":            {nil, closeLaneLoosely},
	"SUBAGENT_STARTED":  {(*txn).subagentStarted, keepChunks},
	"SUBAGENT_FINISHED": {(*txn).subagentEnded, closeNamedLane},
	"SUBAGENT_ERROR":    {(*txn).subagentEnded, closeNamedLane},
}

// dispatch applies one parsed event to t, as its row in eventTypes says,
// once the run lifecycle allows it. It returns a fatal error; a warning
// goes to t.warn.
func (t *txn) dispatch(ev Event) error {
	if err := t.checkLifecycle(ev.Type); err != nil {
		return err
	}
	typ := eventTypes[ev.Type]
	if err := t.closeChunks(typ.chunks, ev.v); err != nil {
		return err
	}
	if typ.apply == nil {
		return nil
	}
	return typ.apply(t, ev.v)
}

// parseJSON parses an event or run input, wrapping ErrLimit when it nests
// deeper than maxDepth and ErrMalformedEvent when it is not JSON. Small
// containers are packed from the depth packDepth chooses.
func parseJSON(data []byte, maxDepth int) (*jsonv.Node, error) {
	n, err := jsonv.ParseFrom(data, maxDepth, packDepth(data))
	switch {
	case errors.Is(err, jsonv.ErrTooDeep):
		return nil, fmt.Errorf("%w: %w", ErrLimit, err)
	case err != nil:
		return nil, fmt.Errorf("%w: %w", ErrMalformedEvent, err)
	}
	return n, nil
}
