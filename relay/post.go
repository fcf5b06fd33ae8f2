// POST /agent: a run input read within bounds, authorized, told from a reconnect, checked, run.

package relay

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/aguistate/aguistate"
)

// postAgent serves POST /agent: it starts a run and streams its events,
// or serves a reconnect of the thread's last run from the log.
func (r *Relay) postAgent(w http.ResponseWriter, req *http.Request) {
	if r.o.Authorize != nil { // before the body: who sends it, if nothing yet of what it asks
		if _, ok := r.authorize(w, req, ActionRun, ""); !ok {
			return
		}
	}
	body, taken := r.readInput(w, req)
	if body == nil {
		return
	}
	defer func() { r.inputs.give(taken) }() // unless the run holds the input
	var in aguistate.RunAgentInput
	if err := in.UnmarshalJSON(body); err != nil {
		r.fail(w, req, http.StatusBadRequest, err.Error(), nil)
		return
	}
	if in.ThreadID == "" || in.RunID == "" {
		r.fail(w, req, http.StatusBadRequest, "aguistate: the run input has no threadId or no runId", nil)
		return
	}
	g, ok := r.authorize(w, req, ActionRun, in.ThreadID)
	if !ok {
		return
	}
	var raw struct{ State json.RawMessage } // the input's "state", as the agent reads it; nil when absent
	if in.State != (aguistate.Value{}) {
		raw.State, _ = in.State.MarshalJSON()
	}

	t := r.open(w, req, g, in.ThreadID, true)
	if t == nil {
		return
	}
	defer r.release(t)
	defer r.leave(t)
	lastID, reconnect := lastEventID(req)
	var ru *run
	var status int
	var err error
	for deadline, pause := time.Now().Add(endWait), endPoll; ; pause *= 2 {
		if t.isReconnect(req.Context(), in, lastID, reconnect) {
			j := t.join(lastID)
			t.mu.Unlock()
			r.stream(w, req, t, &j, nil, true)
			return
		}
		if err := r.checkRecord(t, in, raw.State); err != nil {
			t.mu.Unlock()
			r.fail(w, req, inputStatus(err), err.Error(), nil)
			return
		}
		ru, status, err = r.startRun(req, t, g, body, taken, in, raw.State)
		if errors.Is(err, errLogMoved) && time.Now().Before(deadline) {
			continue // t is synced: the POST is told again from a reconnect
		}
		if status != http.StatusConflict || !r.waitRunEnd(req.Context(), t, deadline, pause) {
			break
		}
	}
	var j joinPoint
	if err == nil { // the hub delivers the run's events from its first on
		taken = 0 // the run gives it back
		j = joinPoint{after: t.pos, running: true, sub: t.subscribe(), hub: true, gone: t.gone}
		j.sub.holds = true
	}
	t.mu.Unlock()
	switch {
	case err == nil:
	case status == http.StatusConflict:
		r.fail(w, req, status, err.Error(), nil)
		return
	case errors.Is(err, errClosed), errors.Is(err, errDraining):
		r.busy(w, req, http.StatusServiceUnavailable, err.Error())
		return
	default:
		r.storeFailed(w, req, err)
		return
	}
	defer r.posts.Done()
	if err := <-ru.started; err != nil {
		t.mu.Lock()
		trim := t.unsubscribe(j.sub)
		t.mu.Unlock()
		r.trim(req.Context(), t, trim)
		r.startFailed(w, req, err)
		return
	}
	r.stream(w, req, t, &j, ru, true)
}

// startFailed answers a POST whose run did not start, for err.
func (r *Relay) startFailed(w http.ResponseWriter, req *http.Request, err error) {
	var ae *agentError
	var ie *inputError
	var ee *endError
	switch {
	case errors.As(err, &ae):
		r.fail(w, req, http.StatusBadGateway, ae.msg, ae.err)
	case errors.As(err, &ie):
		r.fail(w, req, inputStatus(ie.err), ie.Error(), nil)
	case errors.Is(err, ErrFull):
		r.storeFailed(w, req, err)
	case errors.As(err, &ee):
		r.fail(w, req, http.StatusGatewayTimeout, "aguistate: "+ee.msg, nil)
	case errors.Is(err, ErrConflict), errors.Is(err, errRunLost), errors.Is(err, errLeaseLost):
		r.fail(w, req, http.StatusConflict, "aguistate: another relay ran a run of the thread first", err)
	case errors.Is(err, errClosed), errors.Is(err, context.Canceled) && r.runCtx.Err() != nil:
		r.busy(w, req, http.StatusServiceUnavailable, errClosed.Error())
	default:
		r.storeFailed(w, req, err)
	}
}

