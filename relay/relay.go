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
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
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
	// CodeIdleTimeout: the agent's stream sent nothing (no byte) for
	// [Options].IdleTimeout.
	CodeIdleTimeout = "AGUISTATE_IDLE_TIMEOUT"
	// CodeRunTimeout: the run went on for longer than [Options].MaxRun.
	CodeRunTimeout = "AGUISTATE_RUN_TIMEOUT"
	// CodeStreamLost: the relay could not go on with a POST's stream of
	// the run (the store no longer holds the events after the last one
	// sent, or holds fewer than it acknowledged, or fails). The relay
	// sends this RUN_ERROR to that client alone, without an id, and does not
	// record it: the run may go on. Join the thread again (GET
	// /threads/{threadId}/events, or [aguistate.Consumer.Follow]) to get it.
	CodeStreamLost = "AGUISTATE_STREAM_LOST"
	// CodeStoreFull: the store had no room for the run's events (it
	// returned an error wrapping [ErrFull], as a [Memory] does past
	// MaxThreads or MaxBytes when every other thread is leased). The events
	// it refused are not recorded. A run refused before its first event is
	// answered 503 instead, and nothing is recorded.
	CodeStoreFull = "AGUISTATE_STORE_FULL"
)

// Options configures a [Relay]. A nil *Options means the defaults.
type Options struct {
	// Store keeps the threads. Relays that share a store serve the same
	// threads. Default: a new [Memory].
	Store Store
	// Authorize, when set, decides who may do what: every route but GET
	// /healthz calls it before it reads or runs anything (see
	// [Authorize]). Default: nil, and the relay authenticates nobody:
	// anyone who can reach it reads, joins, runs and stops every thread.
	Authorize Authorize
	// AllowOrigins lists the origins (RFC 6454: "https://app.example.com",
	// scheme, host and port, no path) whose pages may call the relay
	// across origins (CORS, the Fetch standard): preflights are answered,
	// responses carry Access-Control-Allow-Origin, and credentials
	// (cookies) are allowed. "*" allows every origin, without credentials,
	// the opaque origin "null" included (as the Fetch standard's CORS check
	// passes "*"); "null" itself in the list allows nothing.
	// Each is read with [ParseOrigin], so that https://App.example.com:443
	// allows the page of https://app.example.com. Default: none, and a
	// browser refuses a page of another origin.
	AllowOrigins []string
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
	// IdleTimeout is how long the agent's answer may send nothing (not a
	// byte: an SSE comment counts) before the relay ends the run with a
	// RUN_ERROR of code [CodeIdleTimeout], or answers its POST with 504
	// when no event came. It starts when the request is sent. Default 5
	// minutes; a negative value means none.
	IdleTimeout time.Duration
	// MaxRun is the longest a run may go on, from its request to the agent,
	// before the relay ends it with a RUN_ERROR of code [CodeRunTimeout]
	// (504 when no event came). Default 0: no limit.
	MaxRun time.Duration
	// MaxInput is the largest run input one POST may carry, in bytes: a
	// larger one gets 413. Default 64 MiB.
	MaxInput int
	// MaxInputBytes bounds the bytes of run inputs that the relay holds
	// at once, over all POSTs, while it reads them and until the agent has
	// them: a POST that would pass it gets 503 with Retry-After. Default
	// 128 MiB.
	MaxInputBytes int
	// InputTimeout is how long reading one POST's run input may take: a
	// body that has not come whole by then (a client that trickles it) gets
	// 408. Default 1 minute.
	InputTimeout time.Duration
	// MaxViewers bounds the event streams (SSE) that the relay serves at
	// once, the POSTs' included, and those that follow a thread
	// (follow=thread) between its runs too: one more gets 503 with
	// Retry-After.
	// Default 10,000.
	MaxViewers int
	// MaxThreadViewers bounds the event streams of one thread that the
	// relay serves at once: one more gets 429 with Retry-After. Default
	// 1,000.
	MaxThreadViewers int
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
	// Logger gets a record of each failure: what a client's answer names
	// only by its request id (the agent's answer, the store's error), and
	// what no request reports (a store that fails while a run appends or a
	// viewer follows, a lease lost). Default: none.
	Logger *slog.Logger
	// MeterProvider gives the meter of the relay's metrics (OpenTelemetry:
	// runs, events appended, viewers, joins, store operations; their names
	// begin aguistate.relay., docs/server.md lists them). Default: the
	// global one, otel.GetMeterProvider(), which records nothing until the
	// application sets one (otel.SetMeterProvider), even after New.
	MeterProvider metric.MeterProvider
	// TracerProvider gives the tracer of the relay's spans: one per request
	// and one per run, whose context the run's requests to the agent carry.
	// Default: the global one, otel.GetTracerProvider(), which records
	// nothing until the application sets one (otel.SetTracerProvider).
	TracerProvider trace.TracerProvider
}

