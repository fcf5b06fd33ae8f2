// Tests of the reconnect schedule of RunAgent and Follow.

package aguistate

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestReconnectWait(t *testing.T) {
	tests := []struct {
		name  string
		retry time.Duration
		tries int
		want  time.Duration
	}{
		{"no retry field", 0, 0, time.Second},
		{"no retry field, doubled", 0, 3, 8 * time.Second},
		{"the stream's retry", 250 * time.Millisecond, 0, 250 * time.Millisecond},
		{"doubled per try", 250 * time.Millisecond, 2, time.Second},
		{"at most 30 s", time.Second, 10, maxReconnectWait},
		{"many tries", time.Second, 1000, maxReconnectWait},
		{"a retry above the cap", time.Hour, 0, maxReconnectWait},
		// A retry of 2^62 ns doubled would overflow to a negative wait.
		{"a retry that would overflow", time.Duration(1) << 62, 16, maxReconnectWait},
		{"the largest retry", math.MaxInt64, 16, maxReconnectWait},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, reconnectWait(tt.retry, tt.tries))
		})
	}
}
