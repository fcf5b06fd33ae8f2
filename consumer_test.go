// Tests of the Consumer: concurrent readers, immutable views, memory that does
// not grow, FuzzApplyEvents, ValidateState.

package aguistate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aguistate/aguistate/internal/jsonv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pairedStream returns n events that each keep two invariants, which hold
// between events and break in the middle of one: the state's "a" and "b"
// are equal (each delta sets both, in one patch), and every message has the
// same "v" (each messages snapshot sets all of them).
func pairedStream(n int) [][]byte {
	events := [][]byte{[]byte(`{"type":"STATE_SNAPSHOT","snapshot":{"a":0,"b":0,"log":[]}}`)}
	for i := 1; len(events) < n; i++ {
		events = append(events,
			fmt.Appendf(nil, `{"type":"STATE_DELTA","delta":[{"op":"replace","path":"/a","value":%d},{"op":"add","path":"/log/-","value":%d},{"op":"replace","path":"/b","value":%d}]}`, i, i, i),
			fmt.Appendf(nil, `{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"m1","role":"user","v":%d},{"id":"m%d","role":"assistant","v":%d},{"id":"m3","role":"user","v":%d}]}`, i, i%7+4, i, i))
	}
	return events
}

// TestConcurrentReaders applies a long stream while many goroutines read,
// and requires that no reader ever sees half an event. Run it with -race.
func TestConcurrentReaders(t *testing.T) {
	t.Parallel()
	events := pairedStream(4000)
	c := New(nil)
	var done atomic.Bool
	var reads atomic.Int64
	var wg sync.WaitGroup
	for r := 0; r < 8; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !done.Load() {
				st := c.State().node()
				if a, b := st.Get("a"), st.Get("b"); a != nil && !jsonv.Equal(a, b) {
					t.Errorf("half a delta: a=%s b=%s", jsonv.Marshal(a), jsonv.Marshal(b))
					return
				}
				ms := c.Messages()
				for _, m := range ms {
					if !jsonv.Equal(m.v.Get("v"), ms[0].v.Get("v")) {
						t.Errorf("half a messages snapshot: %s vs %s", jsonv.Marshal(m.v), jsonv.Marshal(ms[0].v))
						return
					}
				}
				_ = c.Diverged()
				reads.Add(1)
			}
		}()
	}
	for _, ev := range events {
		require.NoError(t, c.Apply(ev))
	}
	done.Store(true)
	wg.Wait()
	assert.Positive(t, reads.Load())
	assert.Equal(t, (len(events)-1)/2, c.State().node().Get("log").Len(), "every delta applied")
}

// TestReadersKeepTheirView checks that a value read before an event is not
// changed by it: readers get immutable views, not the Consumer's working copy.
func TestReadersKeepTheirView(t *testing.T) {
	t.Parallel()
	c := New(nil)
	require.NoError(t, c.Apply([]byte(`{"type":"STATE_SNAPSHOT","snapshot":{"a":[1]}}`)))
	require.NoError(t, c.Apply([]byte(`{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"m","role":"user","content":"x"}]}`)))
	state, msgs := c.State(), c.Messages()
	msgs[0].id = "changed by the caller"
	require.NoError(t, c.Apply([]byte(`{"type":"STATE_DELTA","delta":[{"op":"add","path":"/a/-","value":2}]}`)))
	require.NoError(t, c.Apply([]byte(`{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"m","role":"user","content":"y"}]}`)))
	assert.Equal(t, `{"a":[1]}`, state.String(), "the old view is intact")
	assert.Equal(t, `{"a":[1,2]}`, c.State().String())
	assert.Equal(t, "m", c.Messages()[0].ID(), "the caller's slice is its own")
}

