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

// parseEvent reads one event in the AG-UI wire form: a JSON object with a
// string "type" and camelCase fields. Invalid JSON, a duplicate member name
// anywhere, nesting deeper than maxDepth, or a missing or non-string "type"
// wrap ErrMalformedEvent. It returns the type even with an error when the
// event got far enough to have one.
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

// field returns the event's member name, failing with ErrMalformedEvent when
// it is absent.
func field(ev *jsonv.Node, name string) (*jsonv.Node, error) {
	v := ev.Get(name)
	if v == nil {
		return nil, fmt.Errorf("%w: %q is missing", ErrMalformedEvent, name)
	}
	return v, nil
}
