// Agent and RunAgent: one run of an agent over the AG-UI HTTP transport,
// from the thread's next input to the run's result.

package aguistate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/aguistate/aguistate/internal/jsonv"
)

// Agent is an AG-UI agent reached over HTTP: the endpoint that
// [Consumer.RunAgent] POSTs each run's input to. Set its fields before the
// first run and do not change them afterwards; one Agent then serves any
// number of Consumers (threads) at once.
type Agent struct {
	// URL is the agent's run endpoint, an http or https URL.
	URL string
	// Header is set on every run request, such as an Authorization header
	// for an agent behind auth. It goes on the request itself, so that
	// net/http drops Authorization and Cookie on a redirect to another
	// host. Content-Type and Accept are always RunAgent's own. Default:
	// none.
	Header http.Header
	// Client sends the requests. Default (nil): [http.DefaultClient].
	Client *http.Client
	// FollowCrossOrigin lets a run's POST follow a redirect to another
	// origin (scheme, host and port; RFC 6454). Default false: such a
	// redirect is an error, and neither the headers nor the run input
	// (state and messages) go to the other origin. Redirects within the
	// origin are followed as Client follows them.
	FollowCrossOrigin bool
	// Reconnects is how many times in a row [Consumer.RunAgent] and
	// [Consumer.Follow] reconnect a stream that drops before its run ends,
	// when its events carry their positions as SSE ids, as a relay's do
	// (github.com/aguistate/aguistate/relay): the request goes again with
	// the Last-Event-ID header (empty when no event came before the drop),
	// and the events after it apply, each once.
	// A stream that takes the thread past the furthest position it had
	// reached starts the count again; one that only repeats a prelude does
	// not. Default 0: never.
	Reconnects int
}

// RunOptions sets the members of a run's input that do not come from the
// thread. A nil *RunOptions means the defaults. [Consumer.NextInput] and
// [Consumer.RunAgent] read it and never change it.
type RunOptions struct {
	// ThreadID is the id of the thread, for its first run: it is used when
	// the Consumer holds no thread id yet ([Consumer.ThreadID] is ""), as
	// for a new thread whose id the application chose. Default: the
	// thread's id, or a new random UUID when it has none. When the thread
	// has an id, ThreadID must be empty or that id: RunAgent returns an
	// error wrapping [ErrThreadMismatch] and sends nothing, and NextInput
	// keeps the thread's id.
	ThreadID string
	// RunID is the new run's id. Default: a new random UUID.
	RunID string
	// ParentRunID is the run that spawned this one. Default: none.
	ParentRunID string
	// Tools, Context and ForwardedProps are JSON text sent as they are:
	// AG-UI Tool and Context arrays, and any JSON value. Defaults: [], []
	// and {}.
	Tools, Context, ForwardedProps json.RawMessage
	// Resume is JSON text: AG-UI resume entries that answer the pending
	// interrupts ([Consumer.Interrupts]), as [Consumer.Resume] builds them.
	// Default: none, which is right when no interrupt is pending.
	Resume json.RawMessage
	// MaxRuns is the most runs [Consumer.RunTools] makes in one call.
	// Default (0): 10. RunAgent and NextInput do not read it.
	MaxRuns int
}

// RunResult is how a run ended, as [Consumer.RunAgent] reports it.
type RunResult struct {
	// Outcome is the type of RUN_FINISHED's outcome (AG-UI
	// RunFinishedOutcome): "success", "interrupt" or "cancelled". An
	// outcome that is absent or of another type reads as "success", as in
	// the reference client.
	Outcome string
	// Interrupts are the interrupts pending after the run
	// ([Consumer.Interrupts]) when Outcome is "interrupt". Answer them
	// with [Consumer.Resume] in the next run.
	Interrupts []Value
	// NewMessages are the messages the run added: those held when it ended
	// whose ids the thread did not hold when it started, in thread order.
	NewMessages []Message
	// Result is RUN_FINISHED's "result", or the zero Value (null) when it
	// has none.
	Result Value
	// PendingToolCalls are the tool calls the run left for the client to
	// answer ([Consumer.PendingToolCalls]) when Outcome is "success".
	// Answer them with [ToolMessage] in the next run's messages.
	PendingToolCalls []ToolCall
	// Usage is RUN_FINISHED's token usage, one entry per provider and
	// model, or nil when it has none. A failed run's is in [RunError].
	Usage []Usage
}