// TestMessageByID checks Consumer.Message: a held message by id, in its
// latest form; none for an id not held, for "", and for a run input's
// message without an id.
func TestMessageByID(t *testing.T) {
	t.Parallel()
	c := New(nil)
	require.NoError(t, startRun(c, `{"messages":[{"role":"user","content":"no id"},{"id":"u","role":"user","content":"hi"}]}`))
	require.NoError(t, c.Apply([]byte(`{"type":"TEXT_MESSAGE_START","messageId":"a"}`)))
	require.NoError(t, c.Apply([]byte(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"a","delta":"yes"}`)))
	for _, tt := range []struct {
		id, text string
		ok       bool
		reason   string
	}{
		{"u", "hi", true, "a message of the run input"},
		{"a", "yes", true, "a message as its events left it"},
		{"b", "", false, "an id not held"},
		{"", "", false, "the empty id names no message, not the one without an id"},
	} {
		m, ok := c.Message(tt.id)
		assert.Equal(t, tt.ok, ok, tt.reason)
		assert.Equal(t, tt.text, m.Text(), tt.reason)
	}
}

// BenchmarkReadWhileApplying measures how long State and Messages take
// while another goroutine applies a stream, and reports the 50th and 99th
// percentile latency.
func BenchmarkReadWhileApplying(b *testing.B) {
	events := pairedStream(2000)
	c := New(nil)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := c.Apply(events[i%len(events)]); err != nil {
				b.Error(err)
				return
			}
		}
	}()
	lat := make([]time.Duration, 0, 1<<16)
	for b.Loop() {
		start := time.Now()
		_ = c.State()
		_ = c.Messages()
		lat = append(lat, time.Since(start))
	}
	close(stop)
	wg.Wait()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
}

// liveHeap returns the bytes of live heap objects after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestMemoryDoesNotGrowWithEvents applies long streams and requires the live
// heap to stay flat from a short prefix to ten times as many events: a
// Consumer holds its live thread, not the history of its views.
func TestMemoryDoesNotGrowWithEvents(t *testing.T) {
	const messages = 200
	tests := []struct {
		name, reason string
		event        func(i int) string
		short, long  int
		slack        uint64 // bytes the live thread itself may grow by
	}{
		{
			name:   "no-op events",
			reason: "STEP_STARTED changes nothing, so the heap must not change",
			event:  func(int) string { return `{"type":"STEP_STARTED","stepName":"s"}` },
			short:  2_000, long: 20_000, slack: 1 << 20,
		},
		{
			name:   "one-byte text deltas",
			reason: "each delta grows the message by one byte and nothing else",
			event:  func(int) string { return `{"type":"TEXT_MESSAGE_CONTENT","messageId":"live","delta":"x"}` },
			short:  2_000, long: 20_000, slack: 1 << 20,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New(nil)
			for i := range messages {
				require.NoError(t, c.Apply(fmt.Appendf(nil,
					`{"type":"TEXT_MESSAGE_START","messageId":"m%d","role":"assistant"}`, i)))
			}
			require.NoError(t, c.Apply([]byte(`{"type":"TEXT_MESSAGE_START","messageId":"live"}`)))
			for i := range tt.short {
				require.NoError(t, c.Apply([]byte(tt.event(i))))
			}
			before := liveHeap()
			for i := tt.short; i < tt.long; i++ {
				require.NoError(t, c.Apply([]byte(tt.event(i))))
			}
			after := liveHeap()
			runtime.KeepAlive(c)
			grew := int64(after) - int64(before)
			require.LessOrEqual(t, grew, int64(tt.slack), "%s: the live heap grew by %d bytes over %d events",
				tt.reason, grew, tt.long-tt.short)
		})
	}
}

// fuzzSeeds are event streams, one event per line, taken from the
// reference-client cases and the chunk tests.
var fuzzSeeds = []string{
	`{"type":"RUN_STARTED","threadId":"t","runId":"r","input":{"threadId":"t","runId":"r","state":{"b":2},"messages":[{"id":"u1","role":"user","content":"CHANGED"},{"id":"u2","role":"user","content":"new","subagentRunId":null}]}}
{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"interrupt","interrupts":[{"id":"i1","reason":"tool_call","subagentRunId":null}]}}
{"type":"RUN_ERROR","message":"boom","code":"E"}`,
	`{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"user","name":"bob","subagentRunId":"sub1","metadata":{"a":1}}
{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"x","metadata":{"b":2}}
{"type":"TEXT_MESSAGE_END","messageId":"m1","metadata":{"a":9}}
{"type":"REASONING_MESSAGE_START","messageId":"u1","role":"reasoning"}
{"type":"REASONING_MESSAGE_CONTENT","messageId":"act","delta":"y"}
{"type":"REASONING_ENCRYPTED_VALUE","subtype":"message","entityId":"u1","encryptedValue":"E1"}`,
	`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"f","parentMessageId":"a1","metadata":{"m":1}}
{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{\"x\":"}
{"type":"TOOL_CALL_END","toolCallId":"c1"}
{"type":"TOOL_CALL_RESULT","messageId":"t1","toolCallId":"c1","content":"r1"}
{"type":"TOOL_CALL_START","toolCallId":"c2","toolCallName":"g","parentMessageId":"u1"}
{"type":"REASONING_ENCRYPTED_VALUE","subtype":"tool-call","entityId":"c1","encryptedValue":"E2"}`,
	`{"type":"ACTIVITY_SNAPSHOT","messageId":"act1","activityType":"plan","content":{"steps":["a"]}}
{"type":"ACTIVITY_DELTA","messageId":"act1","activityType":"plan-v2","patch":[{"op":"add","path":"/steps/-","value":"b"}]}
{"type":"ACTIVITY_DELTA","messageId":"act1","activityType":"plan-v3","patch":[{"op":"replace","path":"/nope/x","value":1}]}
{"type":"ACTIVITY_SNAPSHOT","messageId":"u1","activityType":"hijack","content":{"h":1},"replace":false}`,
	`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","delta":"a"}
{"type":"TEXT_MESSAGE_CHUNK","delta":"b"}
{"type":"TOOL_CALL_CHUNK","toolCallId":"c1","toolCallName":"f","parentMessageId":"m1","delta":"{}"}
{"type":"REASONING_MESSAGE_CHUNK","messageId":"r1","subagentRunId":"s1","delta":"a"}
{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","role":"user","delta":"c"}
{"type":"SUBAGENT_FINISHED","subagentRunId":"s1"}
{"type":"TEXT_MESSAGE_CHUNK","subagentRunId":"s1","delta":"d"}`,
	`{"type":"STATE_DELTA","delta":[{"op":"add","path":"/a/-","value":3}]}
{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"a1","role":"assistant","content":"x"}]}
{"type":"TEXT_MESSAGE_CONTENT","messageId":"a1","delta":"y"}
{"type":"STATE_SNAPSHOT","snapshot":null}`,
}

// FuzzApplyEvents feeds event streams (one event per line) to a Consumer:
// nothing panics, every error is an *EventError of a fatal class, and a
// fatal event leaves the Consumer exactly as it was.
func FuzzApplyEvents(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	// And every bundled stream, one event per line.
	files, _ := filepath.Glob(filepath.Join("testdata", "streams", "*"))
	for _, file := range files {
		if ext := filepath.Ext(file); ext == ".sse" || ext == ".jsonl" || strings.HasSuffix(file, ".events.json") {
			f.Add(bytes.Join(streamEvents(f, file), []byte("\n")))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c := New(&Options{MaxDepth: 64})
		if err := startRun(c, `{"state":{"a":[1,2]},"messages":[{"id":"u1","role":"user","content":"hi"},{"id":"act","role":"activity","activityType":"p","content":{}}]}`); err != nil {
			t.Fatal(err)
		}
		for _, line := range bytes.Split(data, []byte("\n")) {
			before := snapshot(c)
			err := c.Apply(line)
			if err == nil {
				continue
			}
			var ee *EventError
			if !errors.As(err, &ee) {
				t.Fatalf("error %v is not an *EventError", err)
			}
			if !errors.Is(err, ErrMalformedEvent) && !errors.Is(err, errMalformedPatch) &&
				!errors.Is(err, errMalformedMessages) && !errors.Is(err, ErrLimit) {
				t.Fatalf("error %v is not of a fatal class", err)
			}
			if !strings.HasPrefix(err.Error(), "aguistate: ") {
				t.Fatalf("error text %q", err)
			}
			if after := snapshot(c); after != before {
				t.Fatalf("a fatal event changed the Consumer:\nbefore %s\nafter  %s", before, after)
			}
		}
		out, err := json.Marshal(c.NextInput(nil))
		if err != nil || !json.Valid(out) {
			t.Fatalf("next input %s: %v", out, err)
		}
	})
}

// TestValidateState checks the hook: a rejected state is skipped like a
// failed patch, and a run input's is refused.
func TestValidateState(t *testing.T) {
	t.Parallel()
	errNegative := errors.New("count must not be negative")
	var seen []string
	c := New(&Options{ValidateState: func(s Value) error {
		seen = append(seen, s.String())
		if n := s.node().Get("count"); n != nil && n.Text()[0] == '-' {
			return errNegative
		}
		return nil
	}})
	warnings := warningsOf(c)
	require.NoError(t, startRun(c, `{"state":{"count":1}}`))
	require.NoError(t, c.Apply([]byte(`{"type":"STATE_DELTA","delta":[{"op":"replace","path":"/count","value":-5}]}`)))
	assert.Equal(t, `{"count":1}`, c.State().String(), "the rejected state was not committed")
	assert.True(t, c.Diverged())
	require.Len(t, warnings(), 1)
	assert.ErrorIs(t, warnings()[0], ErrStateRejected)
	assert.ErrorIs(t, warnings()[0], errNegative, "the hook's error is wrapped")
	require.NoError(t, c.Apply([]byte(`{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"m","role":"user"}]}`)))
	require.NoError(t, c.Apply([]byte(`{"type":"STATE_SNAPSHOT","snapshot":{"count":2}}`)))
	assert.False(t, c.Diverged(), "a valid snapshot ends the divergence")
	assert.Equal(t, []string{`{"count":1}`, `{"count":-5}`, `{"count":2}`}, seen, "called once per candidate state, not for events that leave it")
	err := startRun(c, `{"state":{"count":-1}}`)
	assert.ErrorIs(t, err, ErrStateRejected)
	assert.Equal(t, `{"count":2}`, c.State().String())

	bad := New(nil)
	require.NoError(t, bad.Apply([]byte(`{"type":"STATE_SNAPSHOT","snapshot":{"count":-3}}`)))
	_, err = Restore(bad.Checkpoint(), &Options{ValidateState: c.opts.ValidateState})
	assert.ErrorIs(t, err, ErrStateRejected, "a restored state goes through the same check")
}
