// Following a thread over HTTP: the request of a run or of a relay's
// events, applied as it streams, and reconnected with Last-Event-ID when
// it drops mid-run.

package aguistate

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	neturl "net/url"
	"strconv"
	"time"

	"github.com/aguistate/aguistate/internal/framing"
	"github.com/aguistate/aguistate/internal/jsonv"
)

// Follow joins the thread at url, a relay's events URL (such as GET
// /threads/{threadId}/events of github.com/aguistate/aguistate/relay), and
// applies its events until the run in progress ends, as [Consumer.RunAgent]
// applies a run's. The request is a GET with Accept: text/event-stream,
// a's Header, and the Last-Event-ID of the last event the Consumer applied
// from such a stream, which the checkpoint keeps: the relay sends the
// events after it, or a prelude ([Consumer.Prelude]) that brings the
// Consumer to the thread's last event. A Consumer that never followed one
// gets the prelude. An answer that begins with a prelude (its first event
// has an empty id) replaces the thread the Consumer holds with the one the
// prelude makes, in one [Change] with the zero Event, once the prelude's
// last event (the one with an id) has come. a.URL is not used.
//
// It returns how the run ended, as RunAgent does, with the messages added
// since the call began; the zero RunResult and a nil error when the relay
// has nothing to send (204 No Content: no run is in progress and the
// Consumer has every event). It reconnects as a.Reconnects allows: it waits
// the stream's SSE retry time (1 s when it sent none), doubled after each
// reconnect that takes the thread no further, at most 30 s. It reconnects
// only when the ids are positions (decimal integers), and fails, applying
// nothing, when the answer does not go on after the Last-Event-ID sent
// (its first event's id must be the next position, or empty, for a
// prelude). It
// returns an error wrapping [ErrRunInProgress], sending nothing, while
// another Follow or [Consumer.RunAgent] is streaming into the Consumer.
func (c *Consumer) Follow(ctx context.Context, a *Agent, url string) (RunResult, error) {
	if a == nil {
		return RunResult{}, apiError(errors.New("Follow: nil *Agent"))
	}
	if !c.streaming.CompareAndSwap(false, true) {
		return RunResult{}, errStreaming
	}
	defer c.streaming.Store(false)
	v := c.cur.Load()
	end, err := c.follow(ctx, a, http.MethodGet, url, nil, v.eventID, false)
	if errors.Is(err, errNothing) {
		return RunResult{}, nil
	}
	return c.result(v.messages, end, err)
}

// FollowThread follows the thread at url, a relay's events URL, across
// runs: it is [Consumer.Follow] with the query parameter follow=thread
// added to url, which asks the relay (github.com/aguistate/aguistate/relay)
// to keep the stream open between runs and before the thread's first,
// with keep-alive comments, and to send every later run's events,
// whichever client or relay runs it. It applies them as they come; read
// the thread with [Consumer.State], [Consumer.Messages] and
// [Consumer.Subscribe] meanwhile. The join is Follow's: the events after
// the Last-Event-ID of the last event the Consumer applied from a relay,
// or a prelude.
//
// It reconnects whenever the stream ends or drops (a relay that stops,
// a proxy's timeout), with Last-Event-ID, never missing or doubling an
// event: it waits the stream's SSE retry time (1 s when it sent none),
// doubled after each reconnect that takes the thread no further, at most
// 30 s. A request that fails with a network error or a status of 500 or
// more is tried again the same way; a.Reconnects is not used.
//
// It returns nil when the relay answers 204 No Content, which it does
// once the thread is deleted; ctx.Err() when ctx ends; and otherwise the
// first error that stops it: an *[HTTPError] for a status of 400 to 499
// (401, 403: the relay's Authorize hook refused), an *[EventError] for an
// event that does not apply, and an error when the ids are not positions
// or a reconnect's answer does not go on after its Last-Event-ID. It
// returns an error wrapping [ErrRunInProgress], sending nothing, while
// another Follow, FollowThread or [Consumer.RunAgent] is streaming into
// the Consumer.
func (c *Consumer) FollowThread(ctx context.Context, a *Agent, url string) error {
	if a == nil {
		return apiError(errors.New("FollowThread: nil *Agent"))
	}
	u, err := neturl.Parse(url)
	if err != nil {
		return apiError(fmt.Errorf("FollowThread: %w", err))
	}
	q := u.Query()
	q.Set("follow", "thread")
	u.RawQuery = q.Encode()
	if !c.streaming.CompareAndSwap(false, true) {
		return errStreaming
	}
	defer c.streaming.Store(false)
	_, err = c.follow(ctx, a, http.MethodGet, u.String(), nil, c.cur.Load().eventID, true)
	if errors.Is(err, errNothing) {
		return nil
	}
	return err
}

// errNothing reports a 204 No Content answer: nothing to follow.
var errNothing = errors.New("nothing to follow")

// errNotResumed reports a reconnect answered with a stream that does not
// go on where the last one stopped.
var errNotResumed = errors.New("the stream does not go on after Last-Event-ID")

