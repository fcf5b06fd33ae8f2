// Managing threads: the routes GET /threads (a tenant's listing) and DELETE /threads/{threadId}.

package relay

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/aguistate/aguistate/internal/jsonv"
)

// defaultThreadsPage is how many threads GET /threads lists without a
// limit.
const defaultThreadsPage = 100

// threadsPage is the answer of GET /threads.
type threadsPage struct {
	Threads []threadEntry `json:"threads"`
	Next    string        `json:"next,omitempty"`
}

// threadEntry is a thread in the answer of GET /threads.
// The ids are written as a thread's record writes them (jsonv.AppendString),
// so that a client names the thread with the bytes the store holds.
type threadEntry struct {
	ThreadID  json.RawMessage `json:"threadId"`
	UpdatedAt string          `json:"updatedAt"` // RFC 3339 in UTC, milliseconds: updatedLayout
	Running   bool            `json:"running"`
	LastRunID json.RawMessage `json:"lastRunId"`
	Events    int64           `json:"events"`
}

// updatedLayout is how GET /threads writes a thread's updatedAt: RFC 3339
// in UTC with three digits of fraction whatever the store's clock keeps
// (Memory nanoseconds, Redis and PostgreSQL microseconds), so that a client
// that parses one fixed layout reads every store's.
const updatedLayout = "2006-01-02T15:04:05.000Z07:00"

// getThreads serves GET /threads: a page of the tenant's threads, newest
// change first (see Store.Threads), as {"threads": [...], "next": C}.
// ?limit=N asks for at most N threads (1 or more; default 100, at most
// MaxThreadsPage); ?cursor=C for the page after the one whose "next" C was.
// A limit that is no positive integer, and a cursor that the store cannot
// read (ErrBadCursor), get 400; "next" is absent after the last page.
func (r *Relay) getThreads(w http.ResponseWriter, req *http.Request) {
	g, ok := r.authorize(w, req, ActionList, "")
	if !ok {
		return
	}
	q := req.URL.Query()
	limit := defaultThreadsPage
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			r.fail(w, req, http.StatusBadRequest, "aguistate: the limit "+strconv.Quote(v)+" is not a positive integer", nil)
			return
		}
		limit = min(n, MaxThreadsPage)
	}
	if r.isClosed() {
		r.busy(w, req, http.StatusServiceUnavailable, errClosed.Error())
		return
	}
	infos, next, err := r.tenant(g.Tenant).Threads(req.Context(), q.Get("cursor"), limit)
	switch {
	case errors.Is(err, ErrBadCursor):
		r.fail(w, req, http.StatusBadRequest, "aguistate: the cursor is not one the store can read", nil)
		return
	case err != nil:
		r.storeFailed(w, req, err)
		return
	}
	page := threadsPage{Threads: make([]threadEntry, len(infos)), Next: next}
	for i, info := range infos {
		page.Threads[i] = threadEntry{ThreadID: jsonv.AppendString(nil, info.ID), UpdatedAt: info.UpdatedAt.UTC().Format(updatedLayout), Running: info.Running,
			LastRunID: jsonv.AppendString(nil, info.LastRunID), Events: info.Events}
	}
	body, err := json.Marshal(page)
	if err != nil {
		r.fail(w, req, http.StatusInternalServerError, "aguistate: the listing cannot be written as JSON", err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(append(body, '\n'))
}

// deleteThread serves DELETE /threads/{threadId}: it removes the thread
// from the store (Store.Delete: its log, checkpoint, lease and listing
// entry) and answers 204, once it has ended the event streams of the
// thread that this relay serves. It answers 409 while a run of the thread
// is in progress, on this relay or another (one holds the thread's lease),
// and 404 for a thread with no event, as for a thread of another tenant.
// The relay takes the thread's lease before it deletes, so that no run
// starts meanwhile; a run that no relay holds the lease of (its relay
// stopped) is no run in progress, and its thread is deleted.
func (r *Relay) deleteThread(w http.ResponseWriter, req *http.Request) {
	t := r.openRoute(w, req, ActionDelete)
	if t == nil {
		return
	}
	defer r.release(t)
	defer t.mu.Unlock()
	if t.running != nil {
		r.runInProgress(w, req)
		return
	}
	if t.pos == 0 {
		r.noThread(w, req, t)
		return
	}
	ctx, cancel := r.storeContext(req.Context())
	defer cancel()
	switch err := t.store.Lease(ctx, t.id, r.holder, "", r.o.LeaseTTL); {
	case errors.Is(err, ErrLeased):
		r.runInProgress(w, req)
		return
	case err != nil && !errors.Is(err, ErrStopped): // ErrStopped: a stop of a run that ended; the lease is this relay's
		r.storeFailed(w, req, err)
		return
	}
	if err := t.store.Delete(ctx, t.id); err != nil {
		_ = t.store.Release(ctx, t.id, r.holder)
		r.storeFailed(w, req, err)
		return
	}
	t.deleted()
	w.WriteHeader(http.StatusNoContent)
}

// runInProgress answers a delete of a thread whose run is in progress.
func (r *Relay) runInProgress(w http.ResponseWriter, req *http.Request) {
	r.fail(w, req, http.StatusConflict, "aguistate: the thread has a run in progress: stop it first", nil)
}

// deleted forgets what t held of the thread that the store no longer
// has: its Consumer (loaded again, empty, at the next use) and its trims.
// It ends the event streams of t that this relay serves (gone), and stops
// the watcher that fed them. The caller holds t.mu.
func (t *thread) deleted() {
	close(t.gone)
	t.gone = make(chan struct{})
	t.stopWatching()
	t.lagging = nil
	t.c, t.pos, t.cpPos, t.hubPos, t.trimTo = nil, 0, 0, 0, 0
}
