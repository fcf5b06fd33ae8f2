// The errors the package returns: its sentinels, its typed errors, and the
// one place that gives a message the "aguistate: " prefix.

package aguistate

import (
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/aguistate/aguistate/internal/jsonv"
)

// Sentinel errors, one per way a caller reacts. Match them with
// [errors.Is]. Their text has no prefix: the errors that wrap them add it.
// Do not depend on the text of any error.
var (
	// ErrMalformedEvent reports input that breaks the AG-UI or RFC 6902
	// schema: invalid JSON, a duplicate member name, a missing or mistyped
	// field, a structurally malformed patch (with a *[PatchError]), or
	// malformed messages. The event is fatal: processing stops.
	ErrMalformedEvent = sentinel("malformed event")

	// ErrLimit reports input that would take the Consumer past one of the
	// limits in [Options]. It is fatal. [Consumer.RunTools] returns it too,
	// after [RunOptions].MaxRuns runs that left tool calls for the client.
	ErrLimit = sentinel("limit exceeded")

	// ErrPatchFailed reports a well-formed patch that does not apply (RFC
	// 6902 section 5). It is a warning: the event is skipped. A failed
	// STATE_DELTA also marks the state diverged until the next snapshot.
	ErrPatchFailed = sentinel("patch failed to apply")

	// ErrNoTarget reports an event that names a message or tool call that
	// does not exist or cannot take it: a message of a role its events do
	// not write (the write rule, docs/semantics.md), the result of another tool
	// call, a construct that is not open, or a replayed start. It is a
	// warning: the event is skipped.
	ErrNoTarget = sentinel("no message or tool call to apply the event to")

	// ErrStateRejected reports a state that [Options].ValidateState refused.
	// For an event it is a warning: the event is skipped and the state
	// marked diverged (a RUN_STARTED still starts its run, without its
	// input's state). StartRun and Restore return it.
	ErrStateRejected = sentinel("state rejected")

	// ErrRunInProgress reports a [Consumer.RunAgent], [Consumer.Follow] or
	// [Consumer.FollowThread] called while another of them is streaming
	// into the same Consumer.
	// Nothing was sent: wait for the first call to return.
	ErrRunInProgress = sentinel("a run is in progress on this Consumer")

	// ErrThreadMismatch reports a [RunOptions].ThreadID that is not the id
	// of the thread the Consumer holds ([Consumer.ThreadID]). Nothing was
	// sent: a Consumer holds one thread, so use a new one for another.
	ErrThreadMismatch = sentinel("thread id mismatch")

	// ErrProtocolVersion reports a producer that speaks another version of
	// AG-UI than [ProtocolVersion]: an event of a version before 1.0 read
	// as its 1.0 equivalent, as the reference client's runAgent reads it
	// (THINKING_* events, a REASONING_MESSAGE_START with the role
	// "assistant"), or a RUN_STARTED that declares a newer major version.
	// It is a warning, and the only one whose event applies: log it.
	ErrProtocolVersion = sentinel("another protocol version")
)

// Kinds of failure that name themselves in messages but that a caller
// handles as one of the sentinels, or not at all.
var (
	errMalformedPatch    = kindOf(ErrMalformedEvent, "malformed patch")
	errMalformedMessages = kindOf(ErrMalformedEvent, "malformed messages")
	errBadCheckpoint     = kindOf(nil, "not a checkpoint")
	errDecode            = kindOf(nil, "cannot decode")
)

// kind is an error class: it reads as its name and matches the sentinel
// it belongs to, if any.
type kind struct {
	name string
	of   error
}

func sentinel(name string) error { return &kind{name: name} }

func kindOf(of error, name string) error { return &kind{name: name, of: of} }

func (k *kind) Error() string { return k.name }

func (k *kind) Is(target error) bool { return target == k.of && k.of != nil }

// apiError gives an error that an exported function returns the package
// prefix. Every error leaves the package through it, or through the Error
// method of a typed error, so the prefix appears once.
func apiError(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("aguistate: %w", err)
}

// EventError reports a fatal or skipped event of a stream. It wraps a
// *[PatchError] or a sentinel error. Use [errors.As] to get it.
type EventError struct {
	// Position is the event's position, as [Event].Position counts it.
	Position int
	// Type is the event's "type" member, or "" when it has none.
	Type string
	// Err is the cause.
	Err error
}

// Error returns "aguistate: event N (TYPE): cause". An event that is not a
// JSON object with a string "type" (invalid JSON, too deep, too large) has
// no type to name: its text is "aguistate: event N: cause". Do not depend
// on the text.
func (e *EventError) Error() string {
	if e.Type == "" { // the event was not read far enough to have one
		return fmt.Sprintf("aguistate: event %d: %v", e.Position, e.Err)
	}
	return fmt.Sprintf("aguistate: event %d (%s): %v", e.Position, jsonv.Shorten(e.Type), e.Err)
}

