package aguistate

import (
	"fmt"

	"github.com/aguistate/aguistate/internal/jsonv"
)

// AG-UI event types this package applies (AG-UI 1.0 event set).
const (
	typeStateSnapshot    = "STATE_SNAPSHOT"
	typeStateDelta       = "STATE_DELTA"
	typeMessagesSnapshot = "MESSAGES_SNAPSHOT"
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
// duplicate member name anywhere, nesting deeper than maxDepth, or a missing
// or non-string "type" wrap ErrMalformedEvent.
func parseEvent(data []byte, maxDepth int) (*jsonv.Node, string, error) {
	n, err := jsonv.Parse(data, maxDepth)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %w", ErrMalformedEvent, err)
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
// warning goes to t.warn. Event types without a handler change nothing.
func (t *txn) dispatch(ev Event) error {
	switch ev.Type {
	case typeStateSnapshot:
		return t.stateSnapshot(ev.v)
	case typeStateDelta:
		return t.stateDelta(ev.v)
	case typeMessagesSnapshot:
		return t.messagesSnapshot(ev.v)
	}
	return nil
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
