// Telemetry: the relay's OpenTelemetry metrics and spans, each named and recorded here.

package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// scopeName is the instrumentation scope of the relay's meter and tracer:
// the package's import path.
const scopeName = "github.com/aguistate/aguistate/relay"

// The outcomes of a run: the "outcome" attribute of the runs ended, and
// aguistate.run.outcome on the run's span. A RUN_ERROR of the relay gives
// its code in lower case without the prefix: agent_failed, idle_timeout,
// run_timeout, relay_stopped.
const (
	outcomeSuccess    = "success"      // the agent's RUN_FINISHED
	outcomeInterrupt  = "interrupt"    // the agent's RUN_FINISHED with outcome "interrupt"
	outcomeCancelled  = "cancelled"    // stopped; or the agent's RUN_FINISHED with outcome "cancelled"
	outcomeError      = "error"        // the agent's RUN_ERROR
	outcomeLost       = "lost"         // another relay appended to the thread, or took its lease: it ends the run
	outcomeNotStarted = "not_started"  // no event of the run reached the log: its POST got an error answer
	outcomeStore      = "store_failed" // the store failed as the relay recorded the run's end
)

// The kinds of a viewer's join: the "kind" attribute of the joins, and
// aguistate.join.kind on the request's span.
const (
	joinPrelude     = "prelude"       // a prelude first
	joinLastEventID = "last_event_id" // the log's events after the Last-Event-ID
	joinRun         = "run"           // the events of the run that the POST started, from its first
)

// storeOp is an operation of a Store, as the store metrics name it.
type storeOp int

const (
	opAppend storeOp = iota
	opRead
	opFollow
	opSaveCheckpoint
	opLoadCheckpoint
	opTrim
	opLease
	opRelease
	opStop
	opThreads
	opDelete
	numOps
)

// opNames are the "operation" attributes of the store metrics.
var opNames = [numOps]string{"append", "read", "follow", "save_checkpoint", "load_checkpoint", "trim", "lease",
	"release", "stop", "threads", "delete"}

// Bucket boundaries: of durations, in seconds, from half a millisecond to a
// minute; of preludes, in bytes, from 256 B to 64 MiB.
var (
	secondBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}
	byteBuckets   = []float64{256, 1 << 10, 4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20}
)

// telemetry holds a relay's instruments and tracer. Its methods are safe
// for concurrent use; with the no-op providers each costs little more than
// a call.
type telemetry struct {
	tracer        trace.Tracer
	runsStarted   metric.Int64Counter
	runsEnded     metric.Int64Counter
	appended      metric.Int64Counter
	viewers       metric.Int64UpDownCounter
	firstEvent    metric.Float64Histogram
	preludeSize   metric.Int64Histogram
	storeDuration metric.Float64Histogram
	storeErrors   metric.Int64Counter
	conflicts     metric.Int64Counter
	trims         metric.Int64Counter
	ops           [numOps]metric.MeasurementOption // the attributes of each store operation
}

// newTelemetry returns the telemetry of a relay: its metrics from mp, its
// spans from tp, the global providers when nil. When mp does not make the
// instruments, logger gets why and no metric is recorded.
func newTelemetry(mp metric.MeterProvider, tp trace.TracerProvider, logger *slog.Logger) *telemetry {
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	tel := &telemetry{tracer: tp.Tracer(scopeName)}
	if err := tel.instruments(mp.Meter(scopeName)); err != nil {
		logger.Warn("aguistate: relay: the meter provider did not make the relay's instruments; no metric is recorded", "err", err)
		_ = tel.instruments(noop.Meter{})
	}
	for op, name := range opNames {
		tel.ops[op] = metric.WithAttributeSet(attribute.NewSet(attribute.String("operation", name)))
	}
	return tel
}

