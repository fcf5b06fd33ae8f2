// Runs: a POST /agent sent upstream, its events applied, appended in batches and streamed back.

package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/aguistate/aguistate"
)

// maxBatch is the most events one append writes. Events that arrive while
// an append is on its way are appended together (group commit), up to it.
const maxBatch = 256

// maxInput is the largest run input a POST may carry, in bytes.
const maxInput = 64 << 20

// run is a run this relay runs against the agent.
type run struct {
	t     *thread
	body  []byte                  // the request body, sent to the agent as it is
	in    aguistate.RunAgentInput // read from body
	state json.RawMessage         // body's "state", nil when absent

	ctx    context.Context
	cancel context.CancelCauseFunc

	started chan error    // receives nil once the run's first events are in the log, or why the run did not start
	done    chan struct{} // closed when the run has ended and its events are in the log, or cannot be

	startPos int64 // position of the run's RUN_STARTED, once started
	lastPos  int64 // the last position the run appended (the log's end at its start); guarded by t.mu
	lost     bool  // another relay has the thread, and ends the run; guarded by t.mu
}

// Errors that end a run without a RUN_ERROR of the relay: another relay
// has the thread, which it ends.
var (
	errLeaseLost = errors.New("aguistate: the thread's lease went to another relay")
	errRunLost   = errors.New("aguistate: another relay appended to the thread")
)

// agentError is a failure of the agent before the run's first event: the
// request failed, or the answer is no event stream.
type agentError struct{ msg string }

func (e *agentError) Error() string { return e.msg }

// postAgent serves POST /agent: it starts a run and streams its events,
// or serves a reconnect of the thread's last run from the log.
func (r *Relay) postAgent(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, maxInput))
	if err != nil {
		http.Error(w, "aguistate: reading the run input: "+err.Error(), http.StatusBadRequest)
		return
	}
	var in aguistate.RunAgentInput
	if err := in.UnmarshalJSON(body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if in.ThreadID == "" || in.RunID == "" {
		http.Error(w, "aguistate: the run input has no threadId or no runId", http.StatusBadRequest)
		return
	}
	var raw struct {
		State json.RawMessage `json:"state"`
	}
	_ = json.Unmarshal(body, &raw)

	t := r.open(req.Context(), w, in.ThreadID)
	if t == nil {
		return
	}
	defer r.release(t)
	lastID := req.Header.Get("Last-Event-ID")
	if t.pos > 0 && (t.c.RunID() == in.RunID || t.isPosition(lastID)) { // a reconnect
		j := t.join(lastID)
		t.mu.Unlock()
		r.stream(w, req, t, j, nil)
		return
	}
	ru, status, err := r.startRun(req.Context(), t, body, in, raw.State)
	var j joinPoint
	if err == nil { // the hub delivers the run's events from its first on
		j = joinPoint{after: t.pos, running: true, sub: t.subscribe(), hub: true}
	}
	t.mu.Unlock()
	if err != nil {
		http.Error(w, err.Error(), status)
		return
	}
	defer r.posts.Done()
	if err := <-ru.started; err != nil {
		t.mu.Lock()
		trim := t.unsubscribe(j.sub)
		t.mu.Unlock()
		r.trim(req.Context(), t, trim)
		status := http.StatusServiceUnavailable
		var ae *agentError
		switch {
		case errors.As(err, &ae):
			status = http.StatusBadGateway
		case errors.Is(err, ErrConflict), errors.Is(err, errRunLost):
			status = http.StatusConflict
		}
		http.Error(w, err.Error(), status)
		return
	}
	r.stream(w, req, t, j, ru)
}

