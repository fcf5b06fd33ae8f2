// Following a thread across runs: GET /threads/{threadId}/events?follow=thread.

package relay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/aguistate/aguistate/internal/jsonv"
)

// followMode returns whether req asks to follow the thread across runs
// (follow=thread) rather than its run in progress (no follow parameter),
// or an error for another follow value.
func followMode(req *http.Request) (bool, error) {
	if req.URL.RawQuery == "" { // no query to parse
		return false, nil
	}
	q := req.URL.Query()
	if !q.Has("follow") {
		return false, nil
	}
	switch v := q.Get("follow"); v {
	case "thread":
		return true, nil
	default:
		return false, fmt.Errorf("aguistate: follow=%s: the relay follows a thread (follow=thread) or its run in progress (no follow)", jsonv.Quote(v))
	}
}

// followThread serves a viewer that follows thread t across runs: the
// join as a GET of the run in progress does it (a prelude, or the events
// after Last-Event-ID), then each later run's events as they come, whichever
// relay of the store runs it, with keep-alive comments between runs. On a
// thread that has no event it answers 200 and waits for its first run.
// The stream ends when the viewer leaves, when the relay closes (r.ctx)
// or drains between runs (Shutdown),
// when the thread is deleted, or when it loses its place in the log; the
// viewer reconnects with Last-Event-ID then. A Last-Event-ID past the
// log's end, which only a thread deleted since can give, gets 204: an
// EventSource stops. The caller holds t.mu, has synced t, counts the
// stream (admit), and releases t once it returns.
func (r *Relay) followThread(w http.ResponseWriter, req *http.Request, t *thread) {
	lastID := req.Header.Get("Last-Event-ID")
	if pos, err := strconv.ParseInt(lastID, 10, 64); err == nil && pos > t.pos {
		t.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
		return
	}
	ctx := req.Context()
	sw := r.sse(w)
	defer sw.close()
	j := joinPoint{gone: t.gone} // a thread with no event: from position 0, nothing before
	if t.pos > 0 {
		j = t.join(lastID)
	}
	gone := j.gone // the thread the follower joined: one made again after a delete is another
	t.mu.Unlock()
	for {
		sent, ok := r.streamRun(sw, req, t, &j, nil, false)
		if !ok {
			return
		}
		sw.begin() // 200 and the retry field, when the join had nothing to send
		sw.flush()
		if sw.err != nil {
			return
		}
		sw.first = nil // a join's first event is the join's, not a later run's
		r.rest(t)
		wctx, wcancel := context.WithCancel(ctx)
		stopDrain := context.AfterFunc(r.drainCtx, wcancel) // Shutdown sends a waiting follower to another relay
		stopClose := context.AfterFunc(r.ctx, wcancel)      // and Close ends the stream (streamRun sees Close itself)
		err := r.awaitRun(wctx, sw, t, sent)
		stopDrain()
		stopClose()
		wcancel()
		r.wake(t)
		if err != nil {
			return
		}
		t.mu.Lock()
		err = t.sync(ctx)
		switch {
		case err == nil && (t.pos < sent || t.gone != gone):
			err = errDeleted
		case err == nil:
			j = t.join(strconv.FormatInt(sent, 10))
		}
		t.mu.Unlock()
		if err != nil {
			r.followEnded(ctx, t, sent, err)
			return
		}
	}
}

// errDeleted reports a thread whose log ends before a follower's last
// position: it was deleted (and may have been made again).
var errDeleted = errors.New("aguistate: the thread was deleted")

// awaitRun waits until the log of t holds an event after position after,
// sending sw a keep-alive comment every r.keepAlive meanwhile, and returns
// nil then. It returns an error when the stream is to end: ctx's, the
// viewer's (a write failed), or errDeleted. A store that fails is retried,
// as the hub's watcher retries it, and the viewer kept. The wait holds no
// goroutine: the store's Follow blocks this one, for r.keepAlive at most.
func (r *Relay) awaitRun(ctx context.Context, sw *sseWriter, t *thread, after int64) error {
	written := time.Now() // the last write to the viewer
	failing := false      // the store failed since the last wait that timed out
	for wait := 100 * time.Millisecond; ; {
		wctx, cancel := context.WithDeadline(ctx, written.Add(r.keepAlive))
		var err error
		for _, ferr := range t.store.Follow(readAtEnd(wctx), t.id, after) {
			err = ferr
			break // an entry after after, or why none comes
		}
		due := wctx.Err() != nil
		cancel()
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err == nil:
			return nil
		case due: // a keep-alive is due
			failing, wait = false, 100*time.Millisecond
		case errors.Is(err, ErrOutOfRange):
			r.followEnded(ctx, t, after, err)
			return err
		default:
			if !failing {
				failing = true
				r.o.Logger.Warn("aguistate: relay: a follower's wait for the thread's next run failed; retrying",
					"request", requestID(ctx), "thread", t.id, "err", err)
			}
			pause := time.NewTimer(min(wait, time.Until(written.Add(r.keepAlive))))
			select {
			case <-ctx.Done():
				pause.Stop()
				return ctx.Err()
			case <-pause.C:
			}
			wait = min(2*wait, 5*time.Second)
			if time.Now().Before(written.Add(r.keepAlive)) {
				continue
			}
		}
		sw.comment("keep-alive")
		sw.flush()
		written = time.Now()
		if sw.err != nil {
			return sw.err
		}
	}
}

// followEnded logs why a follower's stream ends after position sent: at
// level Info when the thread was deleted, Warn otherwise (its place in the
// log is lost, or the store failed).
func (r *Relay) followEnded(ctx context.Context, t *thread, sent int64, err error) {
	if errors.Is(err, ErrOutOfRange) { // deleted, or trimmed past sent: the log tells which
		t.mu.Lock()
		if serr := t.sync(ctx); serr == nil && t.pos < sent {
			err = errDeleted
		}
		t.mu.Unlock()
	}
	level := slog.LevelWarn
	if errors.Is(err, errDeleted) {
		level = slog.LevelInfo
	}
	r.o.Logger.Log(ctx, level, "aguistate: relay: a follower's stream ends", "request", requestID(ctx), "thread", t.id,
		"sent", sent, "err", err)
}

// rest counts a follower of t that waits for the thread's next run. When
// every use of t is such a follower, t lets go of its Consumer, which
// holds the whole thread: the next run loads it again from the store.
func (r *Relay) rest(t *thread) {
	r.mu.Lock()
	t.resting++
	all := t.resting == t.refs
	r.mu.Unlock()
	if all {
		t.mu.Lock()
		if t.running == nil && t.stopWatch == nil {
			t.c = nil
		}
		t.mu.Unlock()
	}
}

// wake ends a wait that rest counted.
func (r *Relay) wake(t *thread) {
	r.mu.Lock()
	t.resting--
	r.mu.Unlock()
}
