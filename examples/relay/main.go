// Command relay serves AG-UI threads in front of any AG-UI agent: it runs
// each run against the agent, records the thread's events and checkpoints
// in a store, and streams them to any number of viewers, who may join at
// any event boundary and reconnect without losing or doubling an event
// (package github.com/aguistate/aguistate/relay).
//
// Usage:
//
//	go run ./examples/relay -agent URL [-listen 127.0.0.1:8080] [-store memory|redis://HOST:PORT|postgres://...]
//	    [-H 'Name: value']... [-tokens FILE] [-cors-origin ORIGIN]... [-idle-timeout 5m] [-max-run 0]
//	    [-ttl 0] [-max-threads 10000] [-drain 30s] [-metrics ADDR]
//
// -agent is the agent's run endpoint. -listen is the address to serve on.
// -store keeps the threads: "memory" (the default) in this process, a
// redis:// URL in Redis (go-redis ParseURL, whose query sizes the client:
// pool_size, pool_timeout, min_idle_conns, max_idle_conns,
// max_active_conns, dial_timeout, read_timeout, ...), a postgres:// URL in
// PostgreSQL (pgx, which creates its tables when they do not exist; its
// query takes pool_max_conns and the like). The line the relay writes
// when it listens gives the pool's size.
// Relays that share a Redis or PostgreSQL store serve the same threads:
// a viewer may join on any of them. -H sets one header on every request to
// the agent; it may repeat.
//
// Without -tokens the relay authenticates nobody: anyone who reaches it
// reads, joins, runs and stops every thread. -tokens FILE names a file of
// lines "TOKEN TENANT": every route then needs "Authorization: Bearer
// TOKEN", the threads are the tenant's own (another tenant's are not found),
// and the agent gets the tenant in X-Aguistate-Tenant. A browser page
// POSTs /session with its token to get an HttpOnly cookie that lets its
// EventSource join (docs/server.md, "The relay's edge"). -cors-origin
// ORIGIN (repeatable) lets pages of that origin call the relay.
// -idle-timeout ends a run whose agent sends nothing for that long,
// -max-run one that goes on longer (0: no limit). -metrics ADDR serves the
// relay's metrics at http://ADDR/metrics in the Prometheus text format
// (names aguistate_relay_...; docs/server.md, "Metrics and traces"), on a
// listener of their own, which the relay's routes do not reach.
//
// -ttl removes a thread whose log has not grown for that long, on every
// store (0, the default: never). -max-threads bounds the threads the memory
// store holds (default 10,000): past it, the least recently used thread
// that no run holds is removed.
//
// Routes: POST /agent takes a RunAgentInput as the agent does, and streams
// the run's events back, each with its position in the thread as its SSE
// id; GET /threads/{threadId}/events joins a thread (optional
// Last-Event-ID) and follows it until its run ends; GET /threads/{threadId}
// returns {"state": ..., "messages": [...]}; POST /threads/{threadId}/stop
// stops its run; GET /threads lists the tenant's threads (?limit=N,
// ?cursor=C); DELETE /threads/{threadId} deletes one; GET /healthz (no
// token) answers 200 while the relay serves and its store answers; POST
// /session (with -tokens) sets the session cookie.
//
// Standard error gets one line when the relay listens, and the relay's
// warnings. SIGINT or SIGTERM drains it (relay.Relay.Shutdown): new runs
// get 503 with Retry-After and GET /healthz 503, while the runs in
// progress go on for at most -drain (default 30 s); those still going on
// then end with a RUN_ERROR (code AGUISTATE_RELAY_STOPPED). The exit status
// is 0 after a signal, 1 when the store does not answer or the address
// cannot be listened on, and 2 for bad usage (a tokens file that cannot be
// read included).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/aguistate/aguistate"
	"github.com/aguistate/aguistate/examples/internal/cli"
	"github.com/aguistate/aguistate/relay"
	"github.com/aguistate/aguistate/relay/pgstore"
	"github.com/aguistate/aguistate/relay/redisstore"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stderr, nil))
}

