// Benchmarks of a store's append, read and follow.

package storetest

import (
	"context"
	"fmt"
	"testing"

	"github.com/aguistate/aguistate/relay"
	"github.com/stretchr/testify/require"
)

// benchEvent is a typical streamed event: a TEXT_MESSAGE_CONTENT of a few
// words, 100 bytes of JSON text.
var benchEvent = []byte(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"msg-0001","delta":"a few words of the answer, streamed"}`)

// Bench measures the stores that h opens: appends of one event and of
// batches (ns/op is per event), a read of the backlog, and a follower on a
// second store receiving events as a writer appends them in batches of 16.
// Each reports events/s.
func Bench(b *testing.B, h Harness) {
	for _, size := range []int{1, 16, 128} {
		b.Run(fmt.Sprintf("Append/batch=%d", size), func(b *testing.B) {
			s, _ := open(b, h)
			ctx := testContext(b)
			batch := make([][]byte, size)
			for i := range batch {
				batch[i] = benchEvent
			}
			b.SetBytes(int64(len(benchEvent)))
			pos := int64(1)
			for b.Loop() {
				// One op is one event: a call appends size events every size ops.
				if (pos-1)%int64(size) == 0 {
					require.NoError(b, s.Append(ctx, "t", pos, batch...))
				}
				pos++
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
	b.Run("Read", func(b *testing.B) {
		s, _ := open(b, h)
		ctx := testContext(b)
		fill(b, s, 4096)
		b.SetBytes(int64(len(benchEvent)))
		var n int64
		for b.Loop() {
			// One op is one event: read the log again whenever it runs out.
			if n%4096 == 0 {
				for _, err := range s.Read(ctx, "t", 0) {
					require.NoError(b, err)
				}
			}
			n++
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	})
	b.Run("Follow", func(b *testing.B) {
		ns := namespace(b)
		w, r := h.Open(b, ns, ""), h.Open(b, ns, "")
		ctx, cancel := context.WithCancel(testContext(b))
		defer cancel()
		b.SetBytes(int64(len(benchEvent)))
		n := int64(b.N)
		done := make(chan error, 1)
		go func() {
			_, err := follow(ctx, r, "t", 0, n)
			done <- err
		}()
		b.ResetTimer()
		batch := make([][]byte, 16)
		for i := range batch {
			batch[i] = benchEvent
		}
		for pos := int64(1); pos <= n; pos += 16 {
			require.NoError(b, w.Append(ctx, "t", pos, batch[:min(16, n-pos+1)]...))
		}
		require.NoError(b, <-done)
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	})
}

// fill appends n copies of benchEvent to thread "t".
func fill(b *testing.B, s relay.Store, n int) {
	batch := make([][]byte, 256)
	for i := range batch {
		batch[i] = benchEvent
	}
	for pos := 1; pos <= n; pos += len(batch) {
		require.NoError(b, s.Append(testContext(b), "t", int64(pos), batch[:min(len(batch), n-pos+1)]...))
	}
}
