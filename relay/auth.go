// Authorization: the hook every route calls, what it is asked, and what it grants.

package relay

import (
	"errors"
	"fmt"
	"net/http"
)

// Action is what a request asks of a thread, as [Authorize] is told.
type Action string

// The actions of a relay's routes.
const (
	// ActionRun: POST /agent, a run of the thread (or a reconnect to its
	// last run, which the relay tells apart only after the hook); asked
	// first with the thread "", before the body is read (see [Authorize]).
	ActionRun Action = "run"
	// ActionRead: GET /threads/{threadId}, the thread's state and messages.
	ActionRead Action = "read"
	// ActionJoin: GET /threads/{threadId}/events, the thread's events.
	ActionJoin Action = "join"
	// ActionStop: POST /threads/{threadId}/stop, the end of its run.
	ActionStop Action = "stop"
	// ActionList: GET /threads, a list of the tenant's threads; the thread
	// is "".
	ActionList Action = "list"
	// ActionDelete: DELETE /threads/{threadId}, the removal of a thread.
	ActionDelete Action = "delete"
)

// Authorize decides whether req may do action on thread, and in whose name.
// A [Relay] calls it (as [Options].Authorize) on every route but GET
// /healthz before it reads or runs anything, with the thread id of the
// path. POST /agent asks it twice: with [ActionRun] and the thread "",
// before the body is read, so that a request that it refuses (one that
// does not authenticate) gets its answer without the relay reading or
// holding a byte of its body; then with ActionRun and the run input's
// thread, once the body is read (within MaxInput), whose Grant the run
// uses. A hook that decides by the thread should grant the first call to
// any request it may grant some thread (its Grant is not used). It may be
// called concurrently.
//
// It returns the [Grant] of the request, or an error that refuses it: one
// wrapping [ErrUnauthenticated] gets 401 (with WWW-Authenticate: Bearer,
// RFC 6750), one wrapping [ErrForbidden] 403, any other 503 (the hook could
// not decide, as when its own store fails). The answer's text names none
// of the error's; the Logger gets it. To keep threads of one tenant from
// another, name the tenant in the Grant rather than refuse a thread that
// belongs to another: the relay then answers as for a thread that does not
// exist, and ids cannot be guessed.
type Authorize func(req *http.Request, action Action, thread string) (Grant, error)

// Grant is what [Authorize] allows a request.
type Grant struct {
	// Tenant names the set of threads the request's thread belongs to, at
	// most [MaxTenant] bytes: two tenants' thread "t1" are two threads, in
	// every store ([Store.Tenant]). "" is the store's own set, the only one
	// without a hook.
	Tenant string
	// Header is set on the run's request to the agent, over the Agent's
	// own Header (such as the end user's identity, or a key per tenant).
	// Only ActionRun uses it.
	Header http.Header
}

// authorize calls the Authorize hook for req, and answers req when it
// refuses (see Authorize); ok is false then. Without a hook it grants
// everything, to tenant "".
func (r *Relay) authorize(w http.ResponseWriter, req *http.Request, action Action, thread string) (g Grant, ok bool) {
	defer func() {
		if ok {
			granted(req.Context(), g, thread)
		}
	}()
	if r.o.Authorize == nil {
		return Grant{}, true
	}
	g, err := r.o.Authorize(req, action, thread)
	switch {
	case err == nil && len(g.Tenant) > MaxTenant:
		r.fail(w, req, http.StatusServiceUnavailable, "aguistate: the authorization failed",
			fmt.Errorf("aguistate: Authorize named a tenant of %d bytes, more than MaxTenant (%d)", len(g.Tenant), MaxTenant))
	case err == nil:
		return g, true
	case errors.Is(err, ErrUnauthenticated):
		w.Header().Set("WWW-Authenticate", "Bearer")
		r.fail(w, req, http.StatusUnauthorized, "aguistate: not authenticated", err)
	case errors.Is(err, ErrForbidden):
		r.fail(w, req, http.StatusForbidden, "aguistate: forbidden", err)
	default:
		r.fail(w, req, http.StatusServiceUnavailable, "aguistate: the authorization failed", err)
	}
	return Grant{}, false
}
