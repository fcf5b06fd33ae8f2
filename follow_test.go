// Tests of the reconnect schedule of RunAgent and Follow.

package aguistate

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

// TestFollowRepeatedPrelude checks that an answer that brings the thread
// back to where it was, again and again, and drops, uses up the
// reconnects: only a position past the furthest reached resets their count.
func TestFollowRepeatedPrelude(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "retry: 1\nid:\ndata: {\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n\n"+
			"id: 1\ndata: {\"type\":\"STEP_STARTED\",\"stepName\":\"s\"}\n\n")
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := New(nil).Follow(ctx, &Agent{Reconnects: 3}, srv.URL)
	require.Error(t, err)
	assert.NoError(t, ctx.Err(), "the reconnects end it, not the context")
	assert.Equal(t, int64(1+3), requests.Load(), "the first request and three reconnects")
}
