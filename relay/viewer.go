// Viewers: joining a thread by Last-Event-ID or by prelude, and following it as SSE.

package relay

import (
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"strconv"
	"time"

	"github.com/aguistate/aguistate"
	"github.com/aguistate/aguistate/internal/jsonv"
)

// keepAlive is how long a viewer's stream may stay silent: an SSE comment
// goes out then, so that proxies keep the connection. A Relay keeps it in
// its keepAlive field, which tests shorten.
const keepAlive = 15 * time.Second

// joinPoint is where a viewer joins a thread: the prelude to send first,
// if any, and the position after which the log's events follow, with the
// viewer's subscription to the hub once it has one.
type joinPoint struct {
	prelude iter.Seq[[]byte] // made as it is sent (see sendPrelude)
	after   int64
	behind  bool // the log held events after after: a read starts at after+1 (see readAtEnd)
	running bool
	sub     *sub            // nil until the stream subscribes (see streamRun), and when no run is in progress
	hub     bool            // sub delivers every event after after: the log need not be read first
	gone    <-chan struct{} // closed when the thread is deleted through this relay
}

// join returns where a viewer with the SSE Last-Event-ID lastID joins t:
// after lastID, when it names a position of the log (which the log may no
// longer hold: stream then sends a prelude); else with a prelude that
// brings it to t.pos. The stream subscribes to the hub once it has sent
// what comes before (see streamRun). The caller holds t.mu and has synced
// t.
func (t *thread) join(lastID string) joinPoint {
	j := joinPoint{running: t.c.Running(), gone: t.gone}
	if t.isPosition(lastID) {
		j.after, _ = strconv.ParseInt(lastID, 10, 64)
	} else {
		j.prelude, j.after = t.c.PreludeSeq(), t.pos
	}
	j.behind = j.after < t.pos
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
	id := req.PathValue("threadId")
	g, ok := r.authorize(w, req, ActionJoin, id)
	if !ok {
		return
	}
	thread, err := followMode(req)
	if err != nil {
		r.fail(w, req, http.StatusBadRequest, err.Error(), nil)
		return
	}
	t := r.open(w, req, g, id, true)
	if t == nil {
		return
	}
	defer r.release(t)
	defer r.leave(t)
	if thread {
		r.followThread(w, req, t)
		return
	}
	if t.pos == 0 {
		t.mu.Unlock()
		r.noThread(w, req, t)
		return
	}
	j := t.join(req.Header.Get("Last-Event-ID"))
	t.mu.Unlock()
	r.stream(w, req, t, j, nil, false)
}

// noThread answers a request for thread t, which has no event: 404, as for
// a thread of another tenant.
func (r *Relay) noThread(w http.ResponseWriter, req *http.Request, t *thread) {
	r.fail(w, req, http.StatusNotFound, "aguistate: no thread "+jsonv.Quote(t.id), nil)
}