// instruments makes the instruments from m. The names and units are those
// of docs/server.md ("Metrics and traces").
func (tel *telemetry) instruments(m metric.Meter) error {
	var errs [10]error
	tel.runsStarted, errs[0] = m.Int64Counter("aguistate.relay.runs.started", metric.WithUnit("{run}"),
		metric.WithDescription("Runs that the relay started: it took their input and sent it to the agent."))
	tel.runsEnded, errs[1] = m.Int64Counter("aguistate.relay.runs.ended", metric.WithUnit("{run}"),
		metric.WithDescription("Runs that the relay started and that ended, by outcome."))
	tel.appended, errs[2] = m.Int64Counter("aguistate.relay.events.appended", metric.WithUnit("{event}"),
		metric.WithDescription("Events that the relay appended to the store: the agents' and its own."))
	tel.viewers, errs[3] = m.Int64UpDownCounter("aguistate.relay.viewers", metric.WithUnit("{viewer}"),
		metric.WithDescription("Event streams that the relay serves now, the POSTs' included."))
	tel.firstEvent, errs[4] = m.Float64Histogram("aguistate.relay.join.first_event", metric.WithUnit("s"),
		metric.WithDescription("Joins of a thread by kind, and the time from the request to the first event sent."),
		metric.WithExplicitBucketBoundaries(secondBuckets...))
	tel.preludeSize, errs[5] = m.Int64Histogram("aguistate.relay.prelude.size", metric.WithUnit("By"),
		metric.WithDescription("Preludes sent to viewers, and the size of their events' JSON text."),
		metric.WithExplicitBucketBoundaries(byteBuckets...))
	tel.storeDuration, errs[6] = m.Float64Histogram("aguistate.relay.store.duration", metric.WithUnit("s"),
		metric.WithDescription("Store operations and their duration (a read's: the time spent in the store), by operation."),
		metric.WithExplicitBucketBoundaries(secondBuckets...))
	tel.storeErrors, errs[7] = m.Int64Counter("aguistate.relay.store.errors", metric.WithUnit("{error}"),
		metric.WithDescription("Store operations that failed, by operation: not the answers of the Store contract (a conflict, a lease held) nor the caller's context ending."))
	tel.conflicts, errs[8] = m.Int64Counter("aguistate.relay.append.conflicts", metric.WithUnit("{conflict}"),
		metric.WithDescription("Appends that the store refused because another writer had moved the thread on."))
	tel.trims, errs[9] = m.Int64Counter("aguistate.relay.trims", metric.WithUnit("{trim}"),
		metric.WithDescription("Trims of a thread's log that the store took, each before a position past the first."))
	return errors.Join(errs[:]...)
}

// attr returns the measurement option of one string attribute.
func attr(key, value string) metric.MeasurementOption {
	return metric.WithAttributeSet(attribute.NewSet(attribute.String(key, value)))
}

// requestStartKey is the context key of the time a request came.
type requestStartKey struct{}

// request starts the span of req, named by its method and route (the
// pattern of mux that serves it): a child of the span in req's context, or
// else of the one that its header carries (W3C traceparent, through the
// global propagator, which reads none until the application sets one). It
// returns what to serve req with: w, which records the answer's status
// when the span records, and req, whose context has the span and the time
// the request came. end ends the span.
func (tel *telemetry) request(w http.ResponseWriter, req *http.Request, mux *http.ServeMux) (http.ResponseWriter, *http.Request, func()) {
	ctx := req.Context()
	if tel.firstEvent.Enabled(ctx) {
		ctx = context.WithValue(ctx, requestStartKey{}, time.Now())
	}
	if !trace.SpanContextFromContext(ctx).IsValid() {
		ctx = otel.GetTextMapPropagator().Extract(ctx, propagation.HeaderCarrier(req.Header))
	}
	spanCtx, span := tel.tracer.Start(ctx, req.Method, trace.WithSpanKind(trace.SpanKindServer))
	if !span.IsRecording() { // its context, if any, goes on to the run's span and the agent
		if span.SpanContext().IsValid() {
			ctx = spanCtx
		}
		if ctx != req.Context() {
			req = req.WithContext(ctx)
		}
		return w, req, func() {}
	}
	req = req.WithContext(spanCtx)
	ctx = spanCtx
	attrs := []attribute.KeyValue{attribute.String("http.request.method", req.Method),
		attribute.String("aguistate.request.id", requestID(ctx))}
	if _, pattern := mux.Handler(req); pattern != "" {
		route := pattern
		if _, path, ok := strings.Cut(pattern, " "); ok {
			route = path
		}
		span.SetName(req.Method + " " + route)
		attrs = append(attrs, attribute.String("http.route", route))
	}
	span.SetAttributes(attrs...)
	sw := &statusWriter{ResponseWriter: w}
	return sw, req, func() {
		status := sw.status
		if status == 0 {
			status = http.StatusOK
		}
		span.SetAttributes(attribute.Int("http.response.status_code", status))
		if status >= 500 {
			span.SetStatus(codes.Error, http.StatusText(status))
		}
		span.End()
	}
}

// statusWriter is a ResponseWriter that records the status of the answer.
// Unwrap lets an http.ResponseController reach the writer it wraps.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 && status >= 200 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// granted records on the request's span the thread and the tenant it is
// for.
func granted(ctx context.Context, g Grant, thread string) {
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.SetAttributes(attribute.String("aguistate.tenant", g.Tenant), attribute.String("aguistate.thread.id", thread))
	}
}