// Relay serves AG-UI threads over HTTP, in front of one agent: it runs
// each thread's runs against the agent, records every event in a [Store],
// and streams the events to any number of viewers, who may join at any
// event boundary and reconnect without losing or doubling an event. It is
// an [http.Handler] with these routes:
//
//   - POST /agent takes a RunAgentInput, as the agent does, runs it, and
//     streams the run's events back (SSE), each with its position in the
//     thread as its id, until the agent's answer ends. A POST that can
//     only be a reconnect of the thread's last run is served as a viewer's
//     GET is (see the new-run rule in the package doc).
//   - GET /threads/{threadId}/events joins the thread (SSE): with a
//     Last-Event-ID that the log holds, the events after it; otherwise a
//     prelude ([aguistate.Consumer.Prelude]) that brings a viewer to the
//     thread's last event. Then it follows the run in progress until it
//     ends. With nothing to send it answers 204, which stops a browser's
//     EventSource, and 404 for a thread with no event.
//   - GET /threads/{threadId}/events?follow=thread joins the thread as
//     well, and stays open across runs: every event of every later run,
//     whichever relay of the store runs it, with keep-alive comments
//     between runs; on a thread with no event yet it answers 200 and waits
//     for the first. It ends when the viewer leaves, when the thread is
//     deleted (a reconnect with a Last-Event-ID past the log's end then
//     gets 204), or when the relay closes; an EventSource reconnects
//     through the rest with Last-Event-ID ([aguistate.Consumer.FollowThread]
//     in Go).
//   - GET /threads/{threadId} returns {"state": ..., "messages": [...]}.
//   - POST /threads/{threadId}/stop stops the thread's run in progress
//     (202), whichever relay runs it, or answers 409 when none runs.
//   - GET /threads lists the tenant's threads, newest change first, a page
//     at a time: {"threads": [{"threadId", "updatedAt", "running",
//     "lastRunId", "events"}], "next": CURSOR}, with ?limit=N and
//     ?cursor=CURSOR (see [Store.Threads]).
//   - DELETE /threads/{threadId} deletes the thread ([Store.Delete]) and
//     ends its event streams on this relay (204); 409 while a run of it is
//     in progress, 404 when it has no event.
//   - GET /healthz answers 200 while the relay serves and its store
//     answers, 503 otherwise and once [Relay.Shutdown] is called. It is
//     the one route that calls no [Authorize] hook.
//
// Every answer carries an X-Request-Id header; an error's text names what
// failed and that id, and the Logger gets the details. docs/server.md
// describes the ids, the prelude, the record of a run and the relay's
// edge (docs/server.md). A Relay is safe for concurrent use. Close it when
// done, or let its runs end first with Shutdown.
type Relay struct {
	agent     *aguistate.Agent
	o         Options
	holder    string          // this relay's name in leases
	keepAlive time.Duration   // the longest silence of a viewer's stream (see keepAlive)
	ctx       context.Context // ends viewers' streams and watchers
	cancel    context.CancelFunc
	runCtx    context.Context // ends runs, first
	stop      context.CancelFunc
	mux       *http.ServeMux
	inputs    budget     // the bytes of run inputs held
	tel       *telemetry // metrics and spans

	drainCtx   context.Context    // ended when Shutdown is called
	startDrain context.CancelFunc // ends drainCtx

	health    sync.Mutex // the probe of GET /healthz
	healthAt  time.Time  // the time of the last probe
	healthErr error      // its answer

	mu       sync.Mutex
	threads  map[threadKey]*thread // in use by a request or a run
	viewers  int                   // event streams served
	closed   bool
	draining bool           // Shutdown was called: no run starts
	runs     sync.WaitGroup // runs in progress
	posts    sync.WaitGroup // the streams of runs to the clients that POSTed them
}

