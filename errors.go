package aguistate

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Match them with [errors.Is]; the typed errors below wrap
// them and carry the position. Do not depend on the text of error messages.
var (
	// ErrMalformedEvent reports an event that is not a JSON object with a
	// string "type", that holds invalid JSON or an object with a duplicate
	// member name, or whose fields do not have the types the AG-UI event
	// schema gives them. It is fatal: processing stops.
	ErrMalformedEvent = errors.New("aguistate: malformed event")

	// ErrMalformedPatch reports a STATE_DELTA (or ACTIVITY_DELTA) whose patch
	// is not a structurally valid RFC 6902 document (RFC 6902 sections 3 and
	// 4). It is fatal, as the spec's Error Handling section says.
	ErrMalformedPatch = errors.New("aguistate: malformed patch")

	// ErrPatchFailed reports a well-formed patch that could not be applied
	// (RFC 6902 section 5). It is a warning: the event is skipped and nothing
	// changes. A failed STATE_DELTA also marks the state as diverged until
	// the next STATE_SNAPSHOT or run input state; a failed ACTIVITY_DELTA
	// does not.
	ErrPatchFailed = errors.New("aguistate: patch failed to apply")

	// ErrNoTarget reports an event that names a message or tool call that
	// does not exist or cannot take the event, such as a TEXT_MESSAGE_CONTENT
	// for an unknown message id or a text event naming an activity message.
	// It is a warning: the event is skipped and nothing changes.
	ErrNoTarget = errors.New("aguistate: no message or tool call to apply the event to")

	// ErrMalformedMessages reports a MESSAGES_SNAPSHOT (or run input) whose
	// messages cannot be reconciled: not an array, a message that is not an
	// object, an id that is missing or not a non-empty string, a role that is
	// missing or not a string, or two messages with one id. It is fatal.
	ErrMalformedMessages = errors.New("aguistate: malformed messages")

	// ErrLimit reports an event that would take the Consumer past one of
	// the limits in [Options]: the size of an event, the nesting depth of
	// any JSON value, the operations in one patch, the size of the state,
	// the number of messages, or the size of one message. It is fatal.
	ErrLimit = errors.New("aguistate: limit exceeded")

	// ErrBadCheckpoint reports data given to [Restore] that is not a
	// checkpoint made by [Consumer.Checkpoint].
	ErrBadCheckpoint = errors.New("aguistate: not a checkpoint")

	// ErrStateRejected reports a candidate state that
	// [Options.ValidateState] refused. It is a warning: the event is
	// skipped and the state marked diverged, as for ErrPatchFailed.
	ErrStateRejected = errors.New("aguistate: state rejected")

	// ErrDecode reports a value that cannot be decoded into the Go value
	// given to [Value.Decode]: a JSON Pointer that names nothing, a member
	// that names no struct field, a value of the wrong type, or a number
	// that would be rounded; or text given to [Value.UnmarshalJSON] that is
	// not strict JSON. It concerns the reader, not the stream: the Consumer
	// is unaffected.
	ErrDecode = errors.New("aguistate: cannot decode value")
)

// EventError reports a failure in one event of a stream. It wraps a
// [*PatchError] or one of the sentinel errors; use [errors.As] to get it and
// [errors.Is] to classify it.
type EventError struct {
	// Index is the event's position among the events given to the Consumer,
	// counted from 1.
	Index int
	// Type is the event's "type" field, or "" when the event has none.
	Type string
	// Err is the cause.
	Err error
}

// Error returns "aguistate: event N (TYPE): cause" ("aguistate: event N:
// cause" when the event has no type). Do not depend on the text.
func (e *EventError) Error() string {
	if e.Type == "" { // the event was not read far enough to have one
		return fmt.Sprintf("aguistate: event %d: %s", e.Index, trim(e.Err))
	}
	return fmt.Sprintf("aguistate: event %d (%s): %s", e.Index, e.Type, trim(e.Err))
}

// Unwrap returns the cause.
func (e *EventError) Unwrap() error { return e.Err }

// PatchError reports the operation of an RFC 6902 patch that is malformed
// or fails to apply. It wraps [ErrMalformedPatch] or [ErrPatchFailed]; use
// [errors.As] to get it.
type PatchError struct {
	// Index is the operation's position in the patch, counted from 0.
	Index int
	// Op is the operation's "op" member ("add", "remove", "replace", "move",
	// "copy" or "test"), or "" when it has none.
	Op string
	// Path and From are the operation's JSON Pointers as sent ("" when absent).
	Path, From string
	// Err is the cause, wrapping ErrMalformedPatch or ErrPatchFailed.
	Err error
}

// Error returns "aguistate: operation I (OP "PATH"): cause", with
// `from "FROM" to` before the path for move and copy. Do not depend on the
// text.
func (e *PatchError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "aguistate: operation %d", e.Index)
	if e.Op != "" {
		fmt.Fprintf(&b, " (%s", e.Op)
		if e.From != "" || e.Op == "move" || e.Op == "copy" {
			fmt.Fprintf(&b, " from %q to", e.From)
		}
		fmt.Fprintf(&b, " %q)", e.Path)
	}
	return b.String() + ": " + trim(e.Err)
}

// Unwrap returns the cause.
func (e *PatchError) Unwrap() error { return e.Err }

// trim drops the package prefix from a wrapped error's text so that it
// appears once, at the front.
func trim(err error) string {
	return strings.TrimPrefix(err.Error(), "aguistate: ")
}
