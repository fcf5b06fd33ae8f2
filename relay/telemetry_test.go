// Tests of the relay's metrics and spans, read with the OpenTelemetry SDK after a bounded load.

package relay_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aguistate/aguistate/internal/agenttest"
	"github.com/aguistate/aguistate/relay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// telemetry is what a relay records, as a test reads it.
type telemetry struct {
	reader *sdkmetric.ManualReader
	spans  *tracetest.SpanRecorder
}

// withTelemetry sets o's providers to new SDK providers, and returns what
// reads them.
func withTelemetry(o *relay.Options) telemetry {
	tel := telemetry{reader: sdkmetric.NewManualReader(), spans: tracetest.NewSpanRecorder()}
	o.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(tel.reader))
	o.TracerProvider = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tel.spans))
	return tel
}

// points returns the data points of the relay's metrics, keyed by name
// and attributes ("aguistate.relay.runs.ended{outcome=success}"): a sum's
// value, and a histogram's count and sum under its name with ".count" and
// ".sum".
func (tel telemetry) points(t testing.TB) map[string]float64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, tel.reader.Collect(context.Background(), &rm))
	out := make(map[string]float64)
	key := func(name string, attrs attribute.Set) string {
		return name + "{" + attrs.Encoded(attribute.DefaultEncoder()) + "}"
	}
	for _, sm := range rm.ScopeMetrics {
		require.Equal(t, "github.com/aguistate/aguistate/relay", sm.Scope.Name)
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					out[key(m.Name, p.Attributes)] = float64(p.Value)
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					out[key(m.Name+".count", p.Attributes)] = float64(p.Count)
					out[key(m.Name+".sum", p.Attributes)] = p.Sum
				}
			case metricdata.Histogram[int64]:
				for _, p := range d.DataPoints {
					out[key(m.Name+".count", p.Attributes)] = float64(p.Count)
					out[key(m.Name+".sum", p.Attributes)] = float64(p.Sum)
				}
			default:
				t.Fatalf("metric %s: unexpected data %T", m.Name, m.Data)
			}
		}
	}
	return out
}

// exact returns the points of the metrics that a run makes exactly (not
// the store's durations, nor the joins' times).
func exact(points map[string]float64) map[string]float64 {
	out := make(map[string]float64)
	for k, v := range points {
		if strings.HasPrefix(k, "aguistate.relay.store.duration") || strings.HasPrefix(k, "aguistate.relay.join.first_event.sum") {
			continue
		}
		out[k] = v
	}
	return out
}

// ended returns the spans ended so far once there are n of them, or fails
// t after 10 s.
func (tel telemetry) ended(t testing.TB, n int) []sdktrace.ReadOnlySpan {
	t.Helper()
	require.Eventually(t, func() bool { return len(tel.spans.Ended()) >= n }, 10*time.Second, 10*time.Millisecond)
	spans := tel.spans.Ended()
	require.Len(t, spans, n)
	return spans
}

// attrsOf returns a span's attributes as strings.
func attrsOf(s sdktrace.ReadOnlySpan) map[string]string {
	out := make(map[string]string)
	for _, kv := range s.Attributes() {
		out[string(kv.Key)] = kv.Value.String()
	}
	return out
}

// outcomes says how the runs of the fake agent of TestTelemetryLoad end:
// the runs of thread "t<i>" are "t<i>-r<k>", k from 1 to 4, and each not
// named here ends with success.
var outcomes = map[string]string{
	"t1-r2": "agent_failed", // the agent's stream ends before RUN_FINISHED
	"t2-r3": "error",        // the agent's RUN_ERROR
	"t3-r4": "not_started",  // the agent's answer holds no event
	"t4-r4": "interrupt",    // the agent's RUN_FINISHED with outcome "interrupt"
}

