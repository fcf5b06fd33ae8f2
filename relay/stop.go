// Stopping a run: the route POST /threads/{threadId}/stop, and Stop, which a Go client calls.

package relay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/aguistate/aguistate"
)

// postStop serves POST /threads/{threadId}/stop: it stops the thread's run
// in progress and answers 202, or 409 when none runs (404 when the thread
// has no event). The relay that runs the run cancels its request to the
// agent and, unless the agent ended the run meanwhile, records a
// RUN_FINISHED with outcome "cancelled". When this relay runs it, the
// answer comes once that end is recorded; another relay gets the stop
// through the store ([Store.Stop]) at its next lease renewal, within a
// third of LeaseTTL. A run that no relay holds the lease of (its relay
// stopped) is ended here.
func (r *Relay) postStop(w http.ResponseWriter, req *http.Request) {
	t := r.openRoute(w, req, ActionStop)
	if t == nil {
		return
	}
	defer r.release(t)
	ru, pos, running := t.running, t.pos, t.c.Running()
	t.mu.Unlock()
	ctx, cancel := r.storeContext(req.Context())
	defer cancel()
	switch {
	case ru != nil:
		r.stopRun(ctx, ru)
	case pos == 0:
		r.noThread(w, req, t)
		return
	case !running:
		r.notRunning(w, req)
		return
	default:
		if stopped, err := r.stopElsewhere(ctx, t); err != nil {
			r.storeFailed(w, req, err)
			return
		} else if !stopped {
			r.notRunning(w, req)
			return
		}
	}
	w.WriteHeader(http.StatusAccepted)
}

// stopElsewhere stops t's run in progress, which this relay does not run:
// it asks the relay that holds the lease to stop it, or, when none does,
// ends it here. It reports false when no run is in progress after all.
func (r *Relay) stopElsewhere(ctx context.Context, t *thread) (bool, error) {
	for range 3 { // a lease taken or let go meanwhile
		err := t.store.Stop(ctx, t.id)
		if !errors.Is(err, ErrNotLeased) {
			return err == nil, err
		}
		t.mu.Lock()
		ended, err := t.endOrphan(ctx, true)
		running := t.c != nil && t.c.Running()
		t.mu.Unlock()
		switch {
		case ended:
			return true, nil
		case errors.Is(err, ErrLeased):
			continue
		case err != nil:
			return false, err
		case !running:
			return false, nil
		}
	}
	return false, errors.New("aguistate: the thread's lease changed hands while it was stopped")
}

// notRunning answers a stop of a thread with no run in progress.
func (r *Relay) notRunning(w http.ResponseWriter, req *http.Request) {
	r.fail(w, req, http.StatusConflict, "aguistate: the thread has no run in progress", nil)
}

// Stop stops the run in progress of thread on the relay that a reaches:
// a.URL is the relay's POST /agent route, as a client that runs threads
// through the relay sets it, and Stop POSTs to the route beside it,
// /threads/{thread}/stop, with a.Header through a.Client (it follows no
// redirect). The run ends with RUN_FINISHED, outcome "cancelled" (AG-UI
// 1.0), which the client's [aguistate.Consumer.RunAgent] returns as
// RunResult.Outcome "cancelled".
//
// It returns nil when the relay stopped a run (202); an error wrapping
// [ErrNotRunning] when the thread has no run in progress (409); an
// *[aguistate.HTTPError] for any other answer (401 or 403 from the
// relay's [Authorize] hook, 404 for a thread without events); ctx.Err()
// when ctx ends; or the client's error, wrapped.
func Stop(ctx context.Context, a *aguistate.Agent, thread string) error {
	if a == nil {
		return errors.New("aguistate: Stop: nil *Agent")
	}
	u, err := url.Parse(a.URL)
	if err != nil || !strings.HasSuffix(u.Path, "/agent") {
		return fmt.Errorf("aguistate: Stop: the Agent's URL %q is not a relay's /agent route", a.URL)
	}
	base := strings.TrimSuffix(u.EscapedPath(), "/agent")
	u.Path = strings.TrimSuffix(u.Path, "/agent") + "/threads/" + thread + "/stop"
	u.RawPath = base + "/threads/" + url.PathEscape(thread) + "/stop"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), nil)
	if err != nil {
		return fmt.Errorf("aguistate: Stop: %w", err)
	}
	req.Header = a.Header.Clone()
	if req.Header == nil {
		req.Header = make(http.Header)
	}
	client := http.DefaultClient
	if a.Client != nil {
		client = a.Client
	}
	own := *client
	own.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := own.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("aguistate: Stop: %w", err)
	}
	defer resp.Body.Close()
	excerpt, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	switch resp.StatusCode {
	case http.StatusAccepted:
		return nil
	case http.StatusConflict:
		return fmt.Errorf("%w: thread %q", ErrNotRunning, thread)
	}
	return &aguistate.HTTPError{StatusCode: resp.StatusCode, Status: resp.Status, ContentType: resp.Header.Get("Content-Type"), Body: string(excerpt)}
}