// RunAgent runs the thread's next run on agent a, over the AG-UI HTTP
// transport, and returns how it ended.
//
// It builds the input with [Consumer.NextInput](opts), loads it as
// [Consumer.StartRun] does (so the run's deltas apply to the state the
// agent starts from), and POSTs it to a.URL as JSON with Accept:
// text/event-stream and a's Header. It applies the response body as
// [Consumer.Run] does, in any framing [ReadEvents] reads, as events
// arrive. The body must end after a RUN_FINISHED or RUN_ERROR event (AG-UI
// run lifecycle); the last of them, with no RUN_STARTED after it, decides
// the outcome.
//
// It returns a RunResult and a nil error when the run finished, including
// with an interrupt. Otherwise the error says why, and the RunResult still
// lists the messages that arrived. The thread holds every whole event that
// arrived before the failure. The error is:
//   - a *[RunError] when the agent ended the run with RUN_ERROR;
//   - an *[EventError] for a fatal event (see [Consumer.Apply]), such as a
//     RUN_STARTED naming another thread than the one the Consumer holds
//     (the Consumer stays on its thread; one that holds none, whose id
//     RunAgent made up, takes the agent's);
//   - an *[HTTPError] for a status other than 2xx, or a Content-Type that
//     is not an event stream (text/event-stream, application/json, JSON
//     Lines' application/jsonl or application/x-ndjson, or none); the
//     thread is then unchanged but for the run started;
//   - an error wrapping [io.ErrUnexpectedEOF] when the body ends inside an
//     event or before RUN_FINISHED or RUN_ERROR;
//   - ctx.Err() itself when ctx ends, even during a read that blocks;
//   - an error from [Consumer.StartRun] (unanswered interrupts, limits)
//     or [RunAgentInput.MarshalJSON], before anything is sent;
//   - the client's error, wrapped, when the request cannot be sent or
//     reads fail, or when a redirect to another origin was refused.
//
// Before anything is sent, it returns an error wrapping [ErrRunInProgress]
// when another RunAgent or [Consumer.Follow] is streaming into the
// Consumer, and one wrapping [ErrThreadMismatch] when opts.ThreadID is not
// the thread's id. A run that [Consumer.Running] reports but that no such
// call is streaming (one whose events came through [Consumer.Apply] or
// [Consumer.Run], or whose stream broke off) does not stop it: the new
// run's RUN_STARTED ends that run.
//
// It does not retry a request that fails. With [Agent].Reconnects set, it
// reconnects to a relay when the stream drops mid-run, as [Consumer.Follow]
// says; docs/server.md explains when that is safe.
func (c *Consumer) RunAgent(ctx context.Context, a *Agent, opts *RunOptions) (RunResult, error) {
	if a == nil {
		return RunResult{}, apiError(errors.New("RunAgent: nil *Agent"))
	}
	if !c.streaming.CompareAndSwap(false, true) {
		return RunResult{}, errStreaming
	}
	defer c.streaming.Store(false)
	body, before, err := c.startNext(opts)
	if err != nil {
		return RunResult{}, err
	}
	end, err := c.follow(ctx, a, http.MethodPost, a.URL, body, "", false)
	if errors.Is(err, errNothing) {
		err = errNoRunEnd
	}
	return c.result(before, end, err)
}

// result returns how a run ended: with end (RUN_FINISHED or RUN_ERROR, or
// the zero Event when none came), or err. before holds the messages held
// when the run started.
func (c *Consumer) result(before messageList, end Event, err error) (RunResult, error) {
	res := RunResult{NewMessages: c.newMessages(before)}
	switch {
	case err != nil:
		return res, err
	case end.Type == "":
		return res, errNoRunEnd
	case end.Type == "RUN_ERROR":
		return res, runErrorOf(end)
	}
	res.Outcome = "success"
	if o := end.v.Get("outcome"); o != nil {
		if typ := o.Get("type"); typ != nil && (typ.Text() == "interrupt" || typ.Text() == "cancelled") {
			res.Outcome = typ.Text()
		}
	}
	switch res.Outcome {
	case "interrupt":
		res.Interrupts = c.Interrupts()
	case "success":
		res.PendingToolCalls = c.PendingToolCalls()
	}
	if r := end.v.Get("result"); r != nil {
		res.Result = valueOf(r)
	}
	res.Usage, _ = readUsage(end.v) // Apply checked it
	return res, nil
}

// startNext starts the next run as RunAgent does, in one change: it builds
// the input from the view it changes, so that nothing committed between
// reading and starting is lost. It returns the input's JSON text, and the
// messages held before it.
func (c *Consumer) startNext(opts *RunOptions) ([]byte, messageList, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.cur.Load()
	if opts != nil && opts.ThreadID != "" && old.threadID != "" && opts.ThreadID != old.threadID {
		return nil, messageList{}, apiError(fmt.Errorf("%w: RunOptions.ThreadID is %s, but the thread is %s",
			ErrThreadMismatch, jsonv.Quote(opts.ThreadID), jsonv.Quote(old.threadID)))
	}
	in := old.nextInput(opts)
	body, err := in.MarshalJSON()
	if err != nil {
		return nil, messageList{}, err
	}
	if old.threadID == "" && (opts == nil || opts.ThreadID == "") {
		in.ThreadID = "" // an id nobody chose: the agent's RUN_STARTED names the thread
	}
	if err := c.startLocked(old, in); err != nil {
		return nil, messageList{}, err
	}
	return body, old.messages, nil
}

