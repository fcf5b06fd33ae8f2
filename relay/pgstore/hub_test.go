package pgstore_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aguistate/aguistate/relay/pgstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// logCount counts the records logged at level Warn.
type logCount struct {
	mu   sync.Mutex
	warn int
}

func (l *logCount) Enabled(context.Context, slog.Level) bool { return true }
func (l *logCount) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logCount) WithGroup(string) slog.Handler            { return l }
func (l *logCount) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r.Level == slog.LevelWarn {
		l.warn++
	}
	return nil
}

func (l *logCount) warnings() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.warn
}

// TestListenerReconnects kills the connection that listens for appends
// while a follower waits: the loss is logged, the store listens again, and
// the follower gets the event appended meanwhile.
func TestListenerReconnects(t *testing.T) {
	harness(t) // skips without a server
	ns := "aguistate_test_listen_" + strings.ReplaceAll(time.Now().Format("150405.000000"), ".", "")
	pool := setup(t, ns)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	logs := &logCount{}
	opts := &pgstore.Options{Schema: ns, Logger: slog.New(logs)}
	s, err := pgstore.New(pool, opts)
	require.NoError(t, err)
	defer s.Close()

	got := make(chan int64)
	go func() {
		for e, err := range s.Follow(ctx, "t", 0) {
			if err != nil {
				return
			}
			got <- e.Pos
		}
	}()
	require.NoError(t, s.Append(ctx, "t", 1, []byte(`{"n":1}`)))
	require.Equal(t, int64(1), <-got)

	var killed int
	for range 100 { // the listener connects in the background
		require.NoError(t, pool.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
			WHERE query ILIKE 'listen %' AND query LIKE '%' || $1 || '%'`, ns).Scan(&killed))
		if killed > 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	require.Equal(t, 1, killed, "the listening connection")
	require.NoError(t, s.Append(ctx, "t", 2, []byte(`{"n":2}`)))
	select {
	case pos := <-got:
		assert.Equal(t, int64(2), pos)
	case <-ctx.Done():
		t.Fatal("the follower missed the event appended while the store listened again")
	}
	assert.Positive(t, logs.warnings(), "the lost connection is logged")
}

// TestCloseEndsFollow closes a store while a follower waits: the follow
// ends with an error, and so does a later one.
func TestCloseEndsFollow(t *testing.T) {
	harness(t) // skips without a server
	ns := "aguistate_test_close_" + strings.ReplaceAll(time.Now().Format("150405.000000"), ".", "")
	pool := setup(t, ns)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	opts := &pgstore.Options{Schema: ns}
	s, err := pgstore.New(pool, opts)
	require.NoError(t, err)

	ended := make(chan error)
	go func() {
		for _, err := range s.Follow(ctx, "t", 0) {
			ended <- err
			return
		}
	}()
	time.Sleep(100 * time.Millisecond) // let it wait
	s.Close()
	assert.ErrorContains(t, <-ended, "closed")
	for _, err := range s.Follow(ctx, "t", 0) {
		assert.ErrorContains(t, err, "closed")
		break
	}
}