// Unwrap returns the cause.
func (e *EventError) Unwrap() error { return e.Err }

// PatchError reports the operation of an RFC 6902 patch that is malformed
// or does not apply. It wraps [ErrMalformedEvent], [ErrPatchFailed] or
// [ErrLimit], and always sits inside an *[EventError]. Use [errors.As] to
// get it.
type PatchError struct {
	// Index is the operation's index in the patch array, from 0.
	Index int
	// Op is the operation's "op" member as sent, or "" when it has none.
	Op string
	// Path and From are the operation's JSON Pointers as sent, or "".
	Path, From string
	// Err is the cause.
	Err error
}

// Error returns `operation I (OP "PATH"): cause`, with `from "FROM" to`
// before the path for move and copy. Long values are cut short. It has no
// prefix: the *EventError around it gives one. Do not depend on the text.
func (e *PatchError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "operation %d", e.Index)
	if e.Op != "" {
		fmt.Fprintf(&b, " (%s", jsonv.Shorten(e.Op))
		if e.From != "" || e.Op == "move" || e.Op == "copy" {
			fmt.Fprintf(&b, " from %s to", jsonv.Quote(e.From))
		}
		fmt.Fprintf(&b, " %s)", jsonv.Quote(e.Path))
	}
	return b.String() + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *PatchError) Unwrap() error { return e.Err }

// maxErrorBody is how many bytes of a non-2xx response body an [HTTPError]
// keeps.
const maxErrorBody = 512

// HTTPError reports a run request that the agent answered with something
// other than an event stream: a status other than 2xx, or a 2xx response
// whose Content-Type is not one of an event stream (an HTML error page, for
// example). [Consumer.RunAgent] returns it; use [errors.As] to get it. The
// Consumer holds nothing of the response.
type HTTPError struct {
	StatusCode  int    // the status code, such as 500
	Status      string // the status line, such as "500 Internal Server Error"
	ContentType string // the Content-Type header, as sent
	Body        string // at most the first 512 bytes of the body, as sent
}

// Error returns "aguistate: agent answered STATUS: BODY", with "with
// Content-Type TYPE, not an event stream" after the status when it is
// 2xx, and the body trimmed of white space (no ": BODY" when it is empty).
// Do not depend on the text.
func (e *HTTPError) Error() string {
	status := e.Status
	if status == "" {
		status = fmt.Sprintf("%d %s", e.StatusCode, http.StatusText(e.StatusCode))
	}
	msg := "aguistate: agent answered " + status
	if e.StatusCode >= 200 && e.StatusCode <= 299 {
		msg += " with Content-Type " + jsonv.Quote(e.ContentType) + ", not an event stream"
	}
	if body := strings.ToValidUTF8(strings.TrimSpace(e.Body), "\uFFFD"); body != "" {
		msg += ": " + body
	}
	return msg
}

// RunError reports a run that the agent ended with a RUN_ERROR event (AG-UI
// run lifecycle). The stream was well formed and the thread holds all of
// it; the run failed. [Consumer.RunAgent] returns it; use [errors.As] to
// get it.
type RunError struct {
	Message string  // the event's "message"
	Code    string  // the event's "code", or "" when it has none
	Usage   []Usage // the tokens the run used before it failed, or nil
}

// Error returns "aguistate: run failed: MESSAGE", with " (code CODE)" when
// there is a code. Do not depend on the text.
func (e *RunError) Error() string {
	msg := "aguistate: run failed: " + jsonv.Shorten(e.Message)
	if e.Code != "" {
		msg += " (code " + jsonv.Shorten(e.Code) + ")"
	}
	return msg
}

// errStreaming is the error of a RunAgent or Follow that another is
// streaming into the same Consumer.
var errStreaming = apiError(fmt.Errorf("%w: RunAgent and Follow take one call at a time", ErrRunInProgress))

// errNoRunEnd reports a run's stream that ended cleanly but without saying
// that the run ended. It wraps io.ErrUnexpectedEOF, as a body cut short
// does.
var errNoRunEnd = apiError(unexpectedEOF("the stream ended before RUN_FINISHED or RUN_ERROR"))

// unexpectedEOF is an error with its own text that wraps io.ErrUnexpectedEOF.
type unexpectedEOF string

func (e unexpectedEOF) Error() string { return string(e) }
func (e unexpectedEOF) Unwrap() error { return io.ErrUnexpectedEOF }
