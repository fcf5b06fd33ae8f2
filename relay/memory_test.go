// The store contract, the relay's scenarios and the benchmarks, run on Memory, and the tests
// of Memory's bounds.

package relay_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aguistate/aguistate/relay"
	"github.com/aguistate/aguistate/relay/storetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// memoryHarness opens one Memory per namespace: stores opened on one
// namespace are the same Memory, as replicas in one process would share it.
func memoryHarness() storetest.Harness {
	var mu sync.Mutex
	stores := make(map[string]*relay.Memory)
	return storetest.Harness{
		Open: func(tb testing.TB, ns, _ string) relay.Store {
			mu.Lock()
			defer mu.Unlock()
			if stores[ns] == nil {
				stores[ns] = relay.NewMemory(nil)
			}
			return stores[ns]
		},
		Expiring: func(tb testing.TB, ns string, ttl time.Duration) relay.Store {
			return relay.NewMemory(&relay.MemoryOptions{TTL: ttl, MaxThreads: -1}) // the TTL alone
		},
		Size: heap,
	}
}

// heap returns the process's heap after a garbage collection: what every
// Memory holds, and the rest.
func heap(testing.TB, string) map[string]float64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return map[string]float64{"heap-MiB": float64(ms.HeapAlloc) / (1 << 20), "heap-objects": float64(ms.HeapObjects)}
}

func TestMemory(t *testing.T) { storetest.Store(t, memoryHarness()) }

func TestMemoryRelay(t *testing.T) { storetest.Relay(t, memoryHarness()) }

func BenchmarkMemory(b *testing.B) { storetest.Bench(b, memoryHarness()) }

func BenchmarkRelay(b *testing.B) { storetest.BenchRelay(b, memoryHarness()) }

func BenchmarkLoad(b *testing.B) { storetest.BenchLoad(b, memoryHarness()) }

func BenchmarkChurn(b *testing.B) { storetest.BenchChurn(b, memoryHarness()) }

// has reports whether m holds thread: a log, or a checkpoint.
func has(t *testing.T, m relay.Store, thread string) bool {
	t.Helper()
	ctx := context.Background()
	_, _, err := m.LoadCheckpoint(ctx, thread)
	for _, err := range m.Read(ctx, thread, 0) {
		require.NoError(t, err)
		return true
	}
	return err == nil
}

// TestMemoryMaxThreads fills a Memory past MaxThreads: it evicts the least
// recently used thread, whatever its tenant, but never a leased one; when
// every thread is leased, a write that needs a new thread fails with
// ErrFull and changes nothing.
func TestMemoryMaxThreads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := relay.NewMemory(&relay.MemoryOptions{MaxThreads: 3})
	other := m.Tenant("other")
	require.NoError(t, m.Append(ctx, "a", 1, []byte(`{}`)))
	require.NoError(t, other.Append(ctx, "b", 1, []byte(`{}`)))
	require.NoError(t, m.Lease(ctx, "c", "A", "", time.Minute), "a lease holds a thread too")
	assert.True(t, has(t, m, "a"), "a read uses a: b is the least recently used")

	require.NoError(t, m.Append(ctx, "d", 1, []byte(`{}`)))
	assert.False(t, has(t, other, "b"), "b, least recently used, is evicted")
	assert.True(t, has(t, m, "a"))
	page, _, err := other.Threads(ctx, "", 10)
	require.NoError(t, err)
	assert.Empty(t, page, "an evicted thread is not listed")

	require.NoError(t, m.Lease(ctx, "a", "A", "", time.Minute))
	require.NoError(t, m.Lease(ctx, "d", "A", "", time.Minute))
	for name, err := range map[string]error{
		"Append":         m.Append(ctx, "e", 1, []byte(`{}`)),
		"SaveCheckpoint": m.SaveCheckpoint(ctx, "e", 0, []byte(`{}`)),
		"Lease":          m.Lease(ctx, "e", "A", "", time.Minute),
	} {
		assert.ErrorIs(t, err, relay.ErrFull, "%s: every thread is leased", name)
	}
	require.NoError(t, m.Append(ctx, "a", 2, []byte(`{}`)), "a thread it holds grows")
	require.NoError(t, m.Release(ctx, "c", "A"))
	require.NoError(t, m.Append(ctx, "e", 1, []byte(`{}`)), "once a lease is released")
	assert.ErrorIs(t, m.Stop(ctx, "c"), relay.ErrNotLeased, "c, released, was evicted")
	assert.True(t, has(t, m, "a"))
	assert.True(t, has(t, m, "d"))
}