// inputStatus returns the status of a run input whose record the thread
// does not take: 413 when it passes a limit, else 400.
func inputStatus(err error) int {
	if errors.Is(err, aguistate.ErrLimit) {
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusBadRequest
}

// isReconnect reports whether a POST of input in can only be a reconnect
// of t's last run, to be served from the log (the new-run rule). lastID is
// its Last-Event-ID header, and reconnect tells whether it has one, even
// empty. It is a reconnect when the thread has a run, in carries its runId
// (the agent's, or that of the input that started it: an agent may name
// its run otherwise, and a client reconnects with the input it sent), and
// either the POST has a Last-Event-ID of the log, or an empty one (the
// reconnect that [aguistate.Consumer.RunAgent] sends, with the last id it
// got; a client's first POST has none), or in carries no resume entries and
// no message with an id that the thread does not hold. Any other POST is a
// new run, which reaches the agent: a new runId; a resume, which the
// official AG-UI Go example server keys by the interrupted run's id; a new
// message.
//
// A reconnect with a Last-Event-ID is one whatever messages it carries: an
// agent may drop the input's messages from the thread (a MESSAGES_SNAPSHOT
// without them, as that server sends), and the reconnect carries the input
// again. A message without an id, which the record leaves out, does not
// count. The caller holds t.mu and has synced t.
func (t *thread) isReconnect(ctx context.Context, in aguistate.RunAgentInput, lastID string, reconnect bool) bool {
	if t.pos == 0 || in.RunID != t.c.RunID() && !t.startedBy(ctx, in.RunID, reconnect) {
		return false
	}
	if reconnect && (lastID == "" || t.isPosition(lastID)) {
		return true
	}
	if hasEntries(in.Resume) {
		return false
	}
	for _, m := range in.Messages {
		if id := m.ID(); id != "" {
			if _, held := t.c.Message(id); !held {
				return false
			}
		}
	}
	return true
}

// lastEventID returns req's Last-Event-ID header, and whether it has one
// (even empty).
func lastEventID(req *http.Request) (string, bool) {
	v := req.Header.Values("Last-Event-ID")
	if len(v) == 0 {
		return "", false
	}
	return v[0], true
}

// hasEntries reports whether resume, the JSON text of a run input's
// "resume", holds an entry: it is not absent, null or [].
func hasEntries(resume json.RawMessage) bool {
	var entries []json.RawMessage
	return json.Unmarshal(resume, &entries) == nil && len(entries) > 0
}

// checkRecord returns why the thread could not take the record of a run
// with input in (whose body gave the state state), or nil, so that a run
// the relay could not record never reaches the agent: the events that
// record it (see startEvents), applied to a new Consumer with the relay's
// options, must each be within its limits (MaxEventSize, the state's, a
// message's); and when they add messages to the thread, applied to a clone
// of the thread (aguistate.Consumer.Clone, which costs what the events
// change, not what the thread holds), within its totals too (MaxMessages,
// MaxTotalMessageSize). The error is an *inputError. The caller holds t.mu
// and has synced t.
func (r *Relay) checkRecord(t *thread, in aguistate.RunAgentInput, state json.RawMessage) error {
	events, _, err := startEvents(t.c, in, state, nil)
	if err != nil {
		return &inputError{err: err}
	}
	probe := aguistate.New(r.o.Consumer)
	for i, ev := range events {
		if err := probe.Apply(ev); err != nil {
			return &inputError{err: err, event: i}
		}
	}
	if !addsMessages(t.c, in) {
		return nil
	}
	thread := t.c.Clone()
	for i, ev := range events {
		if err := thread.Apply(ev); err != nil {
			return &inputError{err: err, event: i}
		}
	}
	return nil
}

// addsMessages reports whether the record of a run with input in adds a
// message to the thread that c holds: one with an id that c does not hold.
func addsMessages(c *aguistate.Consumer, in aguistate.RunAgentInput) bool {
	for _, m := range in.Messages {
		if id := m.ID(); id != "" {
			if _, held := c.Message(id); !held {
				return true
			}
		}
	}
	return false
}

// endWait is how long a POST whose thread is still held by a run whose
// end is in the log waits for that run's relay to let the thread go.
const endWait = 2 * time.Second

// waitRunEnd waits a while, until deadline at most, for the thread to be
// let go when its log holds no run in progress but a run still holds it:
// the end of the run is recorded, and its relay (this one or another) has
// yet to release the lease, or failed to and the lease is to expire. A
// client that reads a run's end and starts its next run at once (a
// client-side tool's result, say) would otherwise be refused with 409. It
// reports whether it waited, with t synced again. It does not wait for a
// run of this relay that has not recorded its start. One of another relay
// that has taken the lease but not yet recorded its start cannot be told
// from one that has ended: the POST asks for the lease again after pause
// (which its caller doubles each time, so that such a POST costs a few
// store calls) until deadline, then gets its 409. The caller holds t.mu,
// which it lets go while it waits.
func (r *Relay) waitRunEnd(ctx context.Context, t *thread, deadline time.Time, pause time.Duration) bool {
	if t.running == nil && t.sync(ctx) != nil { // another relay's run: it may have ended since t was read
		return false
	}
	if t.c.Running() || time.Now().After(deadline) {
		return false
	}
	var done chan struct{}
	if ru := t.running; ru != nil {
		if t.pos == ru.from { // it has recorded nothing yet
			return false
		}
		done = ru.done
	}
	t.mu.Unlock()
	timer := time.NewTimer(min(pause, time.Until(deadline)))
	defer timer.Stop()
	select {
	case <-done: // nil for another relay's run: its lease is asked for again after the pause
	case <-timer.C:
	case <-ctx.Done():
	}
	t.mu.Lock()
	return ctx.Err() == nil && t.sync(ctx) == nil
}

// endPoll is how long a POST that waits for another relay to let a thread
// go first waits before it asks for the lease again.
const endPoll = 20 * time.Millisecond