// newMessages returns the held messages with an id that before does not
// hold.
func (c *Consumer) newMessages(before messageList) []Message {
	var out []Message
	for m := range c.cur.Load().messages.All() {
		if _, _, held := before.Get(m.id); m.id != "" && !held {
			out = append(out, m)
		}
	}
	return out
}

// runErrorOf reads a RUN_ERROR event, which Apply checked: "message" is a
// string, "code" an optional one.
func runErrorOf(ev Event) *RunError {
	e := &RunError{Message: ev.v.Get("message").Text()}
	if code := ev.v.Get("code"); code != nil && code.Kind() == jsonv.String {
		e.Code = code.Text()
	}
	e.Usage, _ = readUsage(ev.v)
	return e
}

// Post sends a run's input, the JSON text of a RunAgentInput, to a.URL as
// [Consumer.RunAgent] sends it, and returns the agent's answer when it is
// an event stream; the caller reads it (with [ReadEvents]) and closes its
// body. It is the one HTTP path to an agent: a relay
// (github.com/aguistate/aguistate/relay) calls its agent through it too.
//
// The request is a POST with Content-Type: application/json, Accept:
// text/event-stream, a.Header, and header's fields, which replace a.Header's
// of the same name (a per-request header, such as the end user's
// credentials); Content-Type and Accept are always Post's own. Redirects
// are followed as [Agent].FollowCrossOrigin says. It does not retry.
//
// The error is an *[HTTPError] (the body closed) for a status other than
// 2xx or a Content-Type that is not an event stream, as RunAgent returns
// it; ctx.Err() itself when ctx ends; or the client's error, wrapped, when
// the request fails or a redirect to another origin was refused. A 204 No
// Content answer is returned as a stream with no event.
func (a *Agent) Post(ctx context.Context, input []byte, header http.Header) (*http.Response, error) {
	if a == nil {
		return nil, apiError(errors.New("Post: nil *Agent"))
	}
	return a.send(ctx, http.MethodPost, a.URL, input, "", header)
}

// send sends one request for an event stream to url: a POST of body when
// it is not nil, else a GET, with Last-Event-ID lastID unless it is "", and
// a.Header and header (see Post). It returns the answer when it is an event
// stream: 2xx with a Content-Type RunAgent reads, or 204 No Content.
func (a *Agent) send(ctx context.Context, method, url string, body []byte, lastID string, header http.Header) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return nil, apiError(fmt.Errorf("run request: %w", err))
	}
	req.Header = a.Header.Clone()
	if req.Header == nil {
		req.Header = make(http.Header, len(header)+3)
	}
	for name, values := range header {
		req.Header[http.CanonicalHeaderKey(name)] = values
	}
	req.Header.Del("Content-Type")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := a.client().Do(req)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		return nil, apiError(fmt.Errorf("run request: %w", err))
	}
	ct := resp.Header.Get("Content-Type")
	if resp.StatusCode == http.StatusNoContent {
		return resp, nil
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 || !isEventStream(ct) {
		excerpt, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		resp.Body.Close()
		return nil, &HTTPError{StatusCode: resp.StatusCode, Status: resp.Status, ContentType: ct, Body: string(excerpt)}
	}
	return resp, nil
}

// client returns the client that sends a's requests: a's Client (or
// http.DefaultClient), made to refuse a redirect to another origin unless
// a.FollowCrossOrigin is set. The caller's client is never changed.
func (a *Agent) client() *http.Client {
	client := a.Client
	if client == nil {
		client = http.DefaultClient
	}
	if a.FollowCrossOrigin {
		return client
	}
	own := *client
	next := client.CheckRedirect
	own.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if !sameOrigin(req.URL, via[0].URL) {
			return fmt.Errorf("%w (to %s://%s); set Agent.FollowCrossOrigin to follow it",
				errCrossOrigin, req.URL.Scheme, req.URL.Host)
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 { // net/http's default policy
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &own
}

// errCrossOrigin is the reason a redirect to another origin was refused.
var errCrossOrigin = errors.New("redirect to another origin refused")

// sameOrigin reports whether u and v have the same origin: scheme, host and
// port, with the scheme's default port when none is given (RFC 6454
// section 4).
func sameOrigin(u, v *url.URL) bool {
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		if strings.EqualFold(u.Scheme, "https") {
			return "443"
		}
		return "80"
	}
	return strings.EqualFold(u.Scheme, v.Scheme) && strings.EqualFold(u.Hostname(), v.Hostname()) && port(u) == port(v)
}

// isEventStream reports whether a response's Content-Type is one that
// RunAgent reads: an SSE stream, a JSON array, JSON Lines, or none given.
func isEventStream(contentType string) bool {
	if contentType == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	switch mt {
	case "text/event-stream", "application/json", "application/jsonl", "application/x-ndjson":
		return true
	}
	return false
}