// TestMemoryMaxBytes writes events and checkpoints past MaxBytes: the
// least recently used threads go to make room, a trim frees bytes, and a
// write that cannot fit fails with ErrFull and changes nothing.
func TestMemoryMaxBytes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	kib := []byte(`"` + strings.Repeat("x", 1022) + `"`) // 1 KiB
	m := relay.NewMemory(&relay.MemoryOptions{MaxBytes: 10 << 10})
	for i := range 4 {
		id := fmt.Sprint("t", i)
		require.NoError(t, m.Append(ctx, id, 1, kib, kib))
	}
	require.NoError(t, m.Lease(ctx, "t0", "A", "", time.Minute))
	require.NoError(t, m.SaveCheckpoint(ctx, "t1", 2, kib))
	assert.True(t, has(t, m, "t2"), "9 KiB held, none evicted")

	require.NoError(t, m.Append(ctx, "t4", 1, kib, kib), "past the bound")
	assert.False(t, has(t, m, "t3"), "the least recently used thread is evicted")
	assert.True(t, has(t, m, "t0"), "a leased thread is not, though less recently used")
	assert.True(t, has(t, m, "t1"))

	big := []byte(`"` + strings.Repeat("x", 11<<10) + `"`)
	assert.ErrorIs(t, m.Append(ctx, "t4", 3, big), relay.ErrFull, "an event larger than the bound")
	assert.True(t, has(t, m, "t2"), "and nothing is evicted for it")
	require.NoError(t, m.Trim(ctx, "t1", 2), "a trim frees an event of t1")
	require.NoError(t, m.Lease(ctx, "t1", "A", "", time.Minute))
	require.NoError(t, m.Lease(ctx, "t2", "A", "", time.Minute))
	require.NoError(t, m.Lease(ctx, "t4", "A", "", time.Minute))
	err := m.Append(ctx, "t4", 3, kib, kib, kib, kib)
	assert.ErrorIs(t, err, relay.ErrFull, "every other thread is leased")
	got, err := readLog(m, "t4")
	require.NoError(t, err)
	assert.Len(t, got, 2, "the thread is as it was")
	require.NoError(t, m.Append(ctx, "t4", 3, kib, kib), "what fits is written")
}

// readLog returns thread's log in s.
func readLog(s relay.Store, thread string) ([]relay.Entry, error) {
	var got []relay.Entry
	for e, err := range s.Read(context.Background(), thread, 0) {
		if err != nil {
			return got, err
		}
		got = append(got, e)
	}
	return got, nil
}

// TestMemoryUnbounded holds more than the default bounds when they are
// turned off.
func TestMemoryUnbounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := relay.NewMemory(&relay.MemoryOptions{MaxThreads: -1, MaxBytes: -1})
	for i := range 10_001 {
		require.NoError(t, m.Append(ctx, fmt.Sprint(i), 1, []byte(`{}`)))
	}
	assert.True(t, has(t, m, "0"), "no thread evicted")
	d := relay.NewMemory(nil)
	for i := range 10_001 {
		require.NoError(t, d.Append(ctx, fmt.Sprint(i), 1, []byte(`{}`)))
	}
	assert.False(t, has(t, d, "0"), "the default bound is 10,000 threads")
	assert.True(t, has(t, d, "1"))
}

