// The hub against a real server: a subscription lost and made again, a store closed.

package redisstore_test

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aguistate/aguistate/relay/redisstore"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// warnCount counts the records logged at level Warn.
type warnCount struct{ n atomic.Int64 }

func (w *warnCount) Enabled(context.Context, slog.Level) bool { return true }
func (w *warnCount) WithAttrs([]slog.Attr) slog.Handler       { return w }
func (w *warnCount) WithGroup(string) slog.Handler            { return w }
func (w *warnCount) Handle(_ context.Context, r slog.Record) error {
	if r.Level == slog.LevelWarn {
		w.n.Add(1)
	}
	return nil
}

// killPubSub kills the pub/sub connections of the clients named name, and
// returns how many it killed.
func killPubSub(t *testing.T, ctx context.Context, name string) int {
	direct := redis.NewClient(&redis.Options{Addr: serverAddr})
	defer direct.Close()
	list, err := direct.ClientList(ctx).Result()
	require.NoError(t, err)
	killed := 0
	for line := range strings.Lines(list) {
		fields := map[string]string{}
		for f := range strings.FieldsSeq(line) {
			k, v, _ := strings.Cut(f, "=")
			fields[k] = v
		}
		if fields["name"] == name && strings.Contains(fields["flags"], "P") {
			require.NoError(t, direct.Do(ctx, "CLIENT", "KILL", "ID", fields["id"]).Err())
			killed++
		}
	}
	return killed
}

// TestSubscriptionLost kills the connection that subscribes while a
// follower waits, and appends once the store has logged the loss, before
// it subscribes again: subscribing again wakes the follower, which gets
// the event (the poll is off, so nothing else could wake it).
func TestSubscriptionLost(t *testing.T) {
	harness(t) // skips without a server
	ns := testNamespace("lost")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	logs := &warnCount{}
	rdb := redis.NewClient(&redis.Options{Addr: serverAddr, ClientName: ns})
	s := openClient(t, ns, rdb, &redisstore.Options{Logger: slog.New(logs)})
	redisstore.SetTiming(s, time.Hour, time.Minute)

	got := make(chan int64)
	go func() {
		for e, err := range s.Follow(ctx, "t", 0) {
			if err != nil {
				return
			}
			got <- e.Pos
		}
	}()
	killed := 0
	for range 100 { // the store subscribes in the background
		if killed = killPubSub(t, ctx, ns); killed > 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	require.Equal(t, 1, killed, "the subscribing connection")
	for logs.n.Load() == 0 && ctx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // the follower, woken by the loss, reads the log again
	require.NoError(t, s.Append(ctx, "t", 1, []byte(`{"n":1}`)))
	select {
	case pos := <-got:
		assert.Equal(t, int64(1), pos)
	case <-ctx.Done():
		t.Fatal("the follower missed the event appended while the store subscribed again")
	}
}

// TestSubscriptionPings lets a follower wait on a subscription pinged
// after 250 ms of silence: each ping is answered, so the subscription is never taken
// for lost (nothing is logged), and an append still wakes the follower
// (the poll is off).
func TestSubscriptionPings(t *testing.T) {
	harness(t) // skips without a server
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	logs := &warnCount{}
	s := openClient(t, testNamespace("ping"), redis.NewClient(&redis.Options{Addr: serverAddr}),
		&redisstore.Options{Logger: slog.New(logs)})
	redisstore.SetTiming(s, time.Hour, 250*time.Millisecond)

	got := make(chan int64)
	go func() {
		for e, err := range s.Follow(ctx, "t", 0) {
			if err != nil {
				return
			}
			got <- e.Pos
		}
	}()
	time.Sleep(2 * time.Second) // about 8 pings
	require.NoError(t, s.Append(ctx, "t", 1, []byte(`{"n":1}`)))
	select {
	case pos := <-got:
		assert.Equal(t, int64(1), pos)
	case <-ctx.Done():
		t.Fatal("the follower missed the event")
	}
	assert.Zero(t, logs.n.Load(), "warnings: a ping taken for a lost subscription")
}

// TestCloseEndsFollow closes a store while a follower waits: the follow
// ends with an error, and so does a later one.
func TestCloseEndsFollow(t *testing.T) {
	harness(t) // skips without a server
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := openClient(t, testNamespace("close"), redis.NewClient(&redis.Options{Addr: serverAddr}), nil)

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

// TestClientClosed closes the client, not the store, while a follower
// waits: the follow ends with an error.
func TestClientClosed(t *testing.T) {
	harness(t) // skips without a server
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rdb := redis.NewClient(&redis.Options{Addr: serverAddr})
	s := openClient(t, testNamespace("client"), rdb, nil)

	ended := make(chan error)
	go func() {
		for _, err := range s.Follow(ctx, "t", 0) {
			ended <- err
			return
		}
	}()
	time.Sleep(100 * time.Millisecond) // let it wait
	require.NoError(t, rdb.Close())
	select {
	case err := <-ended:
		assert.Error(t, err)
	case <-ctx.Done():
		t.Fatal("the follow goes on waiting on a closed client")
	}
}
