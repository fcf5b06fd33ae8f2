// Conformance tests of checkpoints, trimming, thread listing, namespaces and replicas.

package storetest

import (
	"bytes"
	"sync"
	"testing"
	"time"

	"github.com/aguistate/aguistate/relay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testCheckpoint saves and loads checkpoints on a log of three events, at
// positions in and out of the log, forwards and backwards.
func testCheckpoint(t *testing.T, h Harness) {
	s, _ := open(t, h)
	ctx := testContext(t)

	_, _, err := s.LoadCheckpoint(ctx, "t")
	assert.ErrorIs(t, err, relay.ErrNoCheckpoint, "a new thread has no checkpoint")
	require.NoError(t, s.SaveCheckpoint(ctx, "empty", 0, []byte{}), "the checkpoint of a thread with no log")
	pos, data, err := s.LoadCheckpoint(ctx, "empty")
	require.NoError(t, err)
	assert.Equal(t, int64(0), pos)
	assert.Empty(t, data)

	mustAppend(t, s, "t", 1, events("e", 1, 3)...)
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	steps := []struct {
		name, reason string
		pos          int64
		data         string
		conflict     bool   // SaveCheckpoint returns a *ConflictError
		wantPos      int64  // LoadCheckpoint's position after the step
		want         string // and its data
	}{
		{"first", "a position in the log", 2, "cp2", false, 2, "cp2"},
		{"past the log", "the log ends at 3", 4, "cp4", true, 2, "cp2"},
		{"negative", "positions count from 0", -1, "cp-1", true, 2, "cp2"},
		{"back", "a checkpoint never moves back", 1, "cp1", false, 2, "cp2"},
		{"forward", "the log's last position", 3, "cp3", false, 3, "cp3"},
		{"same position", "replaces the one held", 3, "cp3b", false, 3, "cp3b"},
		{"large", "a 1 MiB checkpoint, byte for byte", 3, string(big), false, 3, string(big)},
	}
	for _, c := range steps {
		err := s.SaveCheckpoint(ctx, "t", c.pos, []byte(c.data))
		if c.conflict {
			var ce *relay.ConflictError
			require.ErrorAs(t, err, &ce, "%s: %s", c.name, c.reason)
			assert.Equal(t, &relay.ConflictError{Thread: "t", Pos: c.pos, Last: 3}, ce, c.name)
		} else {
			require.NoError(t, err, "%s: %s", c.name, c.reason)
		}
		pos, data, err := s.LoadCheckpoint(ctx, "t")
		require.NoError(t, err, c.name)
		assert.Equal(t, c.wantPos, pos, "%s: %s", c.name, c.reason)
		assert.True(t, string(data) == c.want, "%s: %s: data differs", c.name, c.reason)
	}
}

// testCheckpointConcurrent saves checkpoints at every position from
// several goroutines at once: the one held in the end is the latest.
func testCheckpointConcurrent(t *testing.T, h Harness) {
	ns := namespace(t)
	replicas := []relay.Store{h.Open(t, ns, ""), h.Open(t, ns, "")}
	ctx := testContext(t)
	const n = 40
	mustAppend(t, replicas[0], "t", 1, events("e", 1, n)...)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for pos := int64(g); pos <= n; pos += 4 {
				assert.NoError(t, replicas[g%2].SaveCheckpoint(ctx, "t", pos, event(pos)))
			}
		})
	}
	wg.Wait()
	pos, data, err := replicas[1].LoadCheckpoint(ctx, "t")
	require.NoError(t, err)
	assert.Equal(t, int64(n), pos)
	assert.Equal(t, string(event(n)), string(data))
}

// testTrim trims a log of ten events before, at and past its checkpoint,
// and reads it from every position afterwards.
func testTrim(t *testing.T, h Harness) {
	s, _ := open(t, h)
	ctx := testContext(t)
	log := events("e", 1, 10)
	mustAppend(t, s, "t", 1, log...)

	require.NoError(t, s.Trim(ctx, "t", 8))
	require.NoError(t, s.Trim(ctx, "none", 8), "a thread with no log")
	assert.Equal(t, entries(1, log), mustRead(t, s, "t", 0), "without a checkpoint Trim removes nothing")

	// check reads after every position: trimmed ones below first, the log
	// from first on, and past its end.
	check := func(first int64, reason string) {
		t.Helper()
		for after := int64(0); after <= int64(len(log))+1; after++ {
			got, err := readAll(ctx, s, "t", after)
			switch {
			case after < first-1:
				var re *relay.RangeError
				if assert.ErrorAs(t, err, &re, "%s: read after %d", reason, after) {
					assert.Equal(t, &relay.RangeError{Thread: "t", After: after, Trimmed: true}, re, reason)
				}
				assert.Empty(t, got)
			case after > int64(len(log)):
				assert.ErrorIs(t, err, relay.ErrOutOfRange, "%s: read after %d", reason, after)
			default:
				assert.NoError(t, err, "%s: read after %d", reason, after)
				assert.Equal(t, entries(after+1, log[after:]), got, "%s: read after %d", reason, after)
			}
		}
	}

	require.NoError(t, s.SaveCheckpoint(ctx, "t", 6, []byte("cp6")))
	require.NoError(t, s.Trim(ctx, "t", 4))
	check(4, "trimmed before 4")
	require.NoError(t, s.Trim(ctx, "t", 8))
	check(6, "trimmed before 8, but not past the checkpoint at 6")
	require.NoError(t, s.Trim(ctx, "t", 2))
	check(6, "trimming less again changes nothing")

	require.NoError(t, s.SaveCheckpoint(ctx, "t", 10, []byte("cp10")))
	require.NoError(t, s.Trim(ctx, "t", 100))
	check(10, "trimmed to the checkpoint at the log's end, which keeps its last entry")
	pos, data, err := s.LoadCheckpoint(ctx, "t")
	require.NoError(t, err)
	assert.Equal(t, int64(10), pos)
	assert.Equal(t, "cp10", string(data))

	err = s.Append(ctx, "t", 10, event("again"))
	assert.Equal(t, &relay.ConflictError{Thread: "t", Pos: 10, Last: 10}, err, "a trimmed log still knows its end")
	mustAppend(t, s, "t", 11, event(11))
	assert.Equal(t, entries(10, [][]byte{log[9], event(11)}), mustRead(t, s, "t", 9))
}

