// Package relay keeps AG-UI threads durable for application servers that
// relay an agent's events to viewers: a [Relay] in front of any agent, and
// the log of each thread's events and its latest checkpoint behind the
// small [Store] interface.
//
// Use [New] for a Relay, an http.Handler: clients POST runs to it as to the
// agent, and viewers join a thread at any event boundary and reconnect
// with Last-Event-ID, as docs/server.md describes, or follow it across runs
// (?follow=thread; docs/server.md, "Threads as a service"). Several relays
// on one store serve the same threads. Use [Stop] to stop a run from Go, and
// [Relay.Shutdown] to let a relay's runs end before it stops (a deploy).
//
// # The edge
//
// Without an [Options].Authorize hook a relay authenticates nobody. The
// hook ([Authorize]) decides on every route what a request may do, and
// names its tenant. A run ends when its agent ends it, when a client stops
// it (POST /threads/{threadId}/stop, on any relay of the store), or after
// [Options].IdleTimeout or MaxRun. The relay bounds what it holds in total
// (MaxInputBytes, MaxViewers, MaxThreadViewers), answers CORS for
// [Options].AllowOrigins, refuses a run input it could not record before
// the agent sees it, and names a request's id in each error it answers.
// docs/server.md ("The relay's edge") says all of it.
//
// # Metrics and traces
//
// A relay records OpenTelemetry metrics (runs, events appended, viewers,
// joins, store operations) and a span per request and per run, through
// [Options].MeterProvider and TracerProvider, or the global providers:
// nothing until the application sets them. docs/server.md ("Metrics and
// traces") names them.
//
// Positions count a thread's events from 1, as the Consumer's event count
// does, so the checkpoint of a Consumer that has applied k events sits at
// position k and the log continues at k+1. [Store.Append] is a
// compare-and-set on the position: two replicas writing one thread can
// never interleave their events. A store keeps, per thread, the lease of
// the relay that runs the thread's run, so that another relay ends a run
// whose relay stopped, and [Store.Stop] reaches that relay. Each tenant of
// a store ([Store.Tenant]) has threads of its own.
//
// Use [NewMemory] for a store in this process's memory (the default). The
// modules github.com/aguistate/aguistate/relay/redisstore and
// github.com/aguistate/aguistate/relay/pgstore keep threads in Redis and
// PostgreSQL, for several replicas and across restarts. The package
// github.com/aguistate/aguistate/relay/storetest holds the tests every
// implementation passes, and the relay's scenarios on it.
//
// # Errors
//
// A [*ConflictError] (wrapping [ErrConflict]) reports a position that is
// not the log's next one; a [*RangeError] (wrapping [ErrOutOfRange]) a read
// from a position the log no longer holds, after which a viewer needs the
// checkpoint; [ErrNoCheckpoint] a thread without one; [ErrLeased] a lease
// another relay holds; [ErrStopped] a lease renewal of a run asked to stop;
// [ErrNotLeased] a stop of a thread that no relay runs. Other errors, such
// as a store that does not answer, are the store's own: retry later. An
// Authorize hook refuses with [ErrUnauthenticated] or [ErrForbidden];
// [Stop] returns [ErrNotRunning] when no run is in progress.
//
// A Relay answers a store's failure with 503, an agent that fails before a
// run's first event with 502 (504 past its idle time), a second run of a
// thread that runs with 409, and a run input it could not record with 413;
// its bounds with 503, 429 or 408. A run that fails later ends with a
// RUN_ERROR whose code ([CodeAgentFailed], [CodeRunLost],
// [CodeRelayStopped], [CodeIdleTimeout], [CodeRunTimeout]) says why; a
// stopped run with RUN_FINISHED, outcome "cancelled".
package relay
