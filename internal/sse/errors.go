package sse

import (
	"errors"
	"strconv"
	"strings"
)

// ErrTooLarge reports that one event's payload is longer than the maxSize
// given to [Read], in bytes, or that an element of a JSON array stream
// nests more than 10,000 deep. It is never returned bare: [Read] wraps it in an
// [*Error] that names the event. Test for it with errors.Is.
var ErrTooLarge = errors.New("aguistate: payload too large")

// ErrSyntax reports that the framing of a stream is broken, so that the next
// payload cannot be found: for [FormatJSONArray], a stream that is not one
// JSON array (RFC 8259 section 5), an element that is not a JSON value, or
// non-whitespace after the closing bracket. It is never returned bare:
// [Read] wraps it in an [*Error] that names the event, and the wrapped chain
// may also hold a *encoding/json.SyntaxError with the detail. Test for it
// with errors.Is. [FormatSSE] and [FormatJSONLines] framing cannot be broken
// this way; their payloads are not checked to be JSON.
var ErrSyntax = errors.New("aguistate: syntax error")

// Error reports a framing failure at one payload of a stream. Use errors.As
// to get it from an error yielded by [Read].
//
// Event is the 1-based position of the payload that failed: the number of
// payloads yielded before the failure, plus one. Err is an error that wraps
// [ErrTooLarge] or [ErrSyntax], or it is the error returned by the
// underlying io.Reader, unchanged (never io.EOF), or, when [Read] was given
// a Format that is none of the constants, an error saying so.
//
// Do not depend on the text of Error; it may change.
type Error struct {
	Event int
	Err   error
}

// Error returns a lowercase message beginning with "aguistate: event N: ",
// for example "aguistate: event 3: payload too large: exceeds 16777216 bytes".
func (e *Error) Error() string {
	msg := "unknown error"
	if e.Err != nil {
		msg = strings.TrimPrefix(e.Err.Error(), "aguistate: ")
	}
	return "aguistate: event " + strconv.Itoa(e.Event) + ": " + msg
}

// Unwrap returns Err, so that errors.Is and errors.As see through an [*Error]
// to [ErrTooLarge], [ErrSyntax] or the reader's own error.
func (e *Error) Unwrap() error { return e.Err }
