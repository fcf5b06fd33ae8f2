// Draining and health: Shutdown, which lets the runs in progress end, and the route GET /healthz.

package relay

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// errDraining is the error of a new run asked of a Relay that shuts down.
var errDraining = errors.New("aguistate: the relay is shutting down")

// Shutdown shuts r down gracefully, as [http.Server.Shutdown] does a
// server: from the call on, a POST /agent that would start a run gets 503
// with Retry-After (a reconnect to a run is served), GET /healthz answers
// 503, and the event streams of viewers that follow no run this relay runs
// end, so that a browser's EventSource reconnects, to another replica once
// the load balancer has taken this one out. The runs in progress go on
// until they end, and their viewers get their last events; Shutdown then
// closes r ([Relay.Close]), which ends the other streams. When ctx ends
// first, Shutdown closes r at once, which ends the runs still in progress
// with a RUN_ERROR of code [CodeRelayStopped], and returns ctx.Err() once
// they have ended; it returns nil otherwise. Serve r until Shutdown
// returns, then shut the server down.
func (r *Relay) Shutdown(ctx context.Context) error {
	r.mu.Lock()
	if !r.draining {
		r.draining = true
		r.startDrain()
	}
	r.mu.Unlock()
	ended := make(chan struct{})
	go func() {
		r.runs.Wait() // no run starts once drain is set
		close(ended)
	}()
	var err error
	select {
	case <-ended:
	case <-ctx.Done():
		err = ctx.Err()
	}
	_ = r.Close()
	return err
}

// refusesRuns reports whether r starts no run: it is closed, or shuts
// down.
func (r *Relay) refusesRuns() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed || r.draining
}

// isClosed reports whether r is closed.
func (r *Relay) isClosed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

// runsHere reports whether this relay runs a run of t now.
func (t *thread) runsHere() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.running != nil
}

// healthTimeout bounds the store's answer to the probe of GET /healthz,
// and healthFor is how long an answer is reused: the route needs no
// token, so a flood of requests costs the store one probe per healthFor.
const (
	healthTimeout = 2 * time.Second
	healthFor     = time.Second
)

// getHealth serves GET /healthz, the one route that calls no Authorize
// hook: 200 "ok" while r serves and its store answers (a listing of one
// thread of tenant "", within 2 s), else 503 with the reason ("draining",
// "closed", "the store failed"). The store's answer is reused for a
// second.
func (r *Relay) getHealth(w http.ResponseWriter, req *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	r.mu.Lock()
	closed, drain := r.closed, r.draining
	r.mu.Unlock()
	switch {
	case closed:
		http.Error(w, "closed", http.StatusServiceUnavailable)
		return
	case drain:
		http.Error(w, "draining", http.StatusServiceUnavailable)
		return
	}
	if err := r.probe(req.Context()); err != nil {
		r.o.Logger.Warn("aguistate: relay: the health probe of the store failed", "request", requestID(req.Context()), "err", err)
		http.Error(w, "the store failed", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok\n"))
}

// probe returns the store's answer to a listing of one thread, or the one
// it returned less than healthFor ago. Concurrent calls wait for one probe.
func (r *Relay) probe(ctx context.Context) error {
	r.health.Lock()
	defer r.health.Unlock()
	if now := time.Now(); now.Before(r.healthAt.Add(healthFor)) {
		return r.healthErr
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), healthTimeout)
	defer cancel()
	_, _, err := r.o.Store.Threads(ctx, "", 1)
	r.healthAt, r.healthErr = time.Now(), err
	return err
}
