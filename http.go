// RunAgent: one run of an agent over the AG-UI HTTP transport.

package aguistate

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
)

// RunAgent runs one run of an agent over the AG-UI HTTP transport. It POSTs
// input to url as JSON, with Accept: text/event-stream, and applies the
// response body with [Consumer.Run]. A nil client means
// [http.DefaultClient].
//
// It does not load input into c. Build input with [Consumer.NextInput], or
// call [Consumer.StartRun] first, so that the run's deltas apply to the
// state the agent starts from. A 2xx body is read in any framing that
// [ReadEvents] reads, whatever its Content-Type. The body must end after a
// RUN_FINISHED or RUN_ERROR event (AG-UI run lifecycle). A RUN_ERROR ends
// a failed run but is not a transport failure: RunAgent returns nil, and a
// subscriber sees the event.
//
// On error, c holds the whole events that arrived before the failure:
//   - a *[HTTPError] for a status other than 2xx (c unchanged);
//   - an error wrapping [io.ErrUnexpectedEOF] when the body ends without
//     RUN_FINISHED or RUN_ERROR;
//   - an error wrapping ctx's error when ctx ends, even during a read that
//     blocks;
//   - an *[EventError] for a fatal event, or for a failed read of the body
//     (the transport's error, such as io.ErrUnexpectedEOF, in the chain);
//   - the client's error when the request cannot be sent, or the error of
//     [RunAgentInput.MarshalJSON].
//
// It never reconnects or retries: the README explains why.
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
		return apiError(fmt.Errorf("run request: %w", err))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := client.Do(req)
	if err != nil {
		return apiError(fmt.Errorf("run request: %w", err))
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
			return apiError(fmt.Errorf("run stopped: %w", ctxErr))
		}
		return err
	}
	if !ended.Load() {
		return errNoRunEnd
	}
	return nil
}
