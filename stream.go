package aguistate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"

	"github.com/aguistate/aguistate/internal/framing"
)

// ReadEvents returns an iterator over the JSON text of each event in r,
// which holds an AG-UI event stream in one of three framings, told apart by
// its first byte (after an optional UTF-8 byte order mark and white space):
//
//   - "[": one JSON array of events (RFC 8259), read one element at a time;
//   - "{": JSON Lines, one event per line;
//   - anything else: server-sent events (text/event-stream, WHATWG HTML
//     section 9.2.6): LF, CR or CRLF line ends, "data:" with or without a
//     space, multi-line data joined with "\n", comments and the id, event
//     and retry fields ignored, and a partial event at EOF dropped.
//
// The contract: it yields each event's text with a nil error; it stops at
// the first error, which it yields once with nil text; io.EOF is not an
// error, the iteration just ends. It never yields text together with an
// error, and it does not reconnect or retry. The text is valid only until
// the next step. An element of a JSON array stream may nest at most 10,000
// deep (a deeper MaxDepth applies to the other framings only). Events
// whose text is empty or white space (an SSE
// "data:" line with nothing after it, sent to keep a connection open) are
// passed over. An event longer than opts.MaxEventSize bytes (default
// 16 MiB) gives an *EventError wrapping [ErrLimit]; a JSON
// array stream with broken framing gives one wrapping [ErrMalformedEvent];
// an error from r is wrapped as it is. EventError.Position counts events in r
// from 1. The text itself is not checked: [Consumer.Apply] does that.
func ReadEvents(r io.Reader, opts *Options) iter.Seq2[[]byte, error] {
	var o Options
	if opts != nil {
		o = *opts
	}
	max := o.withDefaults().MaxEventSize
	return func(yield func([]byte, error) bool) {
		for text, err := range framing.Read(r, framing.Auto, max) {
			if err != nil {
				yield(nil, framingError(err))
				return
			}
			if len(bytes.Trim(text, " \t\r\n")) == 0 { // JSON white space only
				continue // a keep-alive: an SSE event with empty data
			}
			if !yield(text, nil) {
				return
			}
		}
	}
}

// framingError turns a framing error into an *EventError, keeping its
// cause (a *json.SyntaxError, the reader's error) in the chain.
func framingError(err error) error {
	var fe *framing.Error
	if !errors.As(err, &fe) {
		return apiError(err)
	}
	ee := &EventError{Position: fe.Event, Err: fe.Err}
	switch {
	case errors.Is(err, framing.ErrTooLarge):
		ee.Err = fmt.Errorf("%w: %w", ErrLimit, fe.Err)
	case errors.Is(err, framing.ErrSyntax):
		ee.Err = fmt.Errorf("%w: %w", ErrMalformedEvent, fe.Err)
	}
	return ee
}

// Run reads an event stream from r (framed as [ReadEvents] says) and
// applies each event with [Consumer.Apply] until EOF, which is success, or
// the first fatal error, which it returns as an *EventError whose Index
// counts the events given to this Consumer. Skipped events are reported to
// subscribers and do not stop it. It checks ctx before each event and
// returns ctx.Err() once ctx is done; to interrupt a read that blocks, close
// r (an HTTP response body closes when its request's context ends).
func (c *Consumer) Run(ctx context.Context, r io.Reader) error {
	for text, err := range ReadEvents(r, &c.opts) {
		if err != nil {
			var ee *EventError
			if errors.As(err, &ee) {
				ee.Position = c.cur.Load().nextPosition()
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := c.Apply(text); err != nil {
			return err
		}
	}
	return nil
}
