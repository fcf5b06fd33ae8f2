// Streams: reading events from an io.Reader, and applying them.

package aguistate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"

	"github.com/aguistate/aguistate/internal/framing"
)

// ReadEvents returns an iterator over the JSON text of each event in r. The
// first byte of r picks the framing, after an optional UTF-8 byte order
// mark and white space:
//
//   - "[": one JSON array of events (RFC 8259), read an element at a time.
//   - "{": JSON Lines, one event per line.
//   - anything else: server-sent events (WHATWG HTML section 9.2.6). Lines
//     end in LF, CR or CRLF, and the data lines of an event are joined
//     with "\n". Comments and the id, event and retry fields are ignored.
//
// It yields each event's text with a nil error. It stops at the first
// error, which it yields once with nil text. EOF is not an error. It never
// reconnects or retries. The text is valid until the next step. An event
// whose text is only white space (an SSE keep-alive) is passed over and not
// counted. The text is not checked: [Consumer.Apply] does that.
//
// An event longer than opts.MaxEventSize gives an *[EventError] wrapping
// [ErrLimit], and so does an element of a JSON array nested more than
// 10,000 deep. Broken JSON array framing gives one wrapping
// [ErrMalformedEvent], with encoding/json's *json.SyntaxError in the chain.
// Their positions count the events of r from 1, as [Event].Position says.
// A stream that ends inside an event (an SSE event without its blank line,
// a last JSON line that is not JSON, an array without its "]") gives an
// error wrapping [io.ErrUnexpectedEOF], and the event is not yielded. More
// than opts.MaxGapSize bytes read between two events that are no part of
// one (comments, keep-alives, blank lines, white space) give an error
// wrapping [ErrLimit]. An error from r is wrapped as it is. None of these
// is an *EventError: no event arrived.
func ReadEvents(r io.Reader, opts *Options) iter.Seq2[[]byte, error] {
	return readEvents(r, opts, nil)
}

// readEvents is ReadEvents that keeps f (when not nil) up to date with the
// SSE id and retry fields, as framing.ReadFields does.
func readEvents(r io.Reader, opts *Options, f *framing.Fields) iter.Seq2[[]byte, error] {
	var o Options
	if opts != nil {
		o = *opts
	}
	o = o.withDefaults()
	return func(yield func([]byte, error) bool) {
		if err := eachEvent(r, &o, f, func(text []byte) bool { return yield(text, nil) }); err != nil {
			yield(nil, err)
		}
	}
}

// eachEvent is readEvents without an iterator, with o's defaults set: it
// gives each event's text to each, until each returns false, and returns
// the error readEvents yields, or nil.
func eachEvent(r io.Reader, o *Options, f *framing.Fields, each func(text []byte) bool) error {
	n := 0 // events given to each
	err := framing.Each(r, framing.Auto, o.MaxEventSize, o.MaxGapSize, f, func(text []byte) bool {
		if blank(text) { // JSON white space only
			return true // a keep-alive: an SSE event with empty data
		}
		n++
		return each(text)
	})
	if err != nil {
		return framingError(err, n+1)
	}
	return nil
}

// blank reports whether text is only JSON white space, looking no further
// than its first other byte.
func blank(text []byte) bool {
	for _, c := range text {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}

// framingError turns a framing error at the event at position into an
// *EventError for an event that arrived too large or broken, keeping its
// cause (a *json.SyntaxError) in the chain. A stream cut short, and a
// failed read, are errors of the stream, not of an event.
func framingError(err error, position int) error {
	var fe *framing.Error
	if !errors.As(err, &fe) {
		return apiError(err)
	}
	switch {
	case errors.Is(fe.Err, framing.ErrTooLarge):
		return &EventError{Position: position, Err: fmt.Errorf("%w: %w", ErrLimit, fe.Err)}
	case errors.Is(fe.Err, framing.ErrGap):
		return apiError(fmt.Errorf("%w: the stream carries %w (MaxGapSize)", ErrLimit, fe.Err))
	case errors.Is(fe.Err, framing.ErrSyntax):
		return &EventError{Position: position, Err: fmt.Errorf("%w: %w", ErrMalformedEvent, fe.Err)}
	case errors.Is(fe.Err, io.ErrUnexpectedEOF):
		return apiError(fmt.Errorf("the stream was cut short inside an event: %w", fe.Err))
	}
	return apiError(fmt.Errorf("reading the stream: %w", fe.Err))
}

// Run applies each event of r, framed as [ReadEvents] says, with
// [Consumer.Apply]. It returns nil at EOF. It returns the first fatal
// error, an *[EventError] whose position counts the events of the thread
// ([Event].Position), or the error of [ReadEvents] for a stream cut short
// or a failed read. Skipped events are reported to subscribers and do not
// stop it. It checks ctx before each event, and returns ctx.Err() itself
// once ctx is done, even when a read failed because of it. To stop a read
// that blocks, close r; an HTTP response body closes when its request's
// context ends.
func (c *Consumer) Run(ctx context.Context, r io.Reader) error {
	return c.run(ctx, r, nil, func(text []byte) error {
		_, err := c.apply(text, nil)
		return err
	})
}

// run is Run, keeping f (when not nil) up to date with the SSE fields, and
// giving each event's text to step, which applies it; an error from step
// stops it.
func (c *Consumer) run(ctx context.Context, r io.Reader, f *framing.Fields, step func(text []byte) error) error {
	var stepErr error
	err := eachEvent(r, &c.opts, f, func(text []byte) bool {
		if stepErr = ctx.Err(); stepErr == nil {
			stepErr = step(text)
		}
		return stepErr == nil
	})
	switch {
	case stepErr != nil:
		return stepErr
	case err == nil:
		return nil
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr // the read failed because ctx ended
	}
	var ee *EventError
	if errors.As(err, &ee) {
		return c.reject(ee)
	}
	return err
}