// scriptedRun returns the events of the run that input asks for.
func scriptedRun(input []byte) [][]byte {
	var in struct{ ThreadID, RunID string }
	_ = json.Unmarshal(input, &in)
	ids := fmt.Sprintf(`"threadId":%q,"runId":%q`, in.ThreadID, in.RunID)
	msg := fmt.Sprintf(`"messageId":%q`, in.RunID+"-m")
	events := [][]byte{
		[]byte(`{"type":"RUN_STARTED",` + ids + `}`),
		[]byte(`{"type":"TEXT_MESSAGE_START",` + msg + `,"role":"assistant"}`),
		[]byte(`{"type":"TEXT_MESSAGE_CONTENT",` + msg + `,"delta":"one "}`),
		[]byte(`{"type":"TEXT_MESSAGE_CONTENT",` + msg + `,"delta":"two"}`),
		[]byte(`{"type":"TEXT_MESSAGE_END",` + msg + `}`),
	}
	switch outcomes[in.RunID] {
	case "agent_failed":
		return events
	case "error":
		return append(events, []byte(`{"type":"RUN_ERROR","message":"the model failed"}`))
	case "not_started":
		return nil
	case "interrupt":
		return append(events, []byte(`{"type":"RUN_FINISHED",`+ids+`,"outcome":{"type":"interrupt","interrupts":[{"id":"i1"}]}}`))
	}
	return append(events, []byte(`{"type":"RUN_FINISHED",`+ids+`}`))
}

