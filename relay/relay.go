// The Relay: an http.Handler in front of an AG-UI agent, its options and routes.

package relay

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/aguistate/aguistate"
	"github.com/aguistate/aguistate/internal/jsonv"
)

// The codes of the RUN_ERROR events a relay appends to end a run that its
// agent did not end with RUN_FINISHED or RUN_ERROR. A Go client reads them
// as [aguistate.RunError].Code.
const (
	// CodeAgentFailed: the agent's answer was no event stream, its stream
	// broke off or ended inside the run, or it sent an event that is not
	// one (a fatal event, which the relay does not record). The RUN_ERROR's
	// message says which.
	CodeAgentFailed = "AGUISTATE_AGENT_FAILED"
	// CodeRunLost: the relay that ran the run stopped without ending it (its
	// lease expired); another relay ended it.
	CodeRunLost = "AGUISTATE_RUN_LOST"
	// CodeRelayStopped: the relay was closed while the run went on.
	CodeRelayStopped = "AGUISTATE_RELAY_STOPPED"
)

// Options configures a [Relay]. A nil *Options means the defaults.
type Options struct {
	// Store keeps the threads. Relays that share a store serve the same
	// threads. Default: a new [Memory].
	Store Store
	// Header is set on every request to the agent, such as an
	// Authorization header. Content-Type and Accept are the relay's own.
	// Default: none.
	Header http.Header
	// Client sends the requests to the agent. Default: [http.DefaultClient].
	Client *http.Client
	// Consumer configures the Consumer that holds each thread in the relay
	// (its limits); its Logger gets the warnings of skipped events. Relays
	// that share a store should share it too. Default: nil, the defaults.
	Consumer *aguistate.Options
	// CheckpointEvery is how many events a run appends between two
	// checkpoints; a run's end saves one too. Default 1000.
	CheckpointEvery int
	// KeepEvents is how many events before a checkpoint stay in the log, so
	// that a viewer who reconnects with a recent Last-Event-ID gets the
	// events it missed rather than a prelude. Default 1000.
	KeepEvents int
	// LeaseTTL is how long a run's lease lasts unless renewed (a third of it
	// between renewals), and so how soon after a relay stops another ends
	// its run. Default 10 s.
	LeaseTTL time.Duration
	// Retry is the reconnection time sent to viewers in the SSE retry
	// field. Default 1 s.
	Retry time.Duration
	// ViewerBuffer is the most bytes of events the relay holds for one
	// viewer that has fallen behind the run it follows (and at most 1,024
	// events; an event larger than it is held alone). A viewer past it is
	// dropped from the relay's feed and its events are let go: it reads
	// them from the store once it catches up. Default 4 MiB.
	ViewerBuffer int
	// WriteTimeout is how long one write to a viewer's stream may block: a
	// viewer that reads nothing for that long is disconnected, and may
	// reconnect with Last-Event-ID. Default 30 s, twice the interval of the
	// keep-alive comments.
	WriteTimeout time.Duration
	// Logger gets a record of each failure no request reports: a store that
	// fails while a run appends or a viewer follows, a lease lost. Default:
	// none.
	Logger *slog.Logger
}

// Relay serves AG-UI threads over HTTP, in front of one agent: it runs
// each thread's runs against the agent, records every event in a [Store],
// and streams the events to any number of viewers, who may join at any
// event boundary and reconnect without losing or doubling an event. It is
// an [http.Handler] with three routes:
//
//   - POST /agent takes a RunAgentInput, as the agent does, runs it, and
//     streams the run's events back (SSE), each with its position in the
//     thread as its id, until the agent's answer ends. A POST with a
//     Last-Event-ID that names a position of the thread, or whose runId is
//     that of the thread's last run, is a reconnect: it is served as a
//     viewer's GET is.
//   - GET /threads/{threadId}/events joins the thread (SSE): with a
//     Last-Event-ID that the log holds, the events after it; otherwise a
//     prelude ([aguistate.Consumer.Prelude]) that brings a viewer to the
//     thread's last event. Then it follows the run in progress until it
//     ends. With nothing to send it answers 204, which stops a browser's
//     EventSource.
//   - GET /threads/{threadId} returns {"state": ..., "messages": [...]}.
//
// The README describes the ids, the prelude and the record of a run. A
// Relay is safe for concurrent use. Close it when done.
type Relay struct {
	agent  string
	o      Options
	holder string          // this relay's name in leases
	ctx    context.Context // ends viewers' streams and watchers
	cancel context.CancelFunc
	runCtx context.Context // ends runs, first
	stop   context.CancelFunc
	mux    *http.ServeMux

	mu      sync.Mutex
	threads map[string]*thread // in use by a request or a run
	closed  bool
	runs    sync.WaitGroup // runs in progress
	posts   sync.WaitGroup // the streams of runs to the clients that POSTed them
}