// testThreads writes threads whose ids look like one another or like the
// store's own key syntax, hold NUL or invalid UTF-8, or are
// relay.MaxThreadID bytes long: each reads back only its own log,
// checkpoint, lease and stop.
func testThreads(t *testing.T, h Harness) {
	s, _ := open(t, h)
	ctx := testContext(t)
	ids := []string{"a", "A", "a:log", "a}:log", "{a}", "a ", "", "ü 𝄞 \x01", "a'; drop table x; --", string(bytes.Repeat([]byte("t"), 1000)),
		"a\x00b", "\x00", "a\xffb", "\xc3", "}", "}x", "{}", "{", ".", "..",
		noise(relay.MaxThreadID, 'a', 26), noise(relay.MaxThreadID, 0, 256)}
	for i, id := range ids {
		mustAppend(t, s, id, 1, events(id, 1, i+1)...)
		require.NoError(t, s.SaveCheckpoint(ctx, id, int64(i), []byte(id)))
		require.NoError(t, s.Trim(ctx, id, 1))
		require.NoError(t, s.Lease(ctx, id, "h", id, time.Minute), "lease thread %q", id)
		if i%2 == 0 {
			require.NoError(t, s.Stop(ctx, id), "stop thread %q", id)
		}
	}
	for i, id := range ids {
		assert.Equal(t, entries(1, events(id, 1, i+1)), mustRead(t, s, id, 0), "thread %q", id)
		pos, data, err := s.LoadCheckpoint(ctx, id)
		require.NoError(t, err, "thread %q", id)
		assert.Equal(t, int64(i), pos, "thread %q", id)
		assert.Equal(t, id, string(data), "thread %q", id)
		assert.ErrorIs(t, s.Lease(ctx, id, "other", "", time.Minute), relay.ErrLeased, "thread %q", id)
		if err := s.Lease(ctx, id, "h", "", time.Minute); i%2 == 0 {
			assert.ErrorIs(t, err, relay.ErrStopped, "thread %q: its own stop", id)
		} else {
			assert.NoError(t, err, "thread %q: no stop of its own", id)
		}
		require.NoError(t, s.Release(ctx, id, "h"), "thread %q", id)
	}
}

// noise returns n pseudo-random bytes from lo to lo+span-1: an id that
// does not compress.
func noise(n int, lo byte, span int) string {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = lo + byte(int(x>>8)%span)
	}
	return string(b)
}

// testNamespaces writes one thread id in two namespaces: they share
// nothing.
func testNamespaces(t *testing.T, h Harness) {
	ctx := testContext(t)
	a, _ := open(t, h)
	b, _ := open(t, h)
	mustAppend(t, a, "t", 1, event("a"))
	require.NoError(t, a.SaveCheckpoint(ctx, "t", 1, []byte("a")))
	assert.Empty(t, mustRead(t, b, "t", 0))
	_, _, err := b.LoadCheckpoint(ctx, "t")
	assert.ErrorIs(t, err, relay.ErrNoCheckpoint)
	mustAppend(t, b, "t", 1, event("b"))
	assert.Equal(t, entries(1, [][]byte{event("a")}), mustRead(t, a, "t", 0))
}

// testReplicas writes through one store and reads through another on the
// same namespace, as two replicas or a restarted process do.
func testReplicas(t *testing.T, h Harness) {
	ns := namespace(t)
	ctx := testContext(t)
	a := h.Open(t, ns, "")
	mustAppend(t, a, "t", 1, events("e", 1, 5)...)
	require.NoError(t, a.SaveCheckpoint(ctx, "t", 3, []byte("cp3")))

	b := h.Open(t, ns, "") // a restarted process
	assert.Equal(t, entries(1, events("e", 1, 5)), mustRead(t, b, "t", 0))
	pos, data, err := b.LoadCheckpoint(ctx, "t")
	require.NoError(t, err)
	assert.Equal(t, int64(3), pos)
	assert.Equal(t, "cp3", string(data))

	mustAppend(t, b, "t", 6, event(6))
	assert.ErrorIs(t, a.Append(ctx, "t", 6, event("a6")), relay.ErrConflict, "the other replica's append won")
	assert.Equal(t, entries(6, [][]byte{event(6)}), mustRead(t, a, "t", 5))
}
