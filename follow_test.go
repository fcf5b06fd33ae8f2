// Tests of the reconnect schedule of RunAgent and Follow, and of FollowThread.

package aguistate

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
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

// TestFollowThread follows a scripted relay across runs: each answer the
// relay gives to the request with a Last-Event-ID is scripted; the
// follower must ask with follow=thread, reconnect after each answer with
// the last id it got, and end as the row says.
func TestFollowThread(t *testing.T) {
	run := func(id string, first int) string { // a run's three events, from position first
		return fmt.Sprintf("id: %d\ndata: {\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":%q}\n\n", first, id) +
			fmt.Sprintf("id: %d\ndata: {\"type\":\"CUSTOM\",\"name\":\"c\",\"value\":%q}\n\n", first+1, id) +
			fmt.Sprintf("id: %d\ndata: {\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":%q}\n\n", first+2, id)
	}
	const deleted = "204"
	tests := []struct {
		name, reason string
		answers      map[string]string // by Last-Event-ID ("-" for none): the body, or a status
		want         []string          // the Last-Event-IDs asked, in order
		err          string            // "" when it returns nil
		runs         []string          // the run ids applied, in order
	}{
		{"across runs", "an answer per run, each ended; then deleted",
			map[string]string{"-": "retry: 1\n" + run("r1", 1), "3": "retry: 1\n" + run("r2", 4), "6": deleted},
			[]string{"-", "3", "6"}, "", []string{"r1", "r2"}},
		{"first run", "a thread with no event: its first run comes after a reconnect, from position 1",
			map[string]string{"-": "retry: 1\n: keep-alive\n", "": "retry: 1\n" + run("r1", 1), "3": deleted},
			[]string{"-", "", "3"}, "", []string{"r1"}},
		{"server error", "a 500 is tried again",
			map[string]string{"-": "retry: 1\n" + run("r1", 1), "3": "500", "3 again": deleted},
			[]string{"-", "3", "3"}, "", []string{"r1"}},
		{"refused", "a 403 stops it",
			map[string]string{"-": "retry: 1\n" + run("r1", 1), "3": "403"},
			[]string{"-", "3"}, "403 Forbidden", []string{"r1"}},
		{"not resumed", "an answer that skips an event stops it",
			map[string]string{"-": "retry: 1\n" + run("r1", 1), "3": "retry: 1\n" + run("r2", 5)},
			[]string{"-", "3"}, "does not go on after Last-Event-ID", []string{"r1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var asked []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				assert.Equal(t, "thread", r.URL.Query().Get("follow"))
				assert.Equal(t, "x", r.URL.Query().Get("keep"), "the url's own query is kept")
				id, ok := r.Header["Last-Event-Id"]
				key := "-"
				if ok {
					key = id[0]
				}
				answer := tc.answers[key]
				if again, ok := tc.answers[key+" again"]; ok && slices.Contains(asked, key) {
					answer = again
				}
				asked = append(asked, key)
				if status, err := strconv.Atoi(answer); err == nil {
					w.WriteHeader(status)
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprint(w, answer)
			}))
			defer srv.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c := New(nil)
			var runs []string
			c.Subscribe(func(ch Change) {
				if ch.Event.Type == "RUN_STARTED" {
					runs = append(runs, c.RunID())
				}
			})
			err := c.FollowThread(ctx, &Agent{}, srv.URL+"/threads/t/events?keep=x")
			if tc.err == "" {
				assert.NoError(t, err, tc.reason)
			} else {
				assert.ErrorContains(t, err, tc.err, tc.reason)
			}
			assert.Equal(t, tc.want, asked, tc.reason)
			assert.Equal(t, tc.runs, runs)
		})
	}
}

// TestFollowThreadContext: a follower of a thread that sends nothing ends
// with its context, and a second follower of one Consumer is refused.
func TestFollowThreadContext(t *testing.T) {
	joined := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "retry: 1\n")
		w.(http.Flusher).Flush()
		joined <- struct{}{}
		<-r.Context().Done()
	}))
	defer srv.Close()
	c := New(nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- c.FollowThread(ctx, &Agent{}, srv.URL) }()
	<-joined
	second, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	assert.ErrorIs(t, c.FollowThread(second, &Agent{}, srv.URL), ErrRunInProgress, "a second follower while the first streams")
	cancel()
	assert.ErrorIs(t, <-done, context.Canceled)
}