// adopt makes c hold the thread that p, given a whole prelude, holds: a
// prelude restates the thread, and a MESSAGES_SNAPSHOT alone would keep
// messages c holds where they are, before those it adds. It is one change,
// with the zero Event, and the prelude's events count as given to c.
func (c *Consumer) adopt(p *Consumer) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	defer c.done()
	old, v := c.cur.Load(), *p.cur.Load()
	t := c.begin(old)
	for m := range old.messages.All() {
		if _, _, kept := v.messages.Get(m.id); m.id == "" || !kept {
			t.removed = append(t.removed, m.id)
		}
	}
	for m := range v.messages.All() {
		switch h, _, held := old.messages.Get(m.id); {
		case m.id == "" || !held:
			t.added = append(t.added, m.id)
		case !jsonv.Equal(h.v, m.v):
			t.replaced = append(t.replaced, m.id)
		}
	}
	v.events = old.events + v.events
	*t.next = v
	return apiError(c.commitLocal(t))
}

// maxReconnectWait is the longest wait before a reconnect.
const maxReconnectWait = 30 * time.Second

// reconnectWait returns the wait before a reconnect after tries reconnects
// that took the thread no further: the stream's retry (1 s when it gave none),
// doubled per try, at most maxReconnectWait.
func reconnectWait(retry time.Duration, tries int) time.Duration {
	wait := retry
	if wait <= 0 {
		wait = time.Second
	}
	for ; tries > 0 && wait < maxReconnectWait; tries-- {
		wait *= 2
	}
	return min(wait, maxReconnectWait)
}

// follow sends the request (method, url, body) to a, applies the events of
// its answer, and reconnects as a.Reconnects allows, until the stream ends
// after the run's end; with thread, it reconnects whenever the stream ends
// (see FollowThread). lastID is the Last-Event-ID of the first request,
// or "" for none. It returns the last RUN_FINISHED or RUN_ERROR with no
// RUN_STARTED after it (the zero Event when none came), and the error
// that stopped it: errNothing for a 204 answer, or an error as RunAgent
// documents.
func (c *Consumer) follow(ctx context.Context, a *Agent, method, url string, body []byte, lastID string, thread bool) (Event, error) {
	var end Event
	f := framing.Fields{LastEventID: lastID, IDs: lastID != ""}
	resuming, tries, furthest := false, 0, position(lastID)
	for {
		if resuming {
			select {
			case <-ctx.Done():
				return end, ctx.Err()
			case <-time.After(reconnectWait(f.Retry, tries)):
			}
			tries++
		}
		from := f.LastEventID
		var header http.Header
		if resuming { // a reconnect says so, with an empty Last-Event-ID when no event came
			header = http.Header{"Last-Event-ID": {from}}
		}
		resp, err := a.send(ctx, method, url, body, from, header)
		if err != nil {
			var he *HTTPError
			retry := ctx.Err() == nil && (!errors.As(err, &he) || he.StatusCode >= 500)
			if resuming && retry && (thread || tries < a.Reconnects) {
				continue
			}
			return end, err
		}
		if resp.StatusCode == http.StatusNoContent {
			resp.Body.Close()
			return end, errNothing
		}
		got := 0
		var prelude *Consumer // the thread a prelude makes, until its last event
		err = c.run(ctx, resp.Body, &f, func(text []byte) error {
			if got++; got == 1 && f.IDs && f.LastEventID == "" {
				prelude = New(&c.opts) // a prelude: the thread as the relay holds it
			} else if want := nextPosition(from); got == 1 && resuming && f.LastEventID != want &&
				!(thread && from == "" && f.LastEventID == "1") { // the first run of a thread that had none
				return apiError(fmt.Errorf("%w %q: its next event has the id %q, not %q or \"\" (a prelude)",
					errNotResumed, from, f.LastEventID, want))
			}
			var id *string
			if f.IDs {
				id = &f.LastEventID
			}
			into := c
			if prelude != nil {
				into = prelude
			}
			ev, err := into.apply(text, id)
			if err != nil {
				return err
			}
			switch ev.Type {
			case "RUN_STARTED":
				end = Event{}
			case "RUN_FINISHED", "RUN_ERROR":
				end = ev
			}
			if prelude != nil && f.LastEventID != "" {
				err, prelude = c.adopt(prelude), nil
			}
			return err
		})
		resp.Body.Close()
		// Only a stream that takes the thread past the furthest position it
		// has reached resets the count of reconnects, so that an answer
		// that repeats a prelude and drops is not followed for ever.
		if p := position(f.LastEventID); p > furthest {
			furthest, tries = p, 0
		}
		var ee *EventError
		switch {
		case ctx.Err() != nil:
			return end, ctx.Err()
		case err == nil && end.Type != "" && !thread:
			return end, nil
		case errors.As(err, &ee), errors.Is(err, errNotResumed):
			return end, err
		case thread && (!f.IDs || isPosition(f.LastEventID)):
			resuming = true // a thread's stream ends only to be reconnected
			continue
		}
		// The stream dropped before the run ended: cut short, a read that
		// failed, or an end before the run's.
		if !f.IDs || !isPosition(f.LastEventID) || tries >= a.Reconnects {
			if err == nil {
				err = errNoRunEnd
			}
			return end, err
		}
		resuming = true
	}
}

// isPosition reports whether an SSE id is a position (decimal digits), or
// "" (a prelude's).
func isPosition(id string) bool {
	for _, c := range id {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// position returns the position an SSE id names, or -1 for an id that
// names none ("", a prelude's first events).
func position(id string) int64 {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// nextPosition returns the position after id, a position, or "" after "".
func nextPosition(id string) string {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return ""
	}
	return strconv.FormatInt(n+1, 10)
}
