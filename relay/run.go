// Runs: a run's request to the agent, its events applied and appended in batches, and its end.

package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/aguistate/aguistate"
	"github.com/aguistate/aguistate/internal/jsonv"
	"go.opentelemetry.io/otel/trace"
)

// maxBatch is the most events one append writes. Events that arrive while
// an append is on its way are appended together (group commit), up to it.
const maxBatch = 256

// run is a run this relay runs against the agent.
type run struct {
	t      *thread
	body   []byte                  // the request body, sent to the agent as it is; nil once sent
	taken  int64                   // the bytes of r.inputs that body holds
	header http.Header             // set on the request to the agent (Grant.Header)
	in     aguistate.RunAgentInput // read from body
	state  json.RawMessage         // body's "state", nil when absent
	reqID  string                  // the id of the request that started it

	ctx    context.Context
	cancel context.CancelCauseFunc

	started chan error    // receives nil once the run's first events are in the log, or why the run did not start
	done    chan struct{} // closed when the run has ended and its events are in the log, or cannot be

	startPos int64 // position of the run's RUN_STARTED, once started
	from     int64 // the log's end at the run's start
	lastPos  int64 // the last position the run appended (the log's end at its start); guarded by t.mu
	lost     bool  // another relay has the thread, and ends the run; guarded by t.mu

	span    trace.Span // the run's span (see telemetry.runStarted)
	outcome string     // how the run ended, once it has (see outcomeSuccess); set by the run's goroutine
}

// Errors that end a run without a RUN_ERROR of the relay: another relay
// has the thread, which it ends.
var (
	errLeaseLost = errors.New("aguistate: the thread's lease went to another relay")
	errRunLost   = errors.New("aguistate: another relay appended to the thread")
)

// errLogMoved reports a POST whose thread's log moved while it took the
// lease (another relay's run ended meanwhile): it is told again from a
// reconnect (see isReconnect) before it starts a run.
var errLogMoved = errors.New("aguistate: the thread's log moved while its lease was taken")

// errStopped is the cause of a run that a client stopped: it ends with
// RUN_FINISHED, outcome "cancelled".
var errStopped = errors.New("aguistate: the run was stopped")

// agentError is a failure of the agent before the run's first event: the
// request failed, or the answer is no event stream. msg is what the client
// is told; err, when not nil, what the log gets (such as the agent's
// answer, which may hold what a client should not see).
type agentError struct {
	msg string
	err error
}

func (e *agentError) Error() string { return e.msg }
func (e *agentError) Unwrap() error { return e.err }

// inputError reports a run input whose record the thread does not take (a
// limit of the Consumer): the client gets 413. event is the index of the
// record's event that was refused (see startEvents).
type inputError struct {
	err   error
	event int
}

func (e *inputError) Error() string {
	msg := e.err.Error()
	var ee *aguistate.EventError
	if errors.As(e.err, &ee) {
		msg = fmt.Sprintf("its %s: %v", [...]string{"RUN_STARTED", "STATE_SNAPSHOT"}[min(e.event, 1)], ee.Err)
	}
	return "aguistate: the run input cannot be recorded: " + msg
}

func (e *inputError) Unwrap() error { return e.err }

// endError is the cause of a run that the relay ends with a RUN_ERROR of
// code with the message msg; err, when not nil, goes to the log only.
type endError struct {
	code, msg string
	err       error
}

func (e *endError) Error() string { return "aguistate: " + e.msg }
func (e *endError) Unwrap() error { return e.err }

