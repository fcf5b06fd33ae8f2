package aguistate

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

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
