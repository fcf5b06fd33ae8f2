// Viewers: joining a thread by Last-Event-ID or by prelude, and following it as SSE.

package relay

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/aguistate/aguistate"
)

// keepAlive is how long a viewer's stream may stay silent: an SSE comment
// goes out then, so that proxies keep the connection.
const keepAlive = 15 * time.Second

// joinPoint is where a viewer joins a thread: the prelude to send first,
// if any, and the position after which the log's events follow, with the
// viewer's subscription to the hub when a run is in progress.
type joinPoint struct {
	prelude [][]byte
	after   int64
	running bool
	sub     *sub // nil when no run is in progress
	hub     bool // sub delivers every event after after: the log need not be read first
}

// join returns where a viewer with the SSE Last-Event-ID lastID joins t:
// after lastID, when it names a position of the log (which the log may no
// longer hold: stream then sends a prelude); else with a prelude that
// brings it to t.pos. The caller holds t.mu and has synced t.
func (t *thread) join(lastID string) joinPoint {
	j := joinPoint{running: t.c.Running()}
	if t.isPosition(lastID) {
		j.after, _ = strconv.ParseInt(lastID, 10, 64)
	} else {
		j.prelude, j.after = t.c.Prelude(), t.pos
	}
	if j.running {
		j.sub = t.subscribe()
	}
	return j
}

// isPosition reports whether an SSE id names a position of t's log, as
// the relay writes it: 0 to t.pos. The caller holds t.mu.
func (t *thread) isPosition(id string) bool {
	pos, err := strconv.ParseInt(id, 10, 64)
	return err == nil && pos >= 0 && pos <= t.pos && id == strconv.FormatInt(pos, 10)
}

// getEvents serves GET /threads/{threadId}/events.
func (r *Relay) getEvents(w http.ResponseWriter, req *http.Request) {
	t := r.open(req.Context(), w, req.PathValue("threadId"))
	if t == nil {
		return
	}
	defer r.release(t)
	if t.pos == 0 {
		t.mu.Unlock()
		http.Error(w, "aguistate: no thread "+strconv.Quote(t.id), http.StatusNotFound)
		return
	}
	j := t.join(req.Header.Get("Last-Event-ID"))
	t.mu.Unlock()
	r.stream(w, req, t, j, nil)
}

// getThread serves GET /threads/{threadId}: the thread's state and
// messages.
func (r *Relay) getThread(w http.ResponseWriter, req *http.Request) {
	t := r.open(req.Context(), w, req.PathValue("threadId"))
	if t == nil {
		return
	}
	defer r.release(t)
	c, pos := t.c, t.pos
	t.mu.Unlock()
	if pos == 0 {
		http.Error(w, "aguistate: no thread "+strconv.Quote(t.id), http.StatusNotFound)
		return
	}
	body, err := json.Marshal(struct {
		State    aguistate.Value     `json:"state"`
		Messages []aguistate.Message `json:"messages"`
	}{c.State(), c.Messages()})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(body, '\n'))
}

// stream sends a viewer the thread's events from j on, as SSE, until the
// run it follows ends: the local run ru, when the viewer is that run's
// POST, ends when its events are sent; otherwise the stream ends after a
// RUN_FINISHED or RUN_ERROR, or once caught up when no run is in progress.
// It answers 204 when there is nothing to send.
func (r *Relay) stream(w http.ResponseWriter, req *http.Request, t *thread, j joinPoint, ru *run) {
	ctx := req.Context()
	defer func() {
		if j.sub != nil {
			t.mu.Lock()
			before := t.unsubscribe(j.sub)
			t.mu.Unlock()
			ctx, cancel := r.storeContext(r.ctx)
			defer cancel()
			r.trim(ctx, t, before)
		}
	}()
	sw := &sseWriter{w: w, rc: http.NewResponseController(w), retry: r.o.Retry, timeout: r.o.WriteTimeout}
	defer sw.close()
	if ru != nil { // the response ends once the run has: a next run of the thread is not refused
		defer func() {
			select {
			case <-ru.done:
			case <-ctx.Done():
			case <-r.ctx.Done():
			}
		}()
	}
	sent := j.after
	sendPrelude := func() {
		for i, ev := range j.prelude {
			switch i {
			case 0: // an empty id: a reconnect during the prelude asks for a new one
				sw.event("", true, ev)
			case len(j.prelude) - 1:
				sw.event(strconv.FormatInt(j.after, 10), true, ev)
			default:
				sw.event("", false, ev)
			}
		}
		sent = j.after
	}
	// over reports whether the stream has sent all it follows, once it
	// has sent an event that ends a run (end) or none (when the run ends).
	over := func(end bool) bool {
		if ru == nil {
			return end
		}
		select {
		case <-ru.done:
			t.mu.Lock()
			last, lost := ru.lastPos, ru.lost
			t.mu.Unlock()
			if lost { // the relay that has the thread ends the run
				return end
			}
			return sent >= last
		default:
			return false
		}
	}
	// readLog sends the log's events after sent, up to its end, and reports
	// whether the stream is over.
	readLog := func() (bool, error) {
		for e, err := range r.o.Store.Read(ctx, t.id, sent) {
			if err != nil {
				return false, err
			}
			if sw.event(strconv.FormatInt(e.Pos, 10), true, e.Event) != nil {
				return true, nil // the viewer is gone
			}
			sent = e.Pos
			if over(endsRun(e.Event)) {
				return true, nil
			}
		}
		return false, nil
	}

	if j.prelude != nil {
		sendPrelude()
	}
	var done bool
	var err error
	if !j.hub {
		done, err = readLog()
	}
	if errors.Is(err, ErrOutOfRange) && !sw.started { // the log no longer holds what follows Last-Event-ID
		t.mu.Lock()
		var trim int64
		if err = t.sync(ctx); err == nil {
			if j.sub != nil {
				trim = t.unsubscribe(j.sub)
			}
			j = t.join("")
		}
		t.mu.Unlock()
		r.trim(ctx, t, trim)
		if err == nil {
			sendPrelude()
			done, err = readLog()
		}
	}
	switch {
	case err != nil && !sw.started:
		storeFailed(w, err)
		return
	case err != nil || done || !j.running:
		sw.end()
		return
	}
	sw.begin()
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	var runDone <-chan struct{}
	if ru != nil {
		runDone = ru.done
	}
	for {
		if len(j.sub.ch) == 0 {
			sw.flush()
		}
		if sw.err != nil { // the viewer is gone, or read nothing for WriteTimeout
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-r.ctx.Done():
			return
		case <-tick.C:
			sw.comment("keep-alive")
		case <-runDone:
			runDone = nil
			if over(false) {
				sw.end()
				return
			}
		case e, ok := <-j.sub.ch:
			j.sub.take(e)
			switch {
			case !ok || e.pos > sent+1: // fell behind the hub, or a gap: read the log
				if !ok {
					t.mu.Lock()
					j.sub = t.subscribe()
					t.mu.Unlock()
				}
				if done, err := readLog(); done || err != nil {
					sw.end()
					return
				}
			case e.pos == sent+1:
				sw.event(strconv.FormatInt(e.pos, 10), true, e.event)
				sent = e.pos
				if over(e.end) {
					sw.end()
					return
				}
			}
		}
	}
}