// startRun starts a run of t with input in: it takes the thread's lease,
// ends a run in progress that nobody runs, and starts the run's goroutine.
// It returns an HTTP status with its error. The caller holds t.mu and has
// synced t.
func (r *Relay) startRun(ctx context.Context, t *thread, body []byte, in aguistate.RunAgentInput, state json.RawMessage) (*run, int, error) {
	if t.running != nil {
		return nil, http.StatusConflict, fmt.Errorf("aguistate: thread %q: a run is in progress", t.id)
	}
	l := r.o.Store
	if err := l.Lease(ctx, t.id, r.holder, in.RunID, r.o.LeaseTTL); errors.Is(err, ErrLeased) {
		return nil, http.StatusConflict, fmt.Errorf("aguistate: thread %q: another relay runs a run of it", t.id)
	} else if err != nil && !errors.Is(err, ErrStopped) { // a stop of a run that ended: this one is new
		return nil, http.StatusServiceUnavailable, err
	}
	if t.c.Running() { // nobody runs it: this relay has its lease
		if err := t.appendOwn(ctx, runError(CodeRunLost, msgRunLost)); err != nil {
			_ = l.Release(ctx, t.id, r.holder)
			return nil, http.StatusServiceUnavailable, err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		_ = l.Release(ctx, t.id, r.holder)
		return nil, http.StatusServiceUnavailable, errClosed
	}
	ru := &run{t: t, body: body, in: in, state: state, started: make(chan error, 1), done: make(chan struct{}), lastPos: t.pos}
	ru.ctx, ru.cancel = context.WithCancelCause(r.runCtx)
	t.running = ru
	t.refs++ // released when the run ends
	r.runs.Add(1)
	r.posts.Add(1)  // done when the POST's stream ends
	go r.runRun(ru) // its first append waits for t.mu, which the caller holds
	return ru, 0, nil
}

// runRun runs ru against the agent and records its events, until the
// agent's stream ends or the run is lost or cancelled.
func (r *Relay) runRun(ru *run) {
	t := ru.t
	started := false
	defer func() {
		if !started {
			ru.started <- errors.New("aguistate: the run ended before it started")
		}
		ctx, cancel := r.storeContext(ru.ctx)
		defer cancel()
		_ = r.o.Store.Release(ctx, t.id, r.holder)
		t.mu.Lock()
		t.running = nil
		t.mu.Unlock()
		ru.cancel(nil)
		close(ru.done)
		r.release(t)
		r.runs.Done()
	}()
	go r.renewLease(ru)

	resp, err := r.callAgent(ru)
	if err != nil {
		ru.started <- err
		started = true
		return
	}
	defer resp.Body.Close()
	events := make(chan []byte, maxBatch)
	var readErr error
	go func() {
		defer close(events)
		for text, err := range aguistate.ReadEvents(resp.Body, r.o.Consumer) {
			if err != nil {
				readErr = err
				return
			}
			events <- oneLine(text)
		}
	}()

	batch := make([][]byte, 0, maxBatch)
	for ev := range events {
		batch = append(batch[:0], ev)
	drain:
		for len(batch) < maxBatch {
			select {
			case ev, ok := <-events:
				if !ok {
					break drain
				}
				batch = append(batch, ev)
			default:
				break drain
			}
		}
		fatal, err := r.write(ru, batch, !started)
		if !started {
			ru.started <- err
			started = true
		}
		if err != nil && ru.ctx.Err() != nil {
			r.finish(ru, context.Cause(ru.ctx))
			return
		}
		if err != nil {
			r.o.Logger.Warn("aguistate: relay: a run stopped", "thread", t.id, "run", ru.in.RunID, "err", err)
			ru.cancel(err)
			r.finish(ru, err)
			return
		}
		if fatal != nil {
			ru.cancel(fatal)
			r.finish(ru, fmt.Errorf("the agent sent an event that is not one: %w", fatal))
			return
		}
	}
	if !started {
		ru.started <- &agentError{"aguistate: the agent's stream holds no event"}
		started = true
		return
	}
	switch cause := context.Cause(ru.ctx); {
	case cause != nil:
		r.finish(ru, cause)
	case readErr != nil:
		r.finish(ru, fmt.Errorf("the agent's stream broke off: %w", readErr))
	default:
		r.finish(ru, errors.New("the agent's stream ended before RUN_FINISHED or RUN_ERROR"))
	}
}

// callAgent sends ru's input to the agent and returns its answer, an event
// stream, or an *agentError.
func (r *Relay) callAgent(ru *run) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ru.ctx, http.MethodPost, r.agent, bytes.NewReader(ru.body))
	if err != nil {
		return nil, &agentError{"aguistate: the agent's URL: " + err.Error()}
	}
	req.Header = r.o.Header.Clone()
	if req.Header == nil {
		req.Header = make(http.Header)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := r.o.Client.Do(req)
	if err != nil {
		return nil, &agentError{"aguistate: the agent: " + err.Error()}
	}
	ct := resp.Header.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ct)
	ok := ct == "" || mt == "text/event-stream" || mt == "application/json" || mt == "application/jsonl" || mt == "application/x-ndjson"
	if resp.StatusCode < 200 || resp.StatusCode > 299 || !ok {
		excerpt, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		return nil, &agentError{fmt.Sprintf("aguistate: the agent answered %s (Content-Type %q): %s", resp.Status, ct, excerpt)}
	}
	return resp, nil
}

