package aguistate

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
)

// RunAgent runs one run of an agent with the AG-UI HTTP transport: it POSTs
// input as JSON (Content-Type: application/json, Accept: text/event-stream;
// the body is [RunAgentInput.MarshalJSON]'s output) to url, and applies the
// response body to c with [Consumer.Run]. A nil client means
// [http.DefaultClient].
//
// RunAgent does not load input into c: build input with [Consumer.NextInput]
// from c, or call [Consumer.StartRun] first, so that the run's deltas apply
// to the state the agent starts from. It subscribes to c for the duration
// of the call (see [Consumer.Subscribe]) and returns once the body ends.
//
// A 2xx response is read whatever its Content-Type: an SSE body is what the
// transport specifies, but JSON Lines and a JSON array of events work too,
// as [ReadEvents] tells them apart by their first byte. A run's stream is
// complete only when it says so, so the body must end after a RUN_FINISHED
// or RUN_ERROR event (AG-UI run lifecycle). A RUN_ERROR is the protocol's
// way to end a failed run, not a transport failure: RunAgent returns nil
// after it, and callers learn of it from the [Change] whose Event.Type is
// "RUN_ERROR" (subscribe before calling) or from the events they keep.
//
// Errors, all with c holding exactly the whole events that arrived before
// the failure:
//   - a *[HTTPError] for a status other than 2xx (c unchanged);
//   - an error wrapping [io.ErrUnexpectedEOF] when the body ends without a
//     RUN_FINISHED or RUN_ERROR event;
//   - an error wrapping context.Canceled or context.DeadlineExceeded when
//     ctx ends: the request carries ctx, so that aborts it and closes the
//     body, even while a read blocks;
//   - an *[EventError] for a fatal event or a failure reading the body
//     (a connection cut mid-event wraps the transport's error, such as
//     io.ErrUnexpectedEOF); an event cut short is never applied;
//   - the client's error, wrapped, when the request cannot be sent, and an
//     error when input does not marshal.
//
// It uses this package's own SSE reader (see [ReadEvents]) rather than an
// EventSource-style client: an AG-UI run is one POST whose response is read
// once, with no reconnection, so the EventSource model (a GET that is
// reopened with Last-Event-ID after a drop) does not fit and would replay
// or duplicate events into the Consumer. The reader follows the WHATWG
// event-stream rules exactly and caps each event at [Options].MaxEventSize,
// so a hostile or broken agent cannot make it buffer without bound. It does
// not retry: a dropped run is reported, and starting another is the
// caller's decision.
func (c *Consumer) RunAgent(ctx context.Context, client *http.Client, url string, input RunAgentInput) error {
	if client == nil {
		client = http.DefaultClient
	}
	body, err := input.MarshalJSON()
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("aguistate: run request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("aguistate: run request: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		excerpt, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return &HTTPError{StatusCode: resp.StatusCode, Status: resp.Status, Body: string(excerpt)}
	}

	var ended atomic.Bool
	cancel := c.Subscribe(func(ch Change) {
		if ch.Event.Type == "RUN_FINISHED" || ch.Event.Type == "RUN_ERROR" {
			ended.Store(true)
		}
	})
	err = c.Run(ctx, resp.Body)
	cancel()
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			// The body was closed because ctx ended: that is the cause.
			return fmt.Errorf("aguistate: run stopped: %w", ctxErr)
		}
		return err
	}
	if !ended.Load() {
		return errNoRunEnd
	}
	return nil
}