// getThread serves GET /threads/{threadId}: the thread's state and
// messages, with Cache-Control no-store (the next run changes them).
func (r *Relay) getThread(w http.ResponseWriter, req *http.Request) {
	t := r.openRoute(w, req, ActionRead)
	if t == nil {
		return
	}
	defer r.release(t)
	c, pos := t.c, t.pos
	t.mu.Unlock()
	if pos == 0 {
		r.noThread(w, req, t)
		return
	}
	body, err := json.Marshal(struct {
		State    aguistate.Value     `json:"state"`
		Messages []aguistate.Message `json:"messages"`
	}{c.State(), c.Messages()})
	if err != nil {
		r.fail(w, req, http.StatusInternalServerError, "aguistate: the thread cannot be written as JSON", err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(append(body, '\n'))
}

// stream sends a viewer the thread's events from j on, as SSE, until the
// run it follows ends: the local run ru, when the viewer is that run's
// POST, ends when its events are sent; otherwise the stream ends after a
// RUN_FINISHED or RUN_ERROR, or once caught up when no run is in progress.
// It answers 204 when there is nothing to send. A stream that cannot go on
// (it lost its place in the log, or the store holds fewer events than it
// acknowledged, or fails) ends: for a POST (post), with a RUN_ERROR of
// code CodeStreamLost that only this client gets, so that a client that
// does not reconnect learns that it did not get the run's end; for a GET,
// as it is, so that an EventSource reconnects with Last-Event-ID.
func (r *Relay) stream(w http.ResponseWriter, req *http.Request, t *thread, j joinPoint, ru *run, post bool) {
	sw := r.sse(w)
	defer sw.close()
	if _, ok := r.streamRun(sw, req, t, j, ru, post); ok {
		sw.end()
	}
}

// sse returns the writer of an SSE response to w.
func (r *Relay) sse(w http.ResponseWriter) *sseWriter {
	return &sseWriter{w: w, rc: http.NewResponseController(w), retry: r.o.Retry, timeout: r.o.WriteTimeout}
}

// streamRun does what stream does, writing to sw, and returns the last
// position sent, with ok true when it has sent all it follows (the
// run's end, or the log's when no run is in progress), the response then
// left open (sw.end ends it). Otherwise the response needs nothing more:
// the viewer is gone, the relay closed, or the stream lost its place.
func (r *Relay) streamRun(sw *sseWriter, req *http.Request, t *thread, j joinPoint, ru *run, post bool) (sent int64, ok bool) {
	w, ctx := sw.w, req.Context()
	var dropped *sub // the subscription the hub dropped, until the stream is back on it
	defer func() {
		if j.sub != nil {
			t.mu.Lock()
			if dropped != nil {
				delete(t.lagging, dropped)
			}
			before := t.unsubscribe(j.sub)
			t.mu.Unlock()
			ctx, cancel := r.storeContext(r.ctx)
			defer cancel()
			r.trim(ctx, t, before)
		}
	}()
	kind := joinLastEventID // how the viewer joins, for the metrics
	switch {
	case j.prelude != nil:
		kind = joinPrelude
	case ru != nil:
		kind = joinRun
	}
	if !sw.started {
		sw.first = r.tel.joins(ctx, &kind)
	}
	if ru != nil { // the response ends once the run has: a next run of the thread is not refused
		defer func() {
			select {
			case <-ru.done:
			case <-ctx.Done():
			case <-r.ctx.Done():
			}
		}()
	}
	sent = j.after
	// sendPrelude sends the prelude's events as it makes them: the first
	// with an empty id (a reconnect during the prelude asks for a new one),
	// and the last with the id of the join position. The first is never the
	// last (see aguistate.Consumer.PreludeSeq), and each other is held until
	// the next is made, which tells whether it is the last.
	sendPrelude := func() {
		kind = joinPrelude
		var held []byte
		size, n := 0, 0
	events:
		for ev := range j.prelude {
			switch n {
			case 0:
				if sw.event("", true, ev) != nil {
					break events // the viewer is gone
				}
			case 1:
			default:
				if sw.event("", false, held) != nil {
					break events
				}
			}
			held, size, n = ev, size+len(ev), n+1
		}
		switch {
		case sw.err != nil:
		case n > 1:
			sw.event(strconv.FormatInt(j.after, 10), true, held)
		case n == 1: // never: an event with only an id sets it
			sw.write(append(strconv.AppendInt(append(sw.buf[:0], "id: "...), j.after, 10), '\n'), "\n")
		}
		r.tel.prelude(ctx, size)
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
	// deleted reports whether the thread was deleted through this relay
	// since the viewer joined it: a log or hub of the id then holds another
	// thread, whose positions past sent would read as this one's next.
	deleted := func() bool {
		select {
		case <-j.gone:
			return true
		default:
			return false
		}
	}
	// readLog sends the log's events after sent, up to its end, and reports
	// whether the stream is over; errDeleted when the thread was deleted.
	atEnd := false // the next read is expected to find nothing after sent
	readLog := func() (bool, error) {
		rctx := ctx
		if atEnd {
			rctx, atEnd = readAtEnd(ctx), false
		}
		for e, err := range t.store.Read(rctx, t.id, sent) {
			if err != nil {
				return false, err
			}
			if deleted() { // the read may have reached a thread made again since
				return false, errDeleted
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

	// lose ends a stream that cannot go on, for err: without a word when the
	// thread was deleted through this relay (its log is gone, and the stream
	// knows why), as the follow loop does.
	lose := func(err error) {
		select {
		case <-j.gone:
			sw.end()
			return
		default:
		}
		r.o.Logger.Warn("aguistate: relay: a viewer's stream lost its place", "request", requestID(ctx), "thread", t.id,
			"sent", sent, "err", err)
		if post {
			sw.event("", false, runError(CodeStreamLost, "the relay lost its place in the thread's log: join the thread again"))
		}
		sw.end()
	}

	// closing sends, as the relay closes, what the log holds after sent: the
	// RUN_ERROR (CodeRelayStopped) that a run of this relay recorded as it
	// ended, which the hub may not have delivered yet.
	closing := func() { _, _ = readLog() }

	if j.prelude != nil {
		sendPrelude()
	}
	var done bool
	var err error
	if !j.hub {
		atEnd = !j.behind
		done, err = readLog()
	}
	if errors.Is(err, ErrOutOfRange) && !sw.started { // the log no longer holds what follows Last-Event-ID
		t.mu.Lock()
		var trim int64
		switch err = t.sync(ctx); {
		case err == nil && t.gone != j.gone: // the log is gone, or another thread's: no prelude of it
			err = errDeleted
		case err == nil:
			if j.sub != nil {
				trim = t.unsubscribe(j.sub)
			}
			j = t.join("")
		}
		t.mu.Unlock()
		r.trim(ctx, t, trim)
		if err == nil {
			sendPrelude()
			atEnd = !j.behind
			done, err = readLog()
		}
	}
	switch {
	case err != nil && !sw.started && !errors.Is(err, errDeleted):
		r.storeFailed(w, req, err)
		return sent, false
	case err != nil:
		lose(err)
		return sent, false
	case done || !j.running:
		return sent, true
	}
	sw.begin()
	if j.sub == nil { // subscribe once the join is sent, and read what the hub delivered before
		t.mu.Lock()
		j.sub = t.subscribe()
		from := t.hubPos
		t.mu.Unlock()
		if from > sent {
			switch done, err := readLog(); {
			case err != nil:
				lose(err)
				return sent, false
			case done:
				return sent, true
			}
		}
	}
	tick := time.NewTicker(r.keepAlive)
	defer tick.Stop()
	var runDone <-chan struct{}
	if ru != nil {
		runDone = ru.done
	}
	var grace <-chan time.Time // fires a while after ru ended
	drain := r.drainCtx.Done() // nil once the stream has seen it
	for {
		if grace != nil && len(j.sub.ch) == 0 && over(false) {
			return sent, true
		}
		if len(j.sub.ch) == 0 {
			sw.flush()
		}
		if sw.err != nil { // the viewer is gone, or read nothing for WriteTimeout
			return sent, false
		}
		select {
		case <-ctx.Done():
			return sent, false
		case <-r.ctx.Done():
			closing()
			return sent, false
		case <-j.gone: // deleted: nothing more to follow
			sw.end()
			return sent, false
		case <-drain: // the relay shuts down: a viewer of a run that another relay runs reconnects elsewhere
			drain = nil
			if ru == nil && !t.runsHere() {
				sw.end()
				return sent, false
			}
		case <-tick.C:
			sw.comment("keep-alive")
		case <-runDone:
			runDone, grace = nil, time.After(endGrace)
		case <-grace: // the hub has not delivered the run's last events
			grace = time.After(endGrace)
			switch done, err := r.finishStream(t, ru, &sent, over, readLog); {
			case err != nil:
				lose(err)
				return sent, false
			case done:
				return sent, true
			}
		case e, ok := <-j.sub.ch:
			j.sub.take(e)
			if deleted() { // the hub dropped j.sub as the thread was deleted, or e is of a thread made again since
				sw.end()
				return sent, false
			}
			switch {
			case !ok || e.pos > sent+1: // fell behind the hub, or a gap: read the log
				if !ok { // back on the hub, once the log brings the stream there
					t.mu.Lock()
					dropped, j.sub = j.sub, t.subscribe()
					j.sub.holds = dropped.holds
					t.mu.Unlock()
				}
				done, err := readLog()
				if dropped != nil {
					t.mu.Lock()
					trim := t.caughtUp(dropped)
					t.mu.Unlock()
					dropped = nil
					r.trim(ctx, t, trim)
				}
				switch {
				case err != nil:
					lose(err)
					return sent, false
				case done:
					return sent, true
				}
			case e.pos == sent+1:
				sw.event(strconv.FormatInt(e.pos, 10), true, e.event)
				sent = e.pos
				if over(e.end) {
					return sent, true
				}
			}
		}
	}
}

// endGrace is how long after its run ends a POST's stream waits for the
// hub to deliver the run's last events before it reads them from the log.
const endGrace = time.Second

// finishStream brings the stream of a POST whose run ru ended a while ago
// (endGrace) to the run's last event, when the hub has delivered all it
// will: the events after the stream's position (*sent) are read from the
// log, which no trim of this relay has passed (a trim waits for the hub).
// It reports whether the stream is over (see over), and returns an error
// when the log ends before the last position that the store acknowledged,
// or cannot be read.
func (r *Relay) finishStream(t *thread, ru *run, sent *int64, over func(bool) bool, readLog func() (bool, error)) (bool, error) {
	t.mu.Lock()
	last, lost, delivered := ru.lastPos, ru.lost, t.hubPos <= *sent
	t.mu.Unlock()
	if lost || !delivered { // the relay that has the thread ends the run; or the hub delivers the rest
		return false, nil
	}
	done, err := readLog()
	switch {
	case err != nil || done:
		return done, err
	case *sent < last:
		return false, fmt.Errorf("aguistate: the log ends at %d, but the store acknowledged the run's events up to %d", *sent, last)
	}
	return over(false), nil
}
