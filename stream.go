// Streams: reading events from an io.Reader, and applying them.

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

// ReadEvents returns an iterator over the JSON text of each event in r. The
// first byte of r picks the framing, after an optional UTF-8 byte order
// mark and white space:
//
//   - "[": one JSON array of events (RFC 8259), read an element at a time.
//   - "{": JSON Lines, one event per line.
//   - anything else: server-sent events (WHATWG HTML section 9.2.6). Lines
//     end in LF, CR or CRLF, and the data lines of an event are joined
//     with "\n". Comments and the id, event and retry fields are ignored.
//     An event cut short by EOF is dropped.
//
// It yields each event's text with a nil error. It stops at the first
// error, which it yields once with nil text. EOF is not an error. It never
// reconnects or retries. The text is valid until the next step. An event
// whose text is only white space (an SSE keep-alive) is passed over. The
// text is not checked: [Consumer.Apply] does that.
//
// An event longer than opts.MaxEventSize gives an *[EventError] wrapping
// [ErrLimit], and so does an element of a JSON array nested more than
// 10,000 deep. Broken JSON array framing gives one wrapping
// [ErrMalformedEvent], with encoding/json's *json.SyntaxError in the chain.
// An error from r is wrapped as it is. Positions count the events of r,
// from 1.
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

// Run applies each event of r, framed as [ReadEvents] says, with
// [Consumer.Apply]. It returns nil at EOF. It returns the first fatal
// error, an *[EventError] whose position counts the events given to the
// Consumer. Skipped events are reported to subscribers and do not stop it.
// It checks ctx before each event and returns ctx.Err() once ctx is done.
// To stop a read that blocks, close r; an HTTP response body closes when
// its request's context ends.
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