// startRun starts a run of t with input in, whose request body is body
// (holding taken bytes of r.inputs, which the run gives back): it takes the
// thread's lease, reads the log again (another relay may have ended its
// run meanwhile), ends a run in progress that nobody runs, and starts the
// run's goroutine. It returns an HTTP status with its error: 409 and
// errLogMoved, having let the lease go, when the log moved to the end of a
// run meanwhile. The caller holds t.mu and has synced t.
func (r *Relay) startRun(req *http.Request, t *thread, g Grant, body []byte, taken int64, in aguistate.RunAgentInput, state json.RawMessage) (*run, int, error) {
	ctx := req.Context()
	if t.running != nil {
		return nil, http.StatusConflict, fmt.Errorf("aguistate: thread %q: a run is in progress", t.id)
	}
	if r.refusesRuns() {
		return nil, http.StatusServiceUnavailable, errDraining
	}
	l := t.store
	if err := l.Lease(ctx, t.id, r.holder, in.RunID, r.o.LeaseTTL); errors.Is(err, ErrLeased) {
		return nil, http.StatusConflict, fmt.Errorf("aguistate: thread %q: another relay runs a run of it", t.id)
	} else if err != nil && !errors.Is(err, ErrStopped) { // a stop of a run that ended: this one is new
		return nil, http.StatusServiceUnavailable, err
	}
	before := t.pos
	if err := t.sync(ctx); err != nil { // the log as it is now that nobody else appends
		_ = l.Release(ctx, t.id, r.holder)
		return nil, http.StatusServiceUnavailable, err
	}
	if t.pos != before && !t.c.Running() { // a run ended meanwhile: the POST may be its reconnect
		_ = l.Release(ctx, t.id, r.holder)
		return nil, http.StatusConflict, errLogMoved
	}
	if t.c.Running() { // nobody runs it: this relay has its lease
		if err := t.appendOwn(ctx, runError(CodeRunLost, msgRunLost)); err != nil {
			_ = l.Release(ctx, t.id, r.holder)
			return nil, http.StatusServiceUnavailable, err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || r.draining {
		_ = l.Release(ctx, t.id, r.holder)
		return nil, http.StatusServiceUnavailable, errDraining
	}
	ru := &run{t: t, body: body, taken: taken, header: g.Header, in: in, state: state, reqID: requestID(ctx),
		started: make(chan error, 1), done: make(chan struct{}), from: t.pos, lastPos: t.pos}
	ru.ctx, ru.cancel = context.WithCancelCause(r.runCtx)
	r.tel.runStarted(req, ru, g)
	t.running = ru
	t.refs++ // released when the run ends
	r.runs.Add(1)
	r.posts.Add(1)  // done when the POST's stream ends
	go r.runRun(ru) // its first append waits for t.mu, which the caller holds
	return ru, 0, nil
}

// runRun runs ru against the agent and records its events, until the
// agent's stream ends or the run is lost, stopped or cancelled.
func (r *Relay) runRun(ru *run) {
	t := ru.t
	// start tells the POST that the run started (err nil) at once; why it
	// did not start waits until the thread is free again, so that the
	// client that reads the answer and runs again finds it free.
	started := false
	var notStarted error
	start := func(err error) {
		if err != nil {
			notStarted = err
			return
		}
		ru.started <- nil
		started = true
	}
	defer func() {
		r.inputs.give(ru.taken)
		ctx, cancel := r.storeContext(ru.ctx)
		defer cancel()
		_ = t.store.Release(ctx, t.id, r.holder)
		t.mu.Lock()
		t.running = nil
		events := ru.lastPos - ru.from
		t.mu.Unlock()
		if !started {
			if notStarted == nil {
				notStarted = errors.New("aguistate: the run ended before it started")
			}
			ru.started <- notStarted
		}
		r.tel.runEnded(ru, events)
		ru.cancel(nil)
		close(ru.done)
		r.release(t)
		r.runs.Done()
	}()
	go r.renewLease(ru)
	if r.o.MaxRun > 0 {
		limit := time.AfterFunc(r.o.MaxRun, func() {
			ru.cancel(&endError{code: CodeRunTimeout, msg: fmt.Sprintf("the run went on for longer than %v (MaxRun)", r.o.MaxRun)})
		})
		defer limit.Stop()
	}

	w := newWatchdog(r.o.IdleTimeout, func() {
		ru.cancel(&endError{code: CodeIdleTimeout, msg: fmt.Sprintf("the agent sent nothing for %v (IdleTimeout)", r.o.IdleTimeout)})
	})
	defer w.stop()
	resp, err := r.callAgent(ru, w)
	if err != nil {
		if cause := context.Cause(ru.ctx); cause != nil {
			err = cause
		}
		r.endUnstarted(ru, err, start)
		return
	}
	defer resp.Body.Close()
	events := make(chan []byte, maxBatch)
	var readErr error
	go func() {
		defer close(events)
		for text, err := range aguistate.ReadEvents(w.reader(resp.Body), r.o.Consumer) {
			if err != nil {
				readErr = err
				return
			}
			events <- oneLine(text)
		}
	}()

	batch := make([][]byte, 0, maxBatch)
	for ev := range events {
		if ru.ctx.Err() != nil { // stopped, timed out, lost or closed: what came after is not recorded
			break
		}
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
		fatal, err := r.write(ru.ctx, ru, batch, !started)
		switch {
		case err != nil && ru.ctx.Err() != nil && !started: // ended before its first append
			r.endUnstarted(ru, context.Cause(ru.ctx), start)
			return
		case !started:
			start(err)
		}
		if err != nil && ru.ctx.Err() != nil {
			r.finish(ru, context.Cause(ru.ctx))
			return
		}
		if err != nil {
			r.o.Logger.Warn("aguistate: relay: a run stopped", "request", ru.reqID, "thread", t.id, "run", ru.in.RunID, "err", err)
			ru.cancel(err)
			r.finish(ru, err)
			return
		}
		if fatal != nil {
			ru.cancel(fatal)
			r.finish(ru, &endError{code: CodeAgentFailed, msg: "the agent sent an event that is not one: " + strings.TrimPrefix(fatal.Error(), "aguistate: ")})
			return
		}
	}
	if !started {
		err := context.Cause(ru.ctx)
		if err == nil {
			err = &agentError{msg: "aguistate: the agent's answer holds no event", err: readErr}
		}
		r.endUnstarted(ru, err, start)
		return
	}
	switch cause := context.Cause(ru.ctx); {
	case cause != nil:
		r.finish(ru, cause)
	case readErr != nil:
		r.finish(ru, &endError{code: CodeAgentFailed, msg: "the agent's stream broke off", err: readErr})
	default:
		r.finish(ru, &endError{code: CodeAgentFailed, msg: "the agent's stream ended before RUN_FINISHED or RUN_ERROR"})
	}
}

// endUnstarted ends ru, which has no event in the log, for cause: a run
// stopped before the agent's first event is recorded, its start and its
// RUN_FINISHED (outcome "cancelled"), so that its client and viewers see
// it end; any other cause is given to start (the POST's answer says it) and
// nothing is recorded.
func (r *Relay) endUnstarted(ru *run, cause error, start func(error)) {
	if !errors.Is(cause, errStopped) {
		start(cause)
		return
	}
	ctx, cancel := r.storeContext(ru.ctx)
	defer cancel()
	_, err := r.write(ctx, ru, nil, true)
	start(err)
	if err == nil {
		r.finish(ru, cause)
	}
}

// callAgent sends ru's input to the agent and returns its answer, an event
// stream, or an *agentError (or the run's cause when it ended first). w
// watches the wait for the answer; ru's body is let go once sent.
func (r *Relay) callAgent(ru *run, w *watchdog) (*http.Response, error) {
	w.wait()
	resp, err := r.agent.Post(ru.ctx, ru.body, ru.header)
	w.idle()
	ru.body = nil
	r.inputs.give(ru.taken)
	ru.taken = 0
	var he *aguistate.HTTPError
	switch {
	case err == nil:
		return resp, nil
	case errors.As(err, &he) && he.StatusCode >= 200 && he.StatusCode <= 299:
		return nil, &agentError{msg: fmt.Sprintf("aguistate: the agent answered %s with Content-Type %s, not an event stream", he.Status, jsonv.Quote(he.ContentType)), err: err}
	case errors.As(err, &he):
		return nil, &agentError{msg: "aguistate: the agent answered " + he.Status, err: err}
	default:
		return nil, &agentError{msg: "aguistate: the agent could not be reached", err: err}
	}
}

// watchdog calls a function when the relay has waited for the agent for
// longer than an idle time: the wait for its answer, then each read of
// its body. Time spent on anything else does not count.
type watchdog struct {
	d     time.Duration
	timer *time.Timer // nil when d is 0 or less: no idle time
}

// newWatchdog returns a watchdog that calls fire once the relay has waited
// for d; none when d is 0 or less.
func newWatchdog(d time.Duration, fire func()) *watchdog {
	w := &watchdog{d: d}
	if d > 0 {
		w.timer = time.AfterFunc(d, fire)
		w.timer.Stop()
	}
	return w
}

// wait starts a wait for the agent.
func (w *watchdog) wait() {
	if w.timer != nil {
		w.timer.Reset(w.d)
	}
}

// idle ends a wait for the agent.
func (w *watchdog) idle() {
	if w.timer != nil {
		w.timer.Stop()
	}
}

// stop ends the watch.
func (w *watchdog) stop() { w.idle() }

// reader returns body, whose reads w watches.
func (w *watchdog) reader(body io.Reader) io.Reader {
	if w.timer == nil {
		return body
	}
	return watchedReader{body, w}
}

// watchedReader is a body whose reads a watchdog watches.
type watchedReader struct {
	r io.Reader
	w *watchdog
}

func (b watchedReader) Read(p []byte) (int, error) {
	b.w.wait()
	defer b.w.idle()
	return b.r.Read(p)
}

// write applies batch to the thread and appends it after the thread's last
// position, once all of it applies or up to a fatal event, which it
// returns. The append is not cut when ctx ends (a stop does not cut a batch
// in two); a store that fails is retried until ctx ends, but for one that
// is full ([ErrFull]), whose batch ends the run at once with an *endError
// of code CodeStoreFull. The first batch of a run (first) starts with the
// record of the run's start; with no agent event it is that record alone.
// It returns an error, and the run is lost, when another relay has
// appended to the thread since the run's last append, or the store fails
// until the run ends; an *inputError when the thread does not take the
// record, and an *agentError when the agent's first event is not one.
func (r *Relay) write(ctx context.Context, ru *run, batch [][]byte, first bool) (fatal, err error) {
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
	record, fromAgent := 0, false
	if first {
		var rec [][]byte
		if rec, fromAgent, err = startEvents(t.c, ru.in, ru.state, batch); err != nil {
			t.mu.Unlock()
			return nil, &inputError{err: err}
		}
		if fromAgent {
			batch = batch[1:]
		}
		record = len(rec)
		batch = append(rec, batch...)
	}
	n := 0
	for _, ev := range batch {
		if fatal = t.c.Apply(ev); fatal != nil {
			t.c = nil // it counted the fatal event, which the log will not hold
			break
		}
		n++
	}
	switch {
	case n == 0 && first && fromAgent:
		t.mu.Unlock()
		return nil, &agentError{msg: "aguistate: the agent's first event is not one: " + strings.TrimPrefix(fatal.Error(), "aguistate: ")}
	case n < record:
		t.mu.Unlock()
		return nil, &inputError{err: fatal, event: n}
	}
	batch = batch[:n]
	pos := t.pos
	if n > 0 {
		actx, cancel := r.storeContext(ctx)
		err = t.store.Append(actx, t.id, pos+1, batch...)
		cancel()
	}
	if errors.Is(err, ErrConflict) {
		t.c = nil
		t.mu.Unlock()
		return nil, errRunLost
	}
	if errors.Is(err, ErrFull) { // nothing was written, and a retry would wait for room that may never come
		t.c = nil
		t.mu.Unlock()
		return nil, &endError{code: CodeStoreFull, msg: "the store has no room for the run's events", err: err}
	}
	if err != nil {
		t.c = nil // ahead of the log; loaded again once the batch is in
		t.mu.Unlock()
		if err := r.appendRetry(ctx, ru, pos, batch); err != nil {
			return nil, err
		}
		t.mu.Lock()
		if err := r.syncRetry(ru); err != nil {
			t.mu.Unlock()
			return nil, err
		}
	} else if fatal == nil {
		t.pos += int64(n)
		for _, ev := range batch {
			t.started.note(ev)
		}
	}
	if first { // what the record needed: let it go
		ru.startPos = pos + 1
		ru.in.Messages, ru.in.State, ru.state = nil, aguistate.Value{}, nil
	}
	ru.lastPos = pos + int64(n)
	if t.c != nil && !t.c.Running() { // the agent ended the run, or ends it now
		for _, ev := range slices.Backward(batch) {
			if endsRun(ev) {
				ru.outcome = agentOutcome(ev)
				break
			}
		}
	}
	cp := t.checkpointDue(r.o.CheckpointEvery)
	t.mu.Unlock()
	r.saveCheckpoint(ctx, t, cp)
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

// appendRetry appends batch at pos+1 with ctx until the store takes it or
// the run ends: after a store's failure the events may be in the log
// already, which a conflict whose entries are batch shows.
func (r *Relay) appendRetry(ctx context.Context, ru *run, pos int64, batch [][]byte) error {
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, 2*time.Second) {
		select {
		case <-ru.ctx.Done():
			return context.Cause(ru.ctx)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		t := ru.t
		err := t.store.Append(ctx, t.id, pos+1, batch...)
		if errors.Is(err, ErrConflict) {
			i := 0
			for e, err := range t.store.Read(ctx, t.id, pos) {
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
		r.o.Logger.Warn("aguistate: relay: appending failed; retrying", "thread", t.id, "err", err)
	}
}

// finish ends ru: when the thread's run is still in progress and nobody
// else has appended, it appends the event that says why (cause): a
// RUN_FINISHED with outcome "cancelled" for a run that was stopped, else a
// RUN_ERROR whose code says why. Then it saves a checkpoint.
func (r *Relay) finish(ru *run, cause error) {
	if errors.Is(cause, errLeaseLost) || errors.Is(cause, errRunLost) {
		ru.t.mu.Lock()
		ru.lost = true // the thread is another relay's, which ends the run
		ru.t.mu.Unlock()
		ru.outcome = outcomeLost
		return
	}
	// A RUN_ERROR's message is the run's, not one of this package's errors:
	// its code says that the relay wrote it, and a client that reports it
	// adds its own prefix.
	code, msg := CodeAgentFailed, strings.TrimPrefix(cause.Error(), "aguistate: ")
	var ee *endError
	switch {
	case errors.Is(cause, context.Canceled) && r.runCtx.Err() != nil:
		code, msg = CodeRelayStopped, "the relay stopped before the run ended"
	case errors.As(cause, &ee):
		code, msg = ee.code, ee.msg
		if ee.err != nil {
			r.o.Logger.Warn("aguistate: relay: a run failed", "request", ru.reqID, "thread", ru.t.id, "run", ru.in.RunID,
				"code", ee.code, "err", ee.err)
		}
	}
	t := ru.t
	ctx, cancel := r.storeContext(ru.ctx)
	defer cancel()
	t.mu.Lock()
	err := t.sync(ctx)
	if err == nil && t.pos == ru.lastPos && t.c.Running() {
		end := runError(code, msg)
		if errors.Is(cause, errStopped) {
			end = runCancelled(t.c.ThreadID(), t.c.RunID())
		}
		if err = t.appendOwn(ctx, end); err == nil {
			ru.lastPos = t.pos
			ru.outcome = codeOutcome(code)
			if errors.Is(cause, errStopped) {
				ru.outcome = outcomeCancelled
			}
		}
	}
	switch {
	case ru.outcome != "": // the agent's end, or the relay's
	case err != nil:
		ru.outcome = outcomeStore
	default: // another relay appended to the thread
		ru.outcome = outcomeLost
	}
	cp := t.checkpointDue(1)
	t.mu.Unlock()
	if err != nil {
		r.o.Logger.Warn("aguistate: relay: ending a run failed", "request", ru.reqID, "thread", t.id, "err", err)
	}
	r.saveCheckpoint(ctx, t, cp)
}

// stopRun stops ru, the run this relay runs on a thread: it cancels its
// request to the agent, and waits until its end is recorded (see finish),
// or ctx ends.
func (r *Relay) stopRun(ctx context.Context, ru *run) {
	ru.cancel(errStopped)
	select {
	case <-ru.done:
	case <-ctx.Done():
	}
}