// run runs the relay until ctx ends. listening, when not nil, gets the
// address it listens on.
func run(ctx context.Context, args []string, stderr io.Writer, listening chan<- string) int {
	flags := flag.NewFlagSet("relay", flag.ContinueOnError)
	flags.SetOutput(stderr)
	agent := flags.String("agent", "", "the agent's run `URL` (required)")
	listen := flags.String("listen", "127.0.0.1:8080", "the `address` to serve on")
	storeURL := flags.String("store", "memory", "where threads are kept: memory, redis://HOST:PORT or postgres://...")
	header := cli.Header{}
	flags.Var(header, "H", "a `header` 'Name: value' for every request to the agent; may repeat")
	tokensFile := flags.String("tokens", "", "a `file` of lines 'TOKEN TENANT': every route needs 'Authorization: Bearer TOKEN'")
	var origins origins
	flags.Var(&origins, "cors-origin", "an `origin` whose pages may call the relay (CORS); may repeat")
	idle := flags.Duration("idle-timeout", 5*time.Minute, "end a run whose agent sends nothing for this `long`")
	maxRun := flags.Duration("max-run", 0, "end a run that goes on for longer than this (0: no limit)")
	ttl := flags.Duration("ttl", 0, "remove a thread whose log has not grown for this `long` (0: never)")
	maxThreads := flags.Int("max-threads", 10_000, "the most threads the memory store holds, evicting the least recently used")
	drain := flags.Duration("drain", 30*time.Second, "on SIGTERM or SIGINT, let runs in progress go on for this `long`")
	metricsAddr := flags.String("metrics", "", "serve the metrics at http://`ADDR`/metrics, Prometheus text format (default: none)")
	flags.Usage = func() {
		fmt.Fprintln(stderr, "usage: relay -agent URL [-listen 127.0.0.1:8080] [-store memory|redis://HOST:PORT|postgres://...] [-H 'Name: value']...\n"+
			"             [-tokens FILE] [-cors-origin ORIGIN]... [-idle-timeout 5m] [-max-run 0] [-ttl 0] [-max-threads 10000] [-drain 30s]\n"+
			"             [-metrics ADDR]")
		flags.PrintDefaults()
	}
	if err := flags.Parse(args); err == flag.ErrHelp {
		return 0
	} else if err != nil {
		return 2
	}
	if *agent == "" || flags.NArg() > 0 {
		flags.Usage()
		return 2
	}
	if *ttl < 0 || *maxThreads < 1 || *drain < 0 {
		fmt.Fprintln(stderr, "error: -ttl and -drain are 0 or more, -max-threads 1 or more")
		return 2
	}
	var auth *tokens
	if *tokensFile != "" {
		var err error
		if auth, err = loadTokens(*tokensFile); err != nil {
			fmt.Fprintln(stderr, "error: -tokens:", err)
			return 2
		}
	}

	logger := slog.New(slog.NewTextHandler(stderr, nil))
	store, where, closeStore, err := openStore(ctx, *storeURL, storeOptions{ttl: *ttl, maxThreads: *maxThreads, logger: logger})
	if errors.Is(err, errUsage) {
		fmt.Fprintln(stderr, "error:", err)
		return 2
	}
	if err != nil {
		fmt.Fprintln(stderr, "error:", err)
		return 1
	}
	defer closeStore()

	o := &relay.Options{Store: store, Logger: logger, AllowOrigins: origins, IdleTimeout: *idle, MaxRun: *maxRun}
	if *idle <= 0 {
		o.IdleTimeout = -1
	}
	if auth != nil {
		o.Authorize = auth.authorize
	}
	if *metricsAddr != "" {
		m, err := serveMetrics(*metricsAddr)
		if err != nil {
			fmt.Fprintln(stderr, "error:", err)
			return 1
		}
		defer m.close()
		o.MeterProvider = m.provider
		fmt.Fprintf(stderr, "relay: metrics at %s\n", m.URL())
	}
	r := relay.New(&aguistate.Agent{URL: *agent, Header: http.Header(header)}, o)
	var h http.Handler = r
	if auth != nil {
		mux := http.NewServeMux()
		mux.Handle("POST /session", auth.serveSession(origins))
		mux.Handle("/", r) // and the preflights of POST /session
		h = mux
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(stderr, "error:", err)
		return 1
	}
	srv := newServer(h)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(stderr, "relay: http://%s in front of %s, threads in %s\n", ln.Addr(), *agent, where)
	if listening != nil {
		listening <- ln.Addr().String()
	}

	select {
	case <-ctx.Done():
	case err := <-served:
		fmt.Fprintln(stderr, "error:", err)
		return 1
	}
	fmt.Fprintf(stderr, "relay: draining (at most %v)\n", *drain)
	draining, cancel := context.WithTimeout(context.Background(), *drain)
	defer cancel()
	if err := r.Shutdown(draining); err != nil { // the runs still in progress were ended, and with them their streams
		fmt.Fprintln(stderr, "relay: the drain ended with runs in progress:", err)
	}
	shutdown, cancelShutdown := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancelShutdown()
	_ = srv.Shutdown(shutdown)
	fmt.Fprintln(stderr, "relay: stopped")
	return 0
}