// New returns a Relay in front of agent, configured by opts. The relay
// sends each run's input to the agent with [aguistate.Agent.Post], as
// [aguistate.Consumer.RunAgent] does: with agent.Header (and the headers
// that Authorize gives), through agent.Client, following a redirect to
// another origin only when agent.FollowCrossOrigin is set. agent.Reconnects
// is not used. Set agent's fields before New and do not change them
// afterwards.
func New(agent *aguistate.Agent, opts *Options) *Relay {
	if agent == nil {
		agent = &aguistate.Agent{}
	}
	r := &Relay{agent: agent, threads: make(map[threadKey]*thread), keepAlive: keepAlive}
	r.drainCtx, r.startDrain = context.WithCancel(context.Background())
	if opts != nil {
		r.o = *opts
	}
	if r.o.Store == nil {
		r.o.Store = NewMemory(nil)
	}
	r.o.AllowOrigins = allowOrigins(r.o.AllowOrigins)
	setDefault(&r.o.CheckpointEvery, 1000)
	setDefault(&r.o.KeepEvents, 1000)
	setDefault(&r.o.LeaseTTL, 10*time.Second)
	if r.o.IdleTimeout == 0 {
		r.o.IdleTimeout = 5 * time.Minute
	}
	setDefault(&r.o.MaxInput, 64<<20)
	setDefault(&r.o.MaxInputBytes, 128<<20)
	setDefault(&r.o.InputTimeout, time.Minute)
	setDefault(&r.o.MaxViewers, 10_000)
	setDefault(&r.o.MaxThreadViewers, 1_000)
	setDefault(&r.o.Retry, time.Second)
	setDefault(&r.o.ViewerBuffer, 4<<20)
	setDefault(&r.o.WriteTimeout, 2*keepAlive)
	if r.o.Logger == nil {
		r.o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	r.inputs.limit = int64(r.o.MaxInputBytes)
	r.tel = newTelemetry(r.o.MeterProvider, r.o.TracerProvider, r.o.Logger)
	r.o.Store = measuredStore{r.o.Store, r.tel}
	var id [8]byte
	_, _ = rand.Read(id[:])
	r.holder = "relay-" + hex.EncodeToString(id[:])
	r.ctx, r.cancel = context.WithCancel(context.Background())
	r.runCtx, r.stop = context.WithCancel(r.ctx)
	r.mux = http.NewServeMux()
	r.mux.HandleFunc("POST /agent", r.postAgent)
	r.mux.HandleFunc("GET /threads/{threadId}/events", r.getEvents)
	r.mux.HandleFunc("GET /threads/{threadId}", r.getThread)
	r.mux.HandleFunc("POST /threads/{threadId}/stop", r.postStop)
	r.mux.HandleFunc("GET /threads", r.getThreads)
	r.mux.HandleFunc("DELETE /threads/{threadId}", r.deleteThread)
	r.mux.HandleFunc("GET /healthz", r.getHealth)
	return r
}

// setDefault sets *v to def when it is 0 or less.
func setDefault[T int | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// ServeHTTP serves the Relay's routes: it gives the request its id and its
// span (see [Options].TracerProvider), answers CORS (see
// [Options].AllowOrigins), and routes it.
func (r *Relay) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	req = withRequestID(w, req)
	w, req, end := r.tel.request(w, req, r.mux)
	defer end()
	if r.cors(w, req) {
		return
	}
	r.mux.ServeHTTP(w, req)
}

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

// threadKey names a thread in a relay: its tenant and its id.
type threadKey struct{ tenant, id string }

// acquire returns the thread id of tenant (see [Grant]), in use until
// release. With viewer, it also counts an event stream of the thread (see
// admit), which ends with leave, or returns why the relay does not serve
// one now.
func (r *Relay) acquire(tenant, id string, viewer bool) (*thread, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errClosed
	}
	key := threadKey{tenant, id}
	t := r.threads[key]
	if t == nil {
		t = &thread{r: r, key: key, id: id, store: r.tenant(tenant), subs: make(map[*sub]struct{}), gone: make(chan struct{})}
	}
	if viewer {
		if err := r.admit(t); err != nil {
			return nil, err
		}
	}
	r.threads[key] = t
	t.refs++
	return t, nil
}

// tenant returns the store as tenant sees it: Options.Store itself for "",
// so that a wrapper of the store (struct{ relay.Store }) sees the calls of
// a relay without tenants, which its promoted Tenant method would skip.
func (r *Relay) tenant(name string) Store {
	if name == "" {
		return r.o.Store
	}
	return r.o.Store.Tenant(name)
}

// openRoute opens, as open does, the thread that req's path names
// ({threadId}), once the Authorize hook grants action on it. It returns nil
// when it has answered req (refused, or open failed).
func (r *Relay) openRoute(w http.ResponseWriter, req *http.Request, action Action) *thread {
	id := req.PathValue("threadId")
	g, ok := r.authorize(w, req, action, id)
	if !ok {
		return nil
	}
	return r.open(w, req, g, id, false)
}

// open acquires the thread id that g's tenant names (as acquire does, with
// viewer), brings it up to date with the store and returns it locked. When
// that fails it answers the request with status 400 (an id the relay does
// not take), 429 or 503, and returns nil, with nothing to release.
func (r *Relay) open(w http.ResponseWriter, req *http.Request, g Grant, id string, viewer bool) *thread {
	if err := checkThreadID(id); err != nil {
		r.fail(w, req, http.StatusBadRequest, err.Error(), nil)
		return nil
	}
	t, err := r.acquire(g.Tenant, id, viewer)
	switch {
	case errors.Is(err, errThreadViewers):
		r.busy(w, req, http.StatusTooManyRequests, err.Error())
		return nil
	case err != nil:
		r.busy(w, req, http.StatusServiceUnavailable, err.Error())
		return nil
	}
	t.mu.Lock()
	if viewer && req.Method == http.MethodGet && t.writesLog() {
		return t // a viewer's join reads the log after its position anyway
	}
	if err := t.sync(req.Context()); err != nil {
		t.mu.Unlock()
		if viewer {
			r.leave(t)
		}
		r.release(t)
		r.storeFailed(w, req, err)
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
		delete(r.threads, t.key)
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