// write applies batch to the thread and appends it after the thread's last
// position, once all of it applies or up to a fatal event, which it
// returns. The first batch of a run starts with the record of the run's
// start. It returns an error, and the run is lost, when another relay has
// appended to the thread since the run's last append, or the store fails
// until the run ends.
func (r *Relay) write(ru *run, batch [][]byte, first bool) (fatal, err error) {
	t := ru.t
	t.mu.Lock()
	if t.c == nil {
		if err := r.syncRetry(ru); err != nil {
			t.mu.Unlock()
			return nil, err
		}
	}
	if t.pos != ru.lastPos { // the log moved since the run's last append, or its start
		t.mu.Unlock()
		return nil, errRunLost
	}
	if first {
		if batch, err = startEvents(t.c, ru.in, ru.state, batch); err != nil {
			t.mu.Unlock()
			return nil, err
		}
	}
	n := 0
	for _, ev := range batch {
		if fatal = t.c.Apply(ev); fatal != nil {
			t.c = nil // it counted the fatal event, which the log will not hold
			break
		}
		n++
	}
	if first && n == 0 {
		t.mu.Unlock()
		return nil, &agentError{"aguistate: the agent's first event is not one: " + fatal.Error()}
	}
	batch = batch[:n]
	pos := t.pos
	if n > 0 {
		err = r.o.Store.Append(ru.ctx, t.id, pos+1, batch...)
	}
	if errors.Is(err, ErrConflict) {
		t.c = nil
		t.mu.Unlock()
		return nil, errRunLost
	}
	if err != nil {
		t.c = nil // ahead of the log; loaded again once the batch is in
		t.mu.Unlock()
		if err := r.appendRetry(ru, pos, batch); err != nil {
			return nil, err
		}
		t.mu.Lock()
		if err := r.syncRetry(ru); err != nil {
			t.mu.Unlock()
			return nil, err
		}
	} else if fatal == nil {
		t.pos += int64(n)
	}
	if first {
		ru.startPos = pos + 1
	}
	ru.lastPos = pos + int64(n)
	cp := t.checkpointDue(r.o.CheckpointEvery)
	t.mu.Unlock()
	r.saveCheckpoint(ru.ctx, t, cp)
	return fatal, nil
}

// syncRetry syncs ru's thread, retrying a store that fails until the run
// ends. The caller holds t.mu, which syncRetry releases while it waits.
func (r *Relay) syncRetry(ru *run) error {
	t := ru.t
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, 2*time.Second) {
		err := t.sync(ru.ctx)
		if err == nil || ru.ctx.Err() != nil {
			return err
		}
		r.o.Logger.Warn("aguistate: relay: reading the thread failed; retrying", "thread", t.id, "err", err)
		t.mu.Unlock()
		select {
		case <-ru.ctx.Done():
		case <-time.After(wait):
		}
		t.mu.Lock()
	}
}

// appendRetry appends batch at pos+1 until the store takes it or the run
// ends: after a store's failure the events may be in the log already,
// which a conflict whose entries are batch shows.
func (r *Relay) appendRetry(ru *run, pos int64, batch [][]byte) error {
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, 2*time.Second) {
		select {
		case <-ru.ctx.Done():
			return context.Cause(ru.ctx)
		case <-time.After(wait):
		}
		err := r.o.Store.Append(ru.ctx, ru.t.id, pos+1, batch...)
		if errors.Is(err, ErrConflict) {
			i := 0
			for e, err := range r.o.Store.Read(ru.ctx, ru.t.id, pos) {
				if err != nil || i == len(batch) || !bytes.Equal(e.Event, batch[i]) {
					break
				}
				i++
			}
			if i == len(batch) {
				return nil
			}
			return errRunLost
		}
		if err == nil {
			return nil
		}
		r.o.Logger.Warn("aguistate: relay: appending failed; retrying", "thread", ru.t.id, "err", err)
	}
}

// finish ends ru: when the thread's run is still in progress and nobody
// else has appended, it appends a RUN_ERROR that says why (cause); then it
// saves a checkpoint.
func (r *Relay) finish(ru *run, cause error) {
	if errors.Is(cause, errLeaseLost) || errors.Is(cause, errRunLost) {
		ru.t.mu.Lock()
		ru.lost = true // the thread is another relay's, which ends the run
		ru.t.mu.Unlock()
		return
	}
	// A RUN_ERROR's message is the run's, not one of this package's errors:
	// its code says that the relay wrote it, and a client that reports it
	// adds its own prefix.
	code, msg := CodeAgentFailed, strings.TrimPrefix(cause.Error(), "aguistate: ")
	if errors.Is(cause, context.Canceled) && r.runCtx.Err() != nil {
		code, msg = CodeRelayStopped, "the relay stopped before the run ended"
	}
	t := ru.t
	ctx, cancel := r.storeContext(ru.ctx)
	defer cancel()
	t.mu.Lock()
	err := t.sync(ctx)
	if err == nil && t.pos == ru.lastPos && t.c.Running() {
		if err = t.appendOwn(ctx, runError(code, msg)); err == nil {
			ru.lastPos = t.pos
		}
	}
	cp := t.checkpointDue(1)
	t.mu.Unlock()
	if err != nil {
		r.o.Logger.Warn("aguistate: relay: ending a run failed", "thread", t.id, "err", err)
	}
	r.saveCheckpoint(ctx, t, cp)
}