// TestMemoryTTLFollowAtStart has a follower wait for the first event of a
// thread in a Memory with a TTL: the empty thread it waits on expires and
// comes back, and the follower gets the event.
func TestMemoryTTLFollowAtStart(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m := relay.NewMemory(&relay.MemoryOptions{TTL: 50 * time.Millisecond})
	got := make(chan error, 1)
	go func() {
		for e, err := range m.Follow(ctx, "t", 0) {
			if err == nil && e.Pos != 1 {
				err = errors.New("not the first event")
			}
			got <- err
			return
		}
	}()
	time.Sleep(200 * time.Millisecond) // several TTLs
	require.NoError(t, m.Append(ctx, "t", 1, []byte(`{}`)))
	assert.NoError(t, <-got)
}

// TestMemoryFollowersEvict follows threads that have no event yet in a
// Memory that holds MaxThreads: a follower's wait for a first event makes
// a thread only when there is room, and never evicts one that holds
// events (any tenant's), nor another waiting follower's; its Follow fails
// with ErrFull instead, which a relay's follower retries. A client that
// followed MaxThreads thread ids it made up used to evict every unleased
// thread of the Memory, each follower's wait evicting the next (hostile
// review).
func TestMemoryFollowersEvict(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, reason string
		followers    int
	}{
		{"one more", "the follower past the bound", 2},
		{"many more", "followers that would evict each other's waits", 6},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			m := relay.NewMemory(&relay.MemoryOptions{MaxThreads: 2})
			require.NoError(t, m.Tenant("victim").Append(ctx, "kept", 1, []byte(`{}`)))
			errs := make(chan error, tc.followers)
			fctx, stop := context.WithCancel(ctx)
			for i := range tc.followers {
				go func() {
					for _, err := range m.Follow(fctx, fmt.Sprint("ghost", i), 0) {
						errs <- err
						return
					}
				}()
			}
			full := 0
			for range tc.followers - 1 { // one waits: there was room for it
				err := <-errs
				require.ErrorIs(t, err, relay.ErrFull, tc.reason)
				full++
			}
			stop()
			<-errs
			assert.Equal(t, tc.followers-1, full)
			assert.True(t, has(t, m.Tenant("victim"), "kept"), "%s: the thread with events is kept", tc.reason)
		})
	}
}

// TestMemoryFollowRecreated follows a thread that is then deleted and
// written again (another relay's DELETE, then its runs) while the Follow
// waits: the Follow ends with ErrOutOfRange, whatever the new log's
// length, rather than take the new thread's entries for the next ones of
// the log it followed. It used to yield them (a follow=thread viewer got
// another thread's events as its thread's next), or wait for ever on a new
// log as long as the old (hostile review).
func TestMemoryFollowRecreated(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, reason string
		entries      int // of the new log; the old has 3
	}{
		{"longer", "the new log passes the follower's position", 5},
		{"as long", "the new log ends at the follower's position", 3},
		{"shorter", "the new log ends before it", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			m := relay.NewMemory(nil)
			for pos := int64(1); pos <= 3; pos++ {
				require.NoError(t, m.Append(ctx, "t", pos, []byte(`{"old":true}`)))
			}
			got := make(chan error, 1)
			go func() {
				for e, err := range m.Follow(ctx, "t", 3) {
					if err == nil {
						err = fmt.Errorf("entry %d: %s", e.Pos, e.Event)
					}
					got <- err
					return
				}
			}()
			waitFor(t, "the Follow waits", func() bool { return relay.MemoryWaits(m, "t") })
			require.NoError(t, m.Delete(ctx, "t"))
			for pos := int64(1); pos <= int64(tc.entries); pos++ {
				require.NoError(t, m.Append(ctx, "t", pos, []byte(`{"new":true}`)))
			}
			assert.ErrorIs(t, <-got, relay.ErrOutOfRange, tc.reason)
		})
	}
}