// newServer returns the server of the relay's handler h, with timeouts:
// the request's header must come within 10 s, and an idle connection is
// closed after 2 minutes. The relay bounds the time of a run input's body
// itself (relay.Options.InputTimeout): a server's ReadTimeout would also
// cut the event streams, which last.
func newServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
}

// origins is a flag.Value for the repeatable -cors-origin flag.
type origins []string

func (o *origins) String() string { return strings.Join(*o, " ") }

// Set adds an origin: scheme://host[:port], with no path, or "*", as
// relay.ParseOrigin reads it.
func (o *origins) Set(s string) error {
	origin, err := relay.ParseOrigin(s)
	if err != nil {
		return err
	}
	*o = append(*o, origin)
	return nil
}

// errUsage reports a -store value that names no store.
var errUsage = errors.New("-store is memory, a redis:// URL or a postgres:// URL")

// storeOptions are the flags that configure a store.
type storeOptions struct {
	ttl        time.Duration // -ttl: every store
	maxThreads int           // -max-threads: the memory store
	logger     *slog.Logger
}

// openStore returns the store that url names, configured by o and checked
// to answer, where it is (for the log: the URL without its password, and
// the size of the connection pool), and a function that closes it.
func openStore(ctx context.Context, url string, o storeOptions) (relay.Store, string, func(), error) {
	logger := o.logger
	ping, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	switch {
	case url == "memory":
		return relay.NewMemory(&relay.MemoryOptions{MaxThreads: o.maxThreads, TTL: o.ttl}), "memory", func() {}, nil
	case strings.HasPrefix(url, "redis://"), strings.HasPrefix(url, "rediss://"):
		opt, err := redis.ParseURL(url)
		if err != nil {
			return nil, "", nil, fmt.Errorf("%w: %w", errUsage, err)
		}
		redis.SetLogger(redisLog{logger})
		rdb := redis.NewClient(opt)
		if err := rdb.Ping(ping).Err(); err != nil {
			rdb.Close()
			return nil, "", nil, fmt.Errorf("aguistate: the store does not answer at %s: %w", opt.Addr, err)
		}
		s := redisstore.New(rdb, &redisstore.Options{Logger: logger, TTL: o.ttl})
		where := fmt.Sprintf("%s (a pool of %d connections)", storeName(url), rdb.Options().PoolSize)
		return s, where, func() { s.Close(); rdb.Close() }, nil
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		pool, err := pgxpool.New(ctx, url)
		if err != nil {
			return nil, "", nil, fmt.Errorf("%w: %w", errUsage, err)
		}
		if err := pgstore.Setup(ping, pool, nil); err != nil {
			pool.Close()
			return nil, "", nil, fmt.Errorf("aguistate: the store does not answer: %w", err)
		}
		s, err := pgstore.New(pool, &pgstore.Options{Logger: logger, TTL: o.ttl})
		if err != nil {
			pool.Close()
			return nil, "", nil, err
		}
		where := fmt.Sprintf("%s (a pool of %d connections)", storeName(url), pool.Config().MaxConns)
		return s, where, func() { s.Close(); pool.Close() }, nil
	}
	return nil, "", nil, errUsage
}

// storeName returns url without its password, for a log line.
func storeName(url string) string {
	if scheme, rest, ok := strings.Cut(url, "://"); ok {
		if at := strings.LastIndex(rest, "@"); at >= 0 {
			if user, _, ok := strings.Cut(rest[:at], ":"); ok {
				return scheme + "://" + user + ":***@" + rest[at+1:]
			}
		}
	}
	return url
}

// redisLog sends go-redis's own log lines (dial retries, pool notices) to
// the relay's logger at level Debug: the relay reports what matters, once,
// in its own words.
type redisLog struct{ logger *slog.Logger }

func (l redisLog) Printf(ctx context.Context, format string, v ...any) {
	l.logger.DebugContext(ctx, fmt.Sprintf(format, v...), slog.String("from", "go-redis"))
}