// renewLease renews ru's lease until the run ends, and cancels the run
// when another relay has taken it.
func (r *Relay) renewLease(ru *run) {
	tick := time.NewTicker(r.o.LeaseTTL / 3)
	defer tick.Stop()
	for {
		select {
		case <-ru.ctx.Done():
			return
		case <-tick.C:
		}
		err := r.o.Store.Lease(ru.ctx, ru.t.id, r.holder, ru.in.RunID, r.o.LeaseTTL)
		if errors.Is(err, ErrLeased) {
			r.o.Logger.Warn("aguistate: relay: a run's lease was lost", "thread", ru.t.id, "run", ru.in.RunID)
			ru.cancel(errLeaseLost)
			return
		}
		if err != nil && ru.ctx.Err() == nil {
			r.o.Logger.Warn("aguistate: relay: renewing a lease failed", "thread", ru.t.id, "err", err)
		}
	}
}

// checkpoint is a checkpoint to save: the thread's Consumer at a position,
// the position before which the log may then be trimmed, and the one
// before which it is to be trimmed once the hub has passed it (0 when the
// trim is not held back).
type checkpoint struct {
	pos, trim, held int64
	data            []byte
}

// checkpointDue returns the checkpoint to save when every events have come
// since the last one, else nil. The log keeps KeepEvents events before it,
// and those that the hub has not yet delivered to this relay's viewers:
// that part of the trim is held back until the hub has passed it, or the
// thread's last use ends (see heldTrim). The caller holds t.mu.
func (t *thread) checkpointDue(every int) *checkpoint {
	if t.c == nil || t.pos-t.cpPos < int64(every) {
		return nil
	}
	t.cpPos = t.pos
	cp := &checkpoint{pos: t.pos, trim: t.pos - int64(t.r.o.KeepEvents), data: t.c.Checkpoint()}
	if t.stopWatch != nil && t.hubPos+1 < cp.trim {
		cp.trim, cp.held = t.hubPos+1, cp.trim
	}
	return cp
}

// heldTrim returns the position before which the log is to be trimmed now
// that nothing holds it back (the hub has passed it, or no watcher runs),
// or 0. The caller holds t.mu.
func (t *thread) heldTrim() int64 {
	before := t.trimTo
	if before == 0 || t.stopWatch != nil && t.hubPos+1 < before {
		return 0
	}
	t.trimTo = 0
	return before
}

// saveCheckpoint saves cp (when not nil) and trims the log before it as
// far as cp allows; the rest of its trim waits for the hub (heldTrim).
func (r *Relay) saveCheckpoint(ctx context.Context, t *thread, cp *checkpoint) {
	if cp == nil {
		return
	}
	err := r.o.Store.SaveCheckpoint(ctx, t.id, cp.pos, cp.data)
	if err == nil {
		err = r.o.Store.Trim(ctx, t.id, cp.trim)
	}
	if err != nil {
		r.o.Logger.Warn("aguistate: relay: saving a checkpoint failed", "thread", t.id, "pos", cp.pos, "err", err)
		return
	}
	if cp.held > 0 {
		t.mu.Lock()
		t.trimTo = max(t.trimTo, cp.held)
		before := t.heldTrim()
		t.mu.Unlock()
		r.trim(ctx, t, before)
	}
}

// trim trims t's log before position before, unless before is 0.
func (r *Relay) trim(ctx context.Context, t *thread, before int64) {
	if before == 0 {
		return
	}
	if err := r.o.Store.Trim(ctx, t.id, before); err != nil {
		r.o.Logger.Warn("aguistate: relay: trimming the log failed", "thread", t.id, "before", before, "err", err)
	}
}

// storeFailed answers a request that the store failed.
func storeFailed(w http.ResponseWriter, err error) {
	http.Error(w, "aguistate: the store failed: "+err.Error(), http.StatusServiceUnavailable)
}