// TestTelemetryLoad runs 20 runs over 5 threads (4 each, the threads at
// once) through a relay with SDK providers, one of each failing outcome
// among them; then viewers join each thread by prelude, by Last-Event-ID,
// and one finds nothing to send. The metrics count exactly what the load
// did, and there is a span per request and per run, the run's a child of
// its POST's.
func TestTelemetryLoad(t *testing.T) {
	t.Parallel()
	const threads, runs = 5, 4
	a := agenttest.NewScript(t, scriptedRun)
	o := relay.Options{Authorize: func(*http.Request, relay.Action, string) (relay.Grant, error) {
		return relay.Grant{Tenant: "acme"}, nil
	}}
	tel := withTelemetry(&o)
	_, base := newRelay(t, a, o)

	type posted struct {
		status int
		events int
		lastID int // the id of its last event
	}
	var mu sync.Mutex
	results := make(map[string]posted) // by run id
	var wg sync.WaitGroup
	for i := range threads {
		wg.Go(func() {
			for k := 1; k <= runs; k++ {
				thread, run := fmt.Sprintf("t%d", i), fmt.Sprintf("t%d-r%d", i, k)
				status, events := post(t, base, withIDs(t, []byte(`{}`), thread, run))
				p := posted{status: status, events: len(events)}
				if len(events) > 0 {
					p.lastID, _ = strconv.Atoi(events[len(events)-1].id)
				}
				mu.Lock()
				results[run] = p
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	appended, lastPos := 0, make(map[string]int) // by thread
	for run, p := range results {
		want := http.StatusOK
		if outcomes[run] == "not_started" {
			want = http.StatusBadGateway
		}
		require.Equal(t, want, p.status, "POST of %s", run)
		appended += p.events
		lastPos[run[:2]] = max(lastPos[run[:2]], p.lastID)
	}

	preludeBytes := 0
	for i := range threads {
		url := fmt.Sprintf("%s/threads/t%d/events", base, i)
		status, prelude := get(t, url, "")
		require.Equal(t, http.StatusOK, status)
		require.NotEmpty(t, prelude)
		for _, e := range prelude {
			preludeBytes += len(e.data)
		}
		status, rest := get(t, url, "1")
		require.Equal(t, http.StatusOK, status)
		require.NotEmpty(t, rest)
		assert.Equal(t, "2", rest[0].id, "the events after Last-Event-ID 1")
	}
	status, _ := get(t, base+"/threads/t0/events", strconv.Itoa(lastPos["t0"]))
	require.Equal(t, http.StatusNoContent, status, "nothing after the thread's last event: no join")

	spans := tel.ended(t, 20+threads*runs+2*threads+1) // the runs', the POSTs', the GETs'
	require.Eventually(t, func() bool { return tel.points(t)["aguistate.relay.viewers{}"] == 0 }, 10*time.Second, 10*time.Millisecond,
		"every viewer has left")
	points := tel.points(t)
	assert.Equal(t, map[string]float64{
		"aguistate.relay.runs.started{}":                             20,
		"aguistate.relay.runs.ended{outcome=success}":                16,
		"aguistate.relay.runs.ended{outcome=agent_failed}":           1,
		"aguistate.relay.runs.ended{outcome=error}":                  1,
		"aguistate.relay.runs.ended{outcome=not_started}":            1,
		"aguistate.relay.runs.ended{outcome=interrupt}":              1,
		"aguistate.relay.events.appended{}":                          float64(appended),
		"aguistate.relay.viewers{}":                                  0,
		"aguistate.relay.join.first_event.count{kind=run}":           19,
		"aguistate.relay.join.first_event.count{kind=prelude}":       threads,
		"aguistate.relay.join.first_event.count{kind=last_event_id}": threads,
		"aguistate.relay.prelude.size.count{}":                       threads,
		"aguistate.relay.prelude.size.sum{}":                         float64(preludeBytes),
	}, exact(points), "no conflict, no trim, no store error")
	for _, op := range []string{"append", "read", "lease", "release", "load_checkpoint", "save_checkpoint"} {
		assert.Positive(t, points["aguistate.relay.store.duration.count{operation="+op+"}"], "store operation %s", op)
	}
	assert.Positive(t, points["aguistate.relay.join.first_event.sum{kind=run}"], "the time to the first event")

	byName := make(map[string][]sdktrace.ReadOnlySpan)
	byID := make(map[string]sdktrace.ReadOnlySpan)
	for _, s := range spans {
		byName[s.Name()] = append(byName[s.Name()], s)
		byID[s.SpanContext().SpanID().String()] = s
	}
	statuses := func(name string) map[string]int {
		out := make(map[string]int)
		for _, s := range byName[name] {
			a := attrsOf(s)
			assert.Equal(t, "acme", a["aguistate.tenant"], "%s: the tenant", name)
			assert.NotEmpty(t, a["aguistate.thread.id"], "%s: the thread", name)
			assert.NotEmpty(t, a["aguistate.request.id"], "%s: the request id", name)
			out[a["http.response.status_code"]]++
		}
		return out
	}
	assert.Equal(t, map[string]int{"200": 19, "502": 1}, statuses("POST /agent"))
	assert.Equal(t, map[string]int{"200": 2 * threads, "204": 1}, statuses("GET /threads/{threadId}/events"))
	kinds := make(map[string]int)
	for _, s := range byName["GET /threads/{threadId}/events"] {
		kinds[attrsOf(s)["aguistate.join.kind"]]++
	}
	assert.Equal(t, map[string]int{"prelude": threads, "last_event_id": threads, "": 1}, kinds, "the join kinds")

	got := make(map[string]string)
	for _, s := range byName["aguistate.relay.run"] {
		a := attrsOf(s)
		got[a["aguistate.run.id"]] = a["aguistate.run.outcome"]
		parent, ok := byID[s.Parent().SpanID().String()]
		if assert.True(t, ok, "run %s: its parent span is recorded", a["aguistate.run.id"]) {
			assert.Equal(t, "POST /agent", parent.Name())
			assert.Equal(t, a["aguistate.request.id"], attrsOf(parent)["aguistate.request.id"], "the run's request")
		}
		assert.Equal(t, "acme", a["aguistate.tenant"])
	}
	want := make(map[string]string)
	for run := range results {
		want[run] = "success"
		if o, ok := outcomes[run]; ok {
			want[run] = o
		}
	}
	assert.Equal(t, want, got, "a span per run, with its outcome")
}

// flakyStore is a Store whose next Append fails, or meets a conflict: it
// appends another relay's event first.
type flakyStore struct {
	relay.Store
	fail, conflict atomic.Bool
}

func (s *flakyStore) Append(ctx context.Context, thread string, pos int64, events ...[]byte) error {
	switch {
	case s.fail.CompareAndSwap(true, false):
		return errors.New("the store failed")
	case s.conflict.CompareAndSwap(true, false):
		other := `{"type":"RUN_STARTED","threadId":"t","runId":"another"}`
		if err := s.Store.Append(ctx, thread, pos, []byte(other)); err != nil {
			return err
		}
	}
	return s.Store.Append(ctx, thread, pos, events...)
}

// TestTelemetryStore checks the metrics of the store's operations: a
// failed append (which the relay retries), a conflict (the run is lost),
// trims.
func TestTelemetryStore(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, reason string
		set          func(*flakyStore, *relay.Options)
		status       int
		want         map[string]float64 // points of the exact metrics, beside the runs and joins
	}{{
		name:   "failed append",
		reason: "an append that fails is an error of the store; the relay appends the run again",
		set:    func(s *flakyStore, _ *relay.Options) { s.fail.Store(true) },
		status: http.StatusOK,
		want: map[string]float64{
			"aguistate.relay.store.errors{operation=append}": 1,
			"aguistate.relay.runs.ended{outcome=success}":    1,
		},
	}, {
		name:   "conflict",
		reason: "an append after another relay's is a conflict, not an error; the run is lost to it",
		set:    func(s *flakyStore, _ *relay.Options) { s.conflict.Store(true) },
		status: http.StatusConflict,
		want: map[string]float64{
			"aguistate.relay.append.conflicts{}":             1,
			"aguistate.relay.events.appended{}":              0, // the other relay's event is appended behind the relay's back
			"aguistate.relay.runs.ended{outcome=lost}":       1,
			"aguistate.relay.store.errors{operation=append}": 0,
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			store := &flakyStore{Store: relay.NewMemory(nil)}
			o := relay.Options{Store: store}
			tel := withTelemetry(&o)
			tt.set(store, &o)
			_, base := newRelay(t, agenttest.NewScript(t, scriptedRun), o)
			status, _ := post(t, base, withIDs(t, []byte(`{}`), "t", "t-r1"))
			require.Equal(t, tt.status, status, tt.reason)
			tel.ended(t, 2) // the run's span and the POST's: the run has ended
			points := tel.points(t)
			for k, v := range tt.want {
				assert.Equal(t, v, points[k], "%s: %s", k, tt.reason)
			}
			assert.Equal(t, 1.0, points["aguistate.relay.runs.started{}"])
		})
	}
}

// TestTelemetryTrims runs a run whose checkpoints allow trims: each trim
// that the store took is counted.
func TestTelemetryTrims(t *testing.T) {
	t.Parallel()
	a := agenttest.NewScript(t, scriptedRun)
	a.Pace(time.Millisecond) // a batch per event or so: a checkpoint, and a trim, after each other
	o := relay.Options{CheckpointEvery: 1, KeepEvents: 1}
	tel := withTelemetry(&o)
	_, base := newRelay(t, a, o)
	status, events := post(t, base, withIDs(t, []byte(`{}`), "t", "t-r1"))
	require.Equal(t, http.StatusOK, status)
	tel.ended(t, 2)
	points := tel.points(t)
	assert.Positive(t, points["aguistate.relay.trims{}"], "trims")
	assert.LessOrEqual(t, points["aguistate.relay.trims{}"], float64(len(events)), "a trim per checkpoint at most")
	status, rest := get(t, base+"/threads/t/events", "1")
	require.Equal(t, http.StatusOK, status)
	require.NotEmpty(t, rest)
	assert.Equal(t, "", rest[0].id, "the log no longer holds what follows 1: a prelude")
	assert.Equal(t, 1.0, tel.points(t)["aguistate.relay.join.first_event.count{kind=prelude}"],
		"a join by Last-Event-ID that got a prelude joined by prelude")
}

// TestTelemetryParent serves requests whose trace goes on from elsewhere:
// the request's span is a child of the span in the request's context (a
// handler in front made it), or else of the traceparent header's, read by
// the global propagator. Not parallel: it sets the global propagator.
func TestTelemetryParent(t *testing.T) {
	old := otel.GetTextMapPropagator()
	otel.SetTextMapPropagator(propagation.TraceContext{})
	t.Cleanup(func() { otel.SetTextMapPropagator(old) })
	const traceID, spanID = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	tests := []struct {
		name, reason string
		request      func(ctx context.Context, parent trace.SpanContext) *http.Request
		want         func(parent trace.SpanContext) (trace.TraceID, trace.SpanID)
	}{{
		name:   "context",
		reason: "a span in the context is the parent; the header is not read",
		request: func(ctx context.Context, _ trace.SpanContext) *http.Request {
			req := httptest.NewRequestWithContext(ctx, http.MethodGet, "/threads/nope", nil)
			req.Header.Set("traceparent", "00-"+traceID+"-"+spanID+"-01")
			return req
		},
		want: func(parent trace.SpanContext) (trace.TraceID, trace.SpanID) { return parent.TraceID(), parent.SpanID() },
	}, {
		name:   "traceparent",
		reason: "without a span in the context, the traceparent header names the parent",
		request: func(context.Context, trace.SpanContext) *http.Request {
			req := httptest.NewRequest(http.MethodGet, "/threads/nope", nil)
			req.Header.Set("traceparent", "00-"+traceID+"-"+spanID+"-01")
			return req
		},
		want: func(trace.SpanContext) (trace.TraceID, trace.SpanID) {
			tid, _ := trace.TraceIDFromHex(traceID)
			sid, _ := trace.SpanIDFromHex(spanID)
			return tid, sid
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var o relay.Options
			tel := withTelemetry(&o)
			r := relay.New(nil, &o)
			defer r.Close()
			ctx, parent := o.TracerProvider.Tracer("test").Start(context.Background(), "front")
			rec := httptest.NewRecorder()
			r.ServeHTTP(rec, tt.request(ctx, parent.SpanContext()))
			parent.End()
			assert.Equal(t, http.StatusNotFound, rec.Code)
			var served sdktrace.ReadOnlySpan
			for _, s := range tel.ended(t, 2) {
				if s.Name() == "GET /threads/{threadId}" {
					served = s
				}
			}
			require.NotNil(t, served, "the request's span")
			tid, sid := tt.want(parent.SpanContext())
			assert.Equal(t, tid, served.SpanContext().TraceID(), tt.reason)
			assert.Equal(t, sid, served.Parent().SpanID(), tt.reason)
			assert.Equal(t, map[string]string{
				"http.request.method":       "GET",
				"http.route":                "/threads/{threadId}",
				"http.response.status_code": "404",
				"aguistate.request.id":      rec.Header().Get("X-Request-Id"),
				"aguistate.tenant":          "",
				"aguistate.thread.id":       "nope",
			}, attrsOf(served))
		})
	}
}

// BenchmarkTelemetry runs a run of 8 events through a relay on Memory, its
// POST's stream read whole, with no providers (the global no-op ones) and
// with the SDK's (a ManualReader, every span recorded): the cost of the
// instrumentation.
func BenchmarkTelemetry(b *testing.B) {
	for _, sdk := range []bool{false, true} {
		b.Run(fmt.Sprintf("sdk=%v", sdk), func(b *testing.B) {
			var o relay.Options
			if sdk {
				withTelemetry(&o)
			}
			_, base := newRelay(b, agenttest.NewScript(b, scriptedRun), o)
			i := 0
			for b.Loop() {
				i++
				thread := fmt.Sprintf("b%d", i)
				status, events := post(b, base, withIDs(b, []byte(`{}`), thread, thread+"-r1"))
				if status != http.StatusOK || len(events) == 0 {
					b.Fatalf("POST: %d, %d events", status, len(events))
				}
			}
		})
	}
}