// sseWriter writes an SSE response: its headers and the reconnection time
// before the first event, then events and comments. Only an event ends
// with a blank line: a blank line dispatches, which sets a viewer's last
// event ID, and before a stream's first id field it would set it to "".
// Each write may block for timeout at most; after a failed write it writes
// nothing more.
type sseWriter struct {
	w        http.ResponseWriter
	rc       *http.ResponseController
	retry    time.Duration
	timeout  time.Duration
	started  bool
	deadline bool  // a write deadline is set on the connection
	dirty    bool  // written since the last flush
	err      error // of the first write that failed
	buf      []byte
}

// begin writes the headers and the retry field, once.
func (s *sseWriter) begin() {
	if s.started {
		return
	}
	s.started = true
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	s.w.WriteHeader(http.StatusOK)
	s.write(strconv.AppendInt(append(s.buf[:0], "retry: "...), s.retry.Milliseconds(), 10), "\n")
}

// event writes one event: an id field when hasID (with no value when id
// is ""), and data, which is one line. It returns the error of a write
// that failed, now or before.
func (s *sseWriter) event(id string, hasID bool, data []byte) error {
	s.begin()
	b := s.buf[:0]
	switch {
	case hasID && id == "":
		b = append(b, "id:\n"...)
	case hasID:
		b = append(append(append(b, "id: "...), id...), '\n')
	}
	b = append(append(b, "data: "...), data...)
	s.write(b, "\n\n")
	return s.err
}

// comment writes an SSE comment, which viewers pass over.
func (s *sseWriter) comment(text string) {
	s.begin()
	s.write(append(append(s.buf[:0], ": "...), text...), "\n")
}

func (s *sseWriter) write(b []byte, end string) {
	s.buf = append(b, end...)
	if s.err != nil {
		return
	}
	s.setDeadline()
	_, s.err = s.w.Write(s.buf)
	s.dirty = true
}

// setDeadline renews the connection's write deadline before a write: a
// viewer that reads nothing for s.timeout is cut off, rather than holding
// the relay's memory as long as its connection lasts.
func (s *sseWriter) setDeadline() {
	if s.rc.SetWriteDeadline(time.Now().Add(s.timeout)) == nil {
		s.deadline = true
	}
}

// flush sends what was written.
func (s *sseWriter) flush() {
	if s.dirty && s.err == nil {
		s.setDeadline()
		if err := s.rc.Flush(); !errors.Is(err, http.ErrNotSupported) {
			s.err = err
		}
		s.dirty = false
	}
}

// close clears the write deadline, which would otherwise outlive the
// response on a connection the server keeps for the next request.
func (s *sseWriter) close() {
	if s.deadline {
		_ = s.rc.SetWriteDeadline(time.Time{})
	}
}

// end ends the response: 204 No Content when nothing was written, which
// stops a browser's EventSource from reconnecting.
func (s *sseWriter) end() {
	if !s.started {
		s.w.WriteHeader(http.StatusNoContent)
		return
	}
	s.flush()
}
