// Conformance tests of Append and Read: positions, conflicts, concurrent writers, paging.

package storetest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/aguistate/aguistate/relay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testAppendRead appends single events and a batch, and reads them back
// from every position, byte for byte.
func testAppendRead(t *testing.T, h Harness) {
	s, _ := open(t, h)
	ctx := testContext(t)
	log := [][]byte{
		event(1),
		[]byte(`{ "type" : "CUSTOM",` + "\n" + `"value": "\u00fc \"q\" \\ 𝄞", "n": 1.50e+3 }`),
		[]byte(`{"type":"CUSTOM","value":"` + strings.Repeat("x", 1<<20) + `"}`), // 1 MiB
		event(4),
	}
	require.NoError(t, s.Append(ctx, "t", 1), "an empty append")
	assert.Empty(t, mustRead(t, s, "t", 0), "an empty append writes nothing")
	mustAppend(t, s, "t", 1, log[0])
	mustAppend(t, s, "t", 2, log[1:]...)

	for after := int64(0); after <= 4; after++ {
		assert.Equal(t, entries(after+1, log[after:]), mustRead(t, s, "t", after), "read after %d", after)
	}
	for _, after := range []int64{5, 100, -1} {
		got, err := readAll(ctx, s, "t", after)
		var re *relay.RangeError
		require.ErrorAs(t, err, &re, "read after %d", after)
		assert.Equal(t, &relay.RangeError{Thread: "t", After: after}, re)
		assert.ErrorIs(t, err, relay.ErrOutOfRange)
		assert.Empty(t, got)
	}
	assert.Empty(t, mustRead(t, s, "other", 0), "a thread with no log reads empty")
}

// testConflict appends at every wrong position of a log of three events:
// each is a *ConflictError that names the log's end, and writes nothing.
func testConflict(t *testing.T, h Harness) {
	s, _ := open(t, h)
	ctx := testContext(t)
	log := events("e", 1, 3)
	mustAppend(t, s, "t", 1, log...)

	cases := []struct {
		name, reason string
		pos          int64
		n            int
	}{
		{"first", "the position is taken", 1, 1},
		{"last", "the position is taken", 3, 1},
		{"gap", "a gap before the position", 5, 1},
		{"far", "a gap before the position", 1000, 1},
		{"zero", "positions count from 1", 0, 1},
		{"negative", "positions count from 1", -1, 1},
		{"batch over taken", "a batch that starts at a taken position writes none of its events", 3, 3},
		{"batch after gap", "a batch that starts after a gap writes none of its events", 5, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := s.Append(ctx, "t", c.pos, events("x", 1, c.n)...)
			var ce *relay.ConflictError
			require.ErrorAs(t, err, &ce, c.reason)
			assert.Equal(t, &relay.ConflictError{Thread: "t", Pos: c.pos, Last: 3}, ce, c.reason)
			assert.ErrorIs(t, err, relay.ErrConflict)
			assert.Equal(t, entries(1, log), mustRead(t, s, "t", 0), "the log is as before: %s", c.reason)
		})
	}
	mustAppend(t, s, "t", 4, event(4))
}

// testConcurrentAppend has writers on two replicas race for every position
// of one thread, in single events and batches: exactly one wins each
// position, losers get a conflict, and the log holds every event that was
// acknowledged, once, in whole batches.
func testConcurrentAppend(t *testing.T, h Harness) {
	ns := namespace(t)
	replicas := []relay.Store{h.Open(t, ns, ""), h.Open(t, ns, "")}
	ctx := testContext(t)
	const writers, positions = 8, 120

	var mu sync.Mutex
	acked := make(map[int64][]byte) // position -> event, from nil returns
	conflicts := 0
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			s := replicas[w%len(replicas)]
			size := int64(1 + w%3) // batches of 1, 2 and 3 events
			pos := int64(1)
			for i := 0; pos <= positions; i++ {
				n := min(size, positions-pos+1)
				batch := events(fmt.Sprintf("w%d-%d", w, i), 1, int(n))
				err := s.Append(ctx, "t", pos, batch...)
				var ce *relay.ConflictError
				switch {
				case err == nil:
					mu.Lock()
					for j, e := range batch {
						acked[pos+int64(j)] = e
					}
					mu.Unlock()
					pos += n
				case errors.As(err, &ce):
					if !assert.GreaterOrEqual(t, ce.Last, pos-1, "the log never shrinks") {
						return
					}
					mu.Lock()
					conflicts++
					mu.Unlock()
					pos = ce.Last + 1
				default:
					t.Errorf("writer %d at %d: %v", w, pos, err)
					return
				}
			}
		})
	}
	wg.Wait()

	got := mustRead(t, replicas[0], "t", 0)
	require.Len(t, got, positions, "every position is taken once")
	seen := make(map[string]bool)
	for _, e := range got {
		assert.Equal(t, string(acked[e.Pos]), string(e.Event), "position %d holds the acknowledged event", e.Pos)
		assert.False(t, seen[string(e.Event)], "event %s is in the log once", e.Event)
		seen[string(e.Event)] = true
	}
	assert.Len(t, acked, positions, "every event in the log was acknowledged to its writer")
	assert.Positive(t, conflicts, "the writers raced")
	t.Logf("%d conflicts", conflicts)
}

// testCopies checks that the store keeps copies of what it is given and
// gives out copies of what it holds.
func testCopies(t *testing.T, h Harness) {
	s, _ := open(t, h)
	ctx := testContext(t)
	e, cp := event(1), []byte(`{"checkpoint":1}`)
	mustAppend(t, s, "t", 1, e)
	require.NoError(t, s.SaveCheckpoint(ctx, "t", 1, cp))
	e[0], cp[0] = 'X', 'X'

	got := mustRead(t, s, "t", 0)
	require.Len(t, got, 1)
	assert.Equal(t, string(event(1)), string(got[0].Event), "changing the appended slice changes nothing")
	got[0].Event[0] = 'Y'
	assert.Equal(t, entries(1, [][]byte{event(1)}), mustRead(t, s, "t", 0), "changing a read entry changes nothing")

	_, data, err := s.LoadCheckpoint(ctx, "t")
	require.NoError(t, err)
	assert.Equal(t, `{"checkpoint":1}`, string(data), "changing the saved slice changes nothing")
	data[0] = 'Y'
	_, data, err = s.LoadCheckpoint(ctx, "t")
	require.NoError(t, err)
	assert.Equal(t, `{"checkpoint":1}`, string(data), "changing a loaded checkpoint changes nothing")
}

// testPaging reads a log longer than any page size a store is likely to
// use, from several positions.
func testPaging(t *testing.T, h Harness) {
	s, _ := open(t, h)
	log := events("e", 1, 1200)
	for i := 0; i < len(log); i += 300 {
		mustAppend(t, s, "t", int64(i+1), log[i:i+300]...)
	}
	for _, after := range []int64{0, 1, 255, 256, 257, 511, 512, 513, 1000, 1199, 1200} {
		assert.Equal(t, entries(after+1, log[after:]), mustRead(t, s, "t", after), "read after %d", after)
	}
}
