// Viewers: joining a thread by Last-Event-ID or by prelude, and following it as SSE.

package relay

import (
	"context"
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
	t, thread := r.openViewer(w, req)
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
	r.stream(w, req, t, &j, nil, false)
}

// openViewer opens, as open does for a viewer, the thread of a GET of
// its events, once the Authorize hook grants ActionJoin on it, and reports
// whether the viewer follows the thread across runs (see followMode). It
// returns nil when it has answered req. It keeps getEvents's frame small,
// which the viewer's stream runs under (see streamRun).
func (r *Relay) openViewer(w http.ResponseWriter, req *http.Request) (*thread, bool) {
	id := req.PathValue("threadId")
	g, ok := r.authorize(w, req, ActionJoin, id)
	if !ok {
		return nil, false
	}
	thread, err := followMode(req)
	if err != nil {
		r.fail(w, req, http.StatusBadRequest, err.Error(), nil)
		return nil, false
	}
	return r.open(w, req, g, id, true), thread
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

// stream sends a viewer the thread's events from j on (it does not change
// *j), as SSE, until the run it follows ends: the local run ru, when the
// viewer is that run's POST, ends when its events are sent; otherwise the
// stream ends after a RUN_FINISHED or RUN_ERROR, or once caught up when no
// run is in progress.
// It answers 204 when there is nothing to send. A stream that cannot go on
// (it lost its place in the log, or the store holds fewer events than it
// acknowledged, or fails) ends: for a POST (post), with a RUN_ERROR of
// code CodeStreamLost that only this client gets, so that a client that
// does not reconnect learns that it did not get the run's end; for a GET,
// as it is, so that an EventSource reconnects with Last-Event-ID.
func (r *Relay) stream(w http.ResponseWriter, req *http.Request, t *thread, j *joinPoint, ru *run, post bool) {
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
//
// The join (catchUp) and the following of the run (follow) are methods of
// a viewerStream, each with a frame of its own: the first event goes out
// on a short stack, which a new connection's goroutine need not grow.
func (r *Relay) streamRun(sw *sseWriter, req *http.Request, t *thread, j *joinPoint, ru *run, post bool) (sent int64, ok bool) {
	s := &viewerStream{r: r, sw: sw, ctx: req.Context(), t: t, j: *j, ru: ru, post: post, sent: j.after, kind: joinLastEventID}
	defer s.unsubscribe()
	switch {
	case j.prelude != nil:
		s.kind = joinPrelude
	case ru != nil:
		s.kind = joinRun
	}
	if !sw.started {
		sw.first = r.tel.joins(s.ctx, &s.kind)
	}
	if ru != nil { // the response ends once the run has: a next run of the thread is not refused
		defer s.awaitRunEnd()
	}
	switch done, err := s.catchUp(); {
	case err != nil && !sw.started && !errors.Is(err, errDeleted):
		r.storeFailed(sw.w, req, err)
		return s.sent, false
	case err != nil:
		s.lose(err)
		return s.sent, false
	case done || !s.j.running:
		return s.sent, true
	}
	ok = s.follow()
	return s.sent, ok
}

// viewerStream is the state of one viewer's stream, as streamRun sends
// it: where the viewer joined, the last position sent, and the run (of a
// POST) that it follows.
type viewerStream struct {
	r       *Relay
	sw      *sseWriter
	ctx     context.Context // the request's
	t       *thread
	j       joinPoint
	ru      *run // the POST's run, or nil
	post    bool
	sent    int64  // the last position sent
	kind    string // how the viewer joined, for the metrics
	atEnd   bool   // the next read is expected to find nothing after sent
	dropped *sub   // the subscription the hub dropped, until the stream is back on it
}

// unsubscribe ends the stream's subscription to the hub, if any, and
// trims the log as far as the subscription held it.
func (s *viewerStream) unsubscribe() {
	if s.j.sub == nil {
		return
	}
	t := s.t
	t.mu.Lock()
	if s.dropped != nil {
		delete(t.lagging, s.dropped)
	}
	before := t.unsubscribe(s.j.sub)
	t.mu.Unlock()
	ctx, cancel := s.r.storeContext(s.r.ctx)
	defer cancel()
	s.r.trim(ctx, t, before)
}

// awaitRunEnd waits until the stream's run ends, the viewer leaves or the
// relay closes.
func (s *viewerStream) awaitRunEnd() {
	select {
	case <-s.ru.done:
	case <-s.ctx.Done():
	case <-s.r.ctx.Done():
	}
}

// catchUp sends the join: the prelude if any, then the log's events after
// it (see rejoin when the log no longer holds them). It reports whether the
// stream is over (see readLog).
func (s *viewerStream) catchUp() (bool, error) {
	if s.j.prelude != nil {
		s.sendPrelude()
	}
	if s.j.hub {
		return false, nil
	}
	s.atEnd = !s.j.behind
	done, err := s.readLog()
	if errors.Is(err, ErrOutOfRange) && !s.sw.started { // the log no longer holds what follows Last-Event-ID
		return s.rejoin()
	}
	return done, err
}

// rejoin joins a viewer whose Last-Event-ID the log no longer holds, and
// to whom nothing was sent, by a prelude, then the log's events after it.
// It reports whether the stream is over (see readLog).
func (s *viewerStream) rejoin() (bool, error) {
	t := s.t
	t.mu.Lock()
	var trim int64
	err := t.sync(s.ctx)
	switch {
	case err == nil && t.gone != s.j.gone: // the log is gone, or another thread's: no prelude of it
		err = errDeleted
	case err == nil:
		if s.j.sub != nil {
			trim = t.unsubscribe(s.j.sub)
		}
		s.j = t.join("")
	}
	t.mu.Unlock()
	s.r.trim(s.ctx, t, trim)
	if err != nil {
		return false, err
	}
	s.sendPrelude()
	s.atEnd = !s.j.behind
	return s.readLog()
}

// sendPrelude sends the prelude's events as it makes them: the first with
// an empty id (a reconnect during the prelude asks for a new one), and the
// last with the id of the join position. The first is never the last (see
// aguistate.Consumer.PreludeSeq), and each other is held until the next is
// made, which tells whether it is the last.
func (s *viewerStream) sendPrelude() {
	sw := s.sw
	s.kind = joinPrelude
	var held []byte
	size, n := 0, 0
events:
	for ev := range s.j.prelude {
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
		sw.event(strconv.FormatInt(s.j.after, 10), true, held)
	case n == 1: // never: an event with only an id sets it
		sw.write(append(strconv.AppendInt(append(sw.buf[:0], "id: "...), s.j.after, 10), '\n'), "\n")
	}
	s.r.tel.prelude(s.ctx, size)
	s.sent = s.j.after
}

// over reports whether the stream has sent all it follows, once it has
// sent an event that ends a run (end) or none (when the run ends).
func (s *viewerStream) over(end bool) bool {
	ru := s.ru
	if ru == nil {
		return end
	}
	select {
	case <-ru.done:
		s.t.mu.Lock()
		last, lost := ru.lastPos, ru.lost
		s.t.mu.Unlock()
		if lost { // the relay that has the thread ends the run
			return end
		}
		return s.sent >= last
	default:
		return false
	}
}

// deleted reports whether the thread was deleted through this relay since
// the viewer joined it: a log or hub of the id then holds another thread,
// whose positions past sent would read as this one's next.
func (s *viewerStream) deleted() bool {
	select {
	case <-s.j.gone:
		return true
	default:
		return false
	}
}

// readLog sends the log's events after the last sent, up to its end, and
// reports whether the stream is over: its run's end was sent, or the
// viewer is gone; errDeleted when the thread was deleted (see deleted).
func (s *viewerStream) readLog() (bool, error) {
	rctx := s.ctx
	if s.atEnd {
		rctx, s.atEnd = readAtEnd(rctx), false
	}
	for e, err := range s.t.store.Read(rctx, s.t.id, s.sent) {
		if err != nil {
			return false, err
		}
		if s.deleted() { // the read may have reached a thread made again since
			return false, errDeleted
		}
		if s.sw.event(strconv.FormatInt(e.Pos, 10), true, e.Event) != nil {
			return true, nil // the viewer is gone
		}
		s.sent = e.Pos
		if s.over(endsRun(e.Event)) {
			return true, nil
		}
	}
	return false, nil
}

// lose ends a stream that cannot go on, for err: without a word when the
// thread was deleted through this relay (its log is gone, and the stream
// knows why), as the follow loop does.
func (s *viewerStream) lose(err error) {
	if s.deleted() {
		s.sw.end()
		return
	}
	s.r.o.Logger.Warn("aguistate: relay: a viewer's stream lost its place", "request", requestID(s.ctx), "thread", s.t.id,
		"sent", s.sent, "err", err)
	if s.post {
		s.sw.event("", false, runError(CodeStreamLost, "the relay lost its place in the thread's log: join the thread again"))
	}
	s.sw.end()
}

// follow follows the run once the join is sent: it subscribes to the hub
// and reads what the hub delivered before, then sends the hub's events as
// they come, and keep-alive comments, until the stream is over. It reports
// whether it sent all it follows (see streamRun).
func (s *viewerStream) follow() bool {
	r, sw, t, ctx := s.r, s.sw, s.t, s.ctx
	sw.begin()
	if s.j.sub == nil { // subscribe once the join is sent, and read what the hub delivered before
		t.mu.Lock()
		s.j.sub = t.subscribe()
		from := t.hubPos
		t.mu.Unlock()
		if from > s.sent {
			switch done, err := s.readLog(); {
			case err != nil:
				s.lose(err)
				return false
			case done:
				return true
			}
		}
	}
	tick := time.NewTicker(r.keepAlive)
	defer tick.Stop()
	var runDone <-chan struct{}
	if s.ru != nil {
		runDone = s.ru.done
	}
	var grace <-chan time.Time // fires a while after ru ended
	drain := r.drainCtx.Done() // nil once the stream has seen it
	for {
		if grace != nil && len(s.j.sub.ch) == 0 && s.over(false) {
			return true
		}
		if len(s.j.sub.ch) == 0 {
			sw.flush()
		}
		if sw.err != nil { // the viewer is gone, or read nothing for WriteTimeout
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-r.ctx.Done():
			// The relay closes: send what the log holds after sent, the
			// RUN_ERROR (CodeRelayStopped) that a run of this relay recorded
			// as it ended, which the hub may not have delivered yet.
			_, _ = s.readLog()
			return false
		case <-s.j.gone: // deleted: nothing more to follow
			sw.end()
			return false
		case <-drain: // the relay shuts down: a viewer of a run that another relay runs reconnects elsewhere
			drain = nil
			if s.ru == nil && !t.runsHere() {
				sw.end()
				return false
			}
		case <-tick.C:
			sw.comment("keep-alive")
		case <-runDone:
			runDone, grace = nil, time.After(endGrace)
		case <-grace: // the hub has not delivered the run's last events
			grace = time.After(endGrace)
			switch done, err := s.finish(); {
			case err != nil:
				s.lose(err)
				return false
			case done:
				return true
			}
		case e, ok := <-s.j.sub.ch:
			s.j.sub.take(e)
			if s.deleted() { // the hub dropped j.sub as the thread was deleted, or e is of a thread made again since
				sw.end()
				return false
			}
			switch {
			case !ok || e.pos > s.sent+1: // fell behind the hub, or a gap: read the log
				if !ok { // back on the hub, once the log brings the stream there
					t.mu.Lock()
					s.dropped, s.j.sub = s.j.sub, t.subscribe()
					s.j.sub.holds = s.dropped.holds
					t.mu.Unlock()
				}
				done, err := s.readLog()
				if s.dropped != nil {
					t.mu.Lock()
					trim := t.caughtUp(s.dropped)
					t.mu.Unlock()
					s.dropped = nil
					r.trim(ctx, t, trim)
				}
				switch {
				case err != nil:
					s.lose(err)
					return false
				case done:
					return true
				}
			case e.pos == s.sent+1:
				sw.event(strconv.FormatInt(e.pos, 10), true, e.event)
				s.sent = e.pos
				if s.over(e.end) {
					return true
				}
			}
		}
	}
}

// endGrace is how long after its run ends a POST's stream waits for the
// hub to deliver the run's last events before it reads them from the log.
const endGrace = time.Second

// finish brings the stream of a POST whose run ended a while ago
// (endGrace) to the run's last event, when the hub has delivered all it
// will: the events after the last sent are read from the log, which no
// trim of this relay has passed (a trim waits for the hub). It reports
// whether the stream is over (see over), and returns an error when the log
// ends before the last position that the store acknowledged, or cannot be
// read.
func (s *viewerStream) finish() (bool, error) {
	t, ru := s.t, s.ru
	t.mu.Lock()
	last, lost, delivered := ru.lastPos, ru.lost, t.hubPos <= s.sent
	t.mu.Unlock()
	if lost || !delivered { // the relay that has the thread ends the run; or the hub delivers the rest
		return false, nil
	}
	done, err := s.readLog()
	switch {
	case err != nil || done:
		return done, err
	case s.sent < last:
		return false, fmt.Errorf("aguistate: the log ends at %d, but the store acknowledged the run's events up to %d", s.sent, last)
	}
	return s.over(false), nil
}
