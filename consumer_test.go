package aguistate

import (
	"fmt"
	"slices"
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
	msgs[0].ID = "changed by the caller"
	require.NoError(t, c.Apply([]byte(`{"type":"STATE_DELTA","delta":[{"op":"add","path":"/a/-","value":2}]}`)))
	require.NoError(t, c.Apply([]byte(`{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"m","role":"user","content":"y"}]}`)))
	assert.Equal(t, `{"a":[1]}`, state.String(), "the old view is intact")
	assert.Equal(t, `{"a":[1,2]}`, c.State().String())
	assert.Equal(t, "m", c.Messages()[0].ID, "the caller's slice is its own")
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