// runStarted counts ru, a run that startRun starts for req's grant g, and
// starts its span, a child of the request's, in ru.ctx: the run's requests
// to the agent and the store carry it.
func (tel *telemetry) runStarted(req *http.Request, ru *run, g Grant) {
	ctx := req.Context()
	tel.runsStarted.Add(ctx, 1)
	_, ru.span = tel.tracer.Start(ctx, "aguistate.relay.run")
	if ru.span.IsRecording() {
		ru.span.SetAttributes(attribute.String("aguistate.thread.id", ru.t.id), attribute.String("aguistate.run.id", ru.in.RunID),
			attribute.String("aguistate.tenant", g.Tenant), attribute.String("aguistate.request.id", ru.reqID))
	}
	if ru.span.SpanContext().IsValid() {
		ru.ctx = trace.ContextWithSpan(ru.ctx, ru.span)
	}
}

// runEnded counts ru's end by its outcome (not_started when none was
// set), and ends its span with the outcome and the number of events it
// appended.
func (tel *telemetry) runEnded(ru *run, events int64) {
	if ru.outcome == "" {
		ru.outcome = outcomeNotStarted
	}
	if ctx := context.Background(); tel.runsEnded.Enabled(ctx) {
		tel.runsEnded.Add(ctx, 1, attr("outcome", ru.outcome))
	}
	if ru.span.IsRecording() {
		ru.span.SetAttributes(attribute.String("aguistate.run.outcome", ru.outcome), attribute.Int64("aguistate.run.events", events))
		switch ru.outcome {
		case outcomeSuccess, outcomeInterrupt, outcomeCancelled:
		default:
			ru.span.SetStatus(codes.Error, ru.outcome)
		}
	}
	ru.span.End()
}

// codeOutcome returns the outcome of a run that the relay ended with a
// RUN_ERROR of code.
func codeOutcome(code string) string {
	return strings.ToLower(strings.TrimPrefix(code, "AGUISTATE_"))
}

// agentOutcome returns the outcome of a run whose agent ended it with the
// event end, a RUN_FINISHED or a RUN_ERROR.
func agentOutcome(end []byte) string {
	if eventType(end) == "RUN_ERROR" {
		return outcomeError
	}
	var e struct {
		Outcome struct{ Type string } `json:"outcome"`
	}
	if bytes.Contains(end, []byte(`"outcome"`)) && json.Unmarshal(end, &e) == nil {
		switch e.Outcome.Type {
		case outcomeInterrupt, outcomeCancelled:
			return e.Outcome.Type
		}
	}
	return outcomeSuccess
}

// viewer adds n (1 or -1) to the viewers served.
func (tel *telemetry) viewer(n int64) { tel.viewers.Add(context.Background(), n) }

// joins returns the function that records the first event sent on the
// event stream of the request whose context is ctx, whose viewer joined by
// *kind; nil when nothing would record it.
func (tel *telemetry) joins(ctx context.Context, kind *string) func() {
	if !tel.firstEvent.Enabled(ctx) && !trace.SpanFromContext(ctx).IsRecording() {
		return nil
	}
	return func() { tel.joined(ctx, *kind) }
}

// joined records the first event sent to a viewer that joined by kind,
// with the time since its request came.
func (tel *telemetry) joined(ctx context.Context, kind string) {
	if start, ok := ctx.Value(requestStartKey{}).(time.Time); ok && tel.firstEvent.Enabled(ctx) {
		tel.firstEvent.Record(ctx, time.Since(start).Seconds(), attr("kind", kind))
	}
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.SetAttributes(attribute.String("aguistate.join.kind", kind))
	}
}

// prelude records a prelude of size bytes of events sent to a viewer.
func (tel *telemetry) prelude(ctx context.Context, size int) {
	tel.preludeSize.Record(ctx, int64(size))
}

// storeStart returns the time a store operation with ctx starts, or zero
// when its duration is not recorded.
func (tel *telemetry) storeStart(ctx context.Context) time.Time {
	if !tel.storeDuration.Enabled(ctx) {
		return time.Time{}
	}
	return time.Now()
}

// storeDone records a store operation op that began at start (its time is
// not recorded when start is zero) and returned err.
func (tel *telemetry) storeDone(ctx context.Context, op storeOp, start time.Time, err error) {
	if !start.IsZero() {
		tel.storeDuration.Record(ctx, time.Since(start).Seconds(), tel.ops[op])
	}
	if failed(ctx, err) && tel.storeErrors.Enabled(ctx) {
		tel.storeErrors.Add(ctx, 1, tel.ops[op])
	}
}

// failed reports whether err, returned by a store operation called with
// ctx, is a failure of the store: not nil, not one of the answers that the
// Store contract gives (a conflict, a position out of range, no
// checkpoint, a lease held or not, a stop, a bad cursor), and not the end
// of ctx.
func failed(ctx context.Context, err error) bool {
	if err == nil || ctx.Err() != nil {
		return false
	}
	for _, answer := range []error{ErrConflict, ErrOutOfRange, ErrNoCheckpoint, ErrLeased, ErrStopped, ErrNotLeased, ErrBadCursor} {
		if errors.Is(err, answer) {
			return false
		}
	}
	return true
}