// New returns a Relay in front of the AG-UI agent at agentURL (its run
// endpoint), configured by opts.
func New(agentURL string, opts *Options) *Relay {
	r := &Relay{agent: agentURL, threads: make(map[string]*thread)}
	if opts != nil {
		r.o = *opts
	}
	if r.o.Store == nil {
		r.o.Store = NewMemory(nil)
	}
	if r.o.Client == nil {
		r.o.Client = http.DefaultClient
	}
	if r.o.CheckpointEvery <= 0 {
		r.o.CheckpointEvery = 1000
	}
	if r.o.KeepEvents <= 0 {
		r.o.KeepEvents = 1000
	}
	if r.o.LeaseTTL <= 0 {
		r.o.LeaseTTL = 10 * time.Second
	}
	if r.o.Retry <= 0 {
		r.o.Retry = time.Second
	}
	if r.o.ViewerBuffer <= 0 {
		r.o.ViewerBuffer = 4 << 20
	}
	if r.o.WriteTimeout <= 0 {
		r.o.WriteTimeout = 2 * keepAlive
	}
	if r.o.Logger == nil {
		r.o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	r.holder = "relay-" + hex.EncodeToString(id[:])
	r.ctx, r.cancel = context.WithCancel(context.Background())
	r.runCtx, r.stop = context.WithCancel(r.ctx)
	r.mux = http.NewServeMux()
	r.mux.HandleFunc("POST /agent", r.postAgent)
	r.mux.HandleFunc("GET /threads/{threadId}/events", r.getEvents)
	r.mux.HandleFunc("GET /threads/{threadId}", r.getThread)
	return r
}

// ServeHTTP serves the Relay's routes.
func (r *Relay) ServeHTTP(w http.ResponseWriter, req *http.Request) { r.mux.ServeHTTP(w, req) }

// Close ends the runs in progress, each with a RUN_ERROR whose code is
// [CodeRelayStopped], which their clients get (for at most 5 s), then the
// other viewers' streams. A closed Relay answers 503. It returns nil.
func (r *Relay) Close() error {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.stop()
	r.runs.Wait()
	sent := make(chan struct{})
	go func() {
		r.posts.Wait()
		close(sent)
	}()
	select {
	case <-sent:
	case <-time.After(5 * time.Second):
	}
	r.cancel()
	return nil
}

// acquire returns the thread id, in use until release.
func (r *Relay) acquire(id string) (*thread, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errClosed
	}
	t := r.threads[id]
	if t == nil {
		t = &thread{r: r, id: id, subs: make(map[*sub]struct{})}
		r.threads[id] = t
	}
	t.refs++
	return t, nil
}

// open acquires the thread id, brings it up to date with the store and
// returns it locked. When that fails it answers the request with status 400
// (an id the relay does not take) or 503, and returns nil, with nothing to
// release.
func (r *Relay) open(ctx context.Context, w http.ResponseWriter, id string) *thread {
	if err := checkThreadID(id); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return nil
	}
	t, err := r.acquire(id)
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return nil
	}
	t.mu.Lock()
	if err := t.sync(ctx); err != nil {
		t.mu.Unlock()
		r.release(t)
		storeFailed(w, err)
		return nil
	}
	return t
}

// release ends a use of t. The last one forgets it: it is loaded from the
// store again when next used.
func (r *Relay) release(t *thread) {
	r.mu.Lock()
	t.refs--
	last := t.refs == 0
	if last {
		delete(r.threads, t.id)
	}
	r.mu.Unlock()
	if last {
		t.mu.Lock()
		t.stopWatching()
		before := t.heldTrim()
		t.mu.Unlock()
		ctx, cancel := r.storeContext(r.ctx)
		defer cancel()
		r.trim(ctx, t, before)
	}
}

// checkThreadID returns why the relay does not take thread id, or nil: an
// empty id, one longer than MaxThreadID, and "." and "..", which no GET
// could name (a ServeMux cleans them out of the path).
func checkThreadID(id string) error {
	switch {
	case id == "":
		return errors.New("aguistate: the thread id is empty")
	case len(id) > MaxThreadID:
		return fmt.Errorf("aguistate: the thread id %s is longer than %d bytes", jsonv.Quote(id), MaxThreadID)
	case id == "." || id == "..":
		return fmt.Errorf("aguistate: the thread id %q cannot be named in a URL path", id)
	}
	return nil
}

// errClosed is the error of a request to a closed Relay.
var errClosed = errors.New("aguistate: the relay is closed")

// storeContext returns a context for a store operation that must be done
// even when ctx has ended (recording the end of a run), for at most a
// lease's time.
func (r *Relay) storeContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), r.o.LeaseTTL)
}
