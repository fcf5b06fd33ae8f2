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
// answer comes once that end is recorded.
func (r *Relay) postStop(w http.ResponseWriter, req *http.Request) {
	id := req.PathValue("threadId")
	g, ok := r.authorize(w, req, ActionStop, id)
	if !ok {
		return
	}
	t := r.open(w, req, g, id, false)
	if t == nil {
		return
	}
	defer r.release(t)
	ru, pos, running := t.running, t.pos, t.c.Running()
	t.mu.Unlock()
	switch {
	case ru != nil:
		ctx, cancel := r.storeContext(req.Context())
		defer cancel()
		r.stopRun(ctx, ru)
	case pos == 0:
		r.noThread(w, req, t)
		return
	case !running:
		r.fail(w, req, http.StatusConflict, "aguistate: the thread has no run in progress", nil)
		return
	default:
		r.fail(w, req, http.StatusConflict, "aguistate: the thread's run in progress runs on another relay", nil)
		return
	}
	w.WriteHeader(http.StatusAccepted)
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
