// The errors Read yields: Error, ErrTooLarge and ErrSyntax.

package framing

import (
	"errors"
	"strconv"
)

// ErrTooLarge classifies an event longer than the maxSize given to [Read],
// or an element of a JSON array stream nested more than 10,000 deep. Test
// for it with errors.Is; [Read] never returns it bare.
var ErrTooLarge = errors.New("event too large")

// ErrSyntax classifies a JSON array stream whose framing is broken, so that
// the next event cannot be found: the stream is not one JSON array (RFC 8259
// section 5), an element is not a JSON value, or something other than white
// space follows the closing bracket. The chain may hold a
// *encoding/json.SyntaxError with the detail. Test for it with errors.Is;
// [Read] never returns it bare. SSE and JSON Lines framing cannot break this
// way: their events are not checked to be JSON.
var ErrSyntax = errors.New("broken framing")

// ErrGap classifies a stream that carries more bytes between two events
// than the maxGap given to [ReadFields] (see there). Test for it with
// errors.Is; [ReadFields] never returns it bare.
var ErrGap = errors.New("too many bytes without an event")

// Error reports a framing failure at one event of a stream. Use errors.As to
// get it from an error yielded by [Read].
type Error struct {
	// Event is the position of the event that failed, from 1: the number of
	// events yielded before the failure, plus one.
	Event int
	// Err wraps [ErrTooLarge], [ErrGap] or [ErrSyntax], or is io.ErrUnexpectedEOF
	// when the stream ended inside an event, or is the reader's own error
	// (never io.EOF), or says that the Format is unknown.
	Err error
}

// Error returns "event N: cause". It has no package prefix: the caller adds
// its own. Do not depend on the text.
func (e *Error) Error() string {
	msg := "unknown error"
	if e.Err != nil {
		msg = e.Err.Error()
	}
	return "event " + strconv.Itoa(e.Event) + ": " + msg
}

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// kindError is a failure of one kind (ErrTooLarge or ErrSyntax) with its own
// message, so that the kind's name is not repeated in the text.
type kindError struct {
	kind  error
	msg   string
	cause error // may be nil
}

func (e *kindError) Error() string {
	if e.cause != nil {
		return e.msg + ": " + e.cause.Error()
	}
	return e.msg
}

func (e *kindError) Is(target error) bool { return target == e.kind }

func (e *kindError) Unwrap() error { return e.cause }
