// Conformance tests of Follow: live appends, concurrent followers, the end of a thread, a
// trimmed log.

package storetest

import (
	"context"
	"iter"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/aguistate/aguistate/relay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// follow collects what s.Follow yields after position after until it has
// the entry at position until, then ends the follow and returns them.
func follow(ctx context.Context, s relay.Store, thread string, after, until int64) ([]relay.Entry, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var got []relay.Entry
	if after >= until {
		return nil, nil
	}
	for e, err := range s.Follow(ctx, thread, after) {
		if err != nil {
			return got, err
		}
		got = append(got, e)
		if e.Pos >= until {
			break
		}
	}
	return got, nil
}

// testFollow follows a thread from a second replica: first its backlog,
// then events appended one by one and in batches while it waits, starting
// on a thread with no log.
func testFollow(t *testing.T, h Harness) {
	ns := namespace(t)
	w, r := h.Open(t, ns, ""), h.Open(t, ns, "")
	ctx := testContext(t)
	log := events("e", 1, 40)

	done := make(chan []relay.Entry)
	go func() {
		got, err := follow(ctx, r, "t", 0, 40)
		assert.NoError(t, err)
		done <- got
	}()
	for i := 0; i < 20; i++ { // singles, some while the follower waits
		mustAppend(t, w, "t", int64(i+1), log[i])
		if i%5 == 0 {
			time.Sleep(5 * time.Millisecond)
		}
	}
	mustAppend(t, w, "t", 21, log[20:30]...)
	time.Sleep(5 * time.Millisecond)
	mustAppend(t, w, "t", 31, log[30:]...)
	assert.Equal(t, entries(1, log), <-done)

	got, err := follow(ctx, r, "t", 25, 40)
	require.NoError(t, err)
	assert.Equal(t, entries(26, log[25:]), got, "a follower starting in the backlog")

	for _, after := range []int64{41, -1} {
		_, err = follow(ctx, r, "t", after, 50)
		var re *relay.RangeError
		require.ErrorAs(t, err, &re, "follow after %d", after)
		assert.Equal(t, &relay.RangeError{Thread: "t", After: after}, re)
	}
}

// testFollowConcurrent starts followers on two replicas at random moments
// while a writer appends, each from the position a reader had reached:
// every follower gets every later event exactly once, in order, with none
// missed between its backlog and the live tail.
func testFollowConcurrent(t *testing.T, h Harness) {
	ns := namespace(t)
	replicas := []relay.Store{h.Open(t, ns, ""), h.Open(t, ns, "")}
	ctx := testContext(t)
	const n, followers = 300, 8
	log := events("e", 1, n)

	var wg sync.WaitGroup
	start := make(chan int64, followers)
	for f := range followers {
		wg.Go(func() {
			after := <-start
			got, err := follow(ctx, replicas[f%2], "t", after, n)
			assert.NoError(t, err, "follower %d", f)
			assert.Equal(t, entries(after+1, log[after:]), got, "follower %d after %d", f, after)
		})
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	started := 0
	for pos := int64(1); pos <= n; {
		size := min(int64(1+rnd.IntN(5)), n-pos+1)
		mustAppend(t, replicas[0], "t", pos, log[pos-1:pos-1+size]...)
		pos += size
		if started < followers && rnd.IntN(8) == 0 {
			start <- rnd.Int64N(pos) // a position from 0 to the log's end
			started++
		}
	}
	for ; started < followers; started++ {
		start <- n
	}
	wg.Wait()
}

// testFollowEnd ends a follow that waits on an idle thread by cancelling
// its context or by its deadline: it yields the context's error, promptly.
func testFollowEnd(t *testing.T, h Harness) {
	s, _ := open(t, h)
	mustAppend(t, s, "t", 1, events("e", 1, 2)...)
	cases := []struct {
		name, reason string
		ctx          func() (context.Context, context.CancelFunc)
		want         error
	}{
		{"cancel", "cancelled while it waits", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(testContext(t))
			time.AfterFunc(time.Second, cancel) // long enough to read the log first on a busy machine
			return ctx, cancel
		}, context.Canceled},
		{"deadline", "past its deadline while it waits", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(testContext(t), time.Second)
		}, context.DeadlineExceeded},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := c.ctx()
			defer cancel()
			began := time.Now()
			var got []relay.Entry
			var err error
			for e, ferr := range s.Follow(ctx, "t", 0) {
				if ferr != nil {
					err = ferr
					break
				}
				got = append(got, e)
			}
			assert.ErrorIs(t, err, c.want, c.reason)
			assert.Equal(t, entries(1, events("e", 1, 2)), got, c.reason)
			// A bound for a hung follow, not a timing target.
			assert.Less(t, time.Since(began), 10*time.Second, "the follow ends soon after its context")
		})
	}
}

// testFollowBehindTrim has a follower fall behind a Trim: it gets the
// entries it had, then a *RangeError, never a gap.
func testFollowBehindTrim(t *testing.T, h Harness) {
	s, _ := open(t, h)
	ctx := testContext(t)
	log := events("e", 1, 2000)
	for i := 0; i < len(log); i += 500 {
		mustAppend(t, s, "t", int64(i+1), log[i:i+500]...)
	}
	next, stop := iter.Pull2(s.Follow(ctx, "t", 0))
	defer stop()
	e, err, ok := next()
	require.True(t, ok)
	require.NoError(t, err)
	require.Equal(t, int64(1), e.Pos)

	require.NoError(t, s.SaveCheckpoint(ctx, "t", 1900, []byte(`{}`)))
	require.NoError(t, s.Trim(ctx, "t", 1900))
	last := e.Pos
	for {
		e, err, ok = next()
		require.True(t, ok, "the follow goes on until its error")
		if err != nil {
			break
		}
		require.Equal(t, last+1, e.Pos, "no gap")
		last = e.Pos
	}
	var re *relay.RangeError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, &relay.RangeError{Thread: "t", After: last, Trimmed: true}, re)
	assert.Less(t, last, int64(1899), "the follower fell behind")
	_, _, ok = next()
	assert.False(t, ok, "the follow stops at its error")
}
