// Conformance tests of Threads and Delete: the listing, its pages, and threads removed.

package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aguistate/aguistate/relay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// list returns every thread that s lists, page by page of limit, and the
// number of pages.
func list(tb testing.TB, s relay.Store, limit int) ([]relay.ThreadInfo, int) {
	tb.Helper()
	ctx := testContext(tb)
	var all []relay.ThreadInfo
	cursor, pages := "", 0
	for {
		page, next, err := s.Threads(ctx, cursor, limit)
		require.NoError(tb, err, "page %d", pages+1)
		require.LessOrEqual(tb, len(page), limit)
		all = append(all, page...)
		pages++
		if next == "" {
			return all, pages
		}
		require.Less(tb, pages, 10000, "the listing ends")
		cursor = next
	}
}

// ids returns the ids of threads.
func ids(threads []relay.ThreadInfo) []string {
	out := make([]string, 0, len(threads))
	for _, t := range threads {
		out = append(out, t.ID)
	}
	return out
}

// testList lists threads as appends, leases and other tenants change them:
// newest append first, each with its log's end, its last run and whether
// it runs; a thread with no log is not listed.
func testList(t *testing.T, h Harness) {
	s, ns := open(t, h)
	replica := h.Open(t, ns, "")
	ctx := testContext(t)
	got, _ := list(t, s, 10)
	assert.Empty(t, got, "a new store lists nothing")

	start := time.Now()
	mustAppend(t, s, "a", 1, events("a", 1, 3)...)
	mustAppend(t, s, "b", 1, event("b"))
	mustAppend(t, s, "\x00ü", 1, event("c"))
	require.NoError(t, s.Lease(ctx, "leased only", "A", "r0", time.Minute), "a lease makes no log")
	require.NoError(t, s.SaveCheckpoint(ctx, "checkpoint only", 0, []byte("{}")), "nor does a checkpoint")
	require.NoError(t, s.Lease(ctx, "b", "A", "r1", time.Minute))
	require.NoError(t, s.Lease(ctx, "a", "A", "r2", time.Minute))
	require.NoError(t, s.Release(ctx, "a", "A"))
	mustAppend(t, s.Tenant("other"), "other", 1, event("other"))
	end := time.Now()

	got, _ = list(t, replica, 10)
	require.Equal(t, []string{"\x00ü", "b", "a"}, ids(got), "newest append first, through another store too")
	for _, info := range got {
		assert.WithinRange(t, info.UpdatedAt, start.Add(-time.Second), end.Add(time.Second), "thread %q: the store's clock at its last append", info.ID)
		info.UpdatedAt = time.Time{}
		want := map[string]relay.ThreadInfo{
			"a":     {ID: "a", Events: 3, LastRunID: "r2"},
			"b":     {ID: "b", Events: 1, LastRunID: "r1", Running: true},
			"\x00ü": {ID: "\x00ü", Events: 1},
		}[info.ID]
		assert.Equal(t, want, info, "thread %q", info.ID)
	}
	assert.False(t, got[0].UpdatedAt.Before(got[1].UpdatedAt), "newest first")

	mustAppend(t, s, "a", 4, event(4))
	require.NoError(t, s.Trim(ctx, "a", 4), "a trim keeps the log's end")
	got, _ = list(t, s, 10)
	require.Equal(t, []string{"a", "\x00ü", "b"}, ids(got), "an append moves a thread to the front")
	assert.Equal(t, int64(4), got[0].Events)
	got, _ = list(t, s.Tenant("other"), 10)
	assert.Equal(t, []string{"other"}, ids(got), "a tenant lists its own threads")
}

// testListPages lists threads in pages of every size, and again while
// threads change between pages: a thread that does not change is on
// exactly one page.
func testListPages(t *testing.T, h Harness) {
	s, _ := open(t, h)
	const n = 25
	var want []string
	for i := range n {
		id := fmt.Sprintf("t%02d", i)
		mustAppend(t, s, id, 1, event(i))
		want = append([]string{id}, want...)
	}
	for _, limit := range []int{1, 2, 7, n - 1, n, n + 1, relay.MaxThreadsPage} {
		got, pages := list(t, s, limit)
		assert.Equal(t, want, ids(got), "pages of %d", limit)
		assert.Equal(t, (n+limit-1)/limit, pages, "pages of %d", limit)
	}
	for _, limit := range []int{0, -1, relay.MaxThreadsPage + 1} {
		page, _, err := s.Threads(testContext(t), "", limit)
		require.NoError(t, err, "a limit of %d is taken as the nearest bound", limit)
		assert.NotEmpty(t, page)
	}

	// Page through in fives while an append moves a thread of a later page
	// to the front, and another of an earlier page: the others are listed
	// once each, in order.
	ctx := testContext(t)
	page, cursor, err := s.Threads(ctx, "", 5)
	require.NoError(t, err)
	seen := ids(page)
	mustAppend(t, s, "t03", 2, event("moved")) // not yet listed: moves to the front
	mustAppend(t, s, "t23", 2, event("moved")) // listed: moves to the front
	mustAppend(t, s, "new", 1, event("new"))
	for cursor != "" {
		page, cursor, err = s.Threads(ctx, cursor, 5)
		require.NoError(t, err)
		seen = append(seen, ids(page)...)
	}
	var unchanged []string
	for _, id := range want {
		if id != "t03" {
			unchanged = append(unchanged, id)
		}
	}
	assert.Equal(t, unchanged, seen, "every thread that did not change, once, in order")

	for _, bad := range []string{"!", "not a cursor", "\x00"} {
		_, _, err := s.Threads(ctx, bad, 5)
		assert.ErrorIs(t, err, relay.ErrBadCursor, "cursor %q", bad)
	}
}

// testDelete deletes threads, leased or not, with a checkpoint and
// followers: nothing of them stays, a follower gets a *RangeError, an id
// starts again at position 1, and other threads and tenants keep theirs.
func testDelete(t *testing.T, h Harness) {
	s, ns := open(t, h)
	replica := h.Open(t, ns, "")
	ctx := testContext(t)
	for _, tenant := range []string{"", "other"} {
		ts := s.Tenant(tenant)
		mustAppend(t, ts, "t", 1, events("t", 1, 5)...)
		require.NoError(t, ts.SaveCheckpoint(ctx, "t", 4, []byte("cp")))
		require.NoError(t, ts.Trim(ctx, "t", 4))
		require.NoError(t, ts.Lease(ctx, "t", "A", "r1", time.Minute))
		require.NoError(t, ts.Stop(ctx, "t"))
	}
	mustAppend(t, s, "kept", 1, event("kept"))

	followed := make(chan error, 1)
	followCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		for _, err := range replica.Follow(followCtx, "t", 5) {
			followed <- err
			return
		}
	}()
	time.Sleep(50 * time.Millisecond) // let it wait

	require.NoError(t, s.Delete(ctx, "t"), "a leased thread")
	require.NoError(t, s.Delete(ctx, "t"), "twice")
	require.NoError(t, s.Delete(ctx, "never"), "a thread that never was")
	select {
	case err := <-followed:
		var re *relay.RangeError
		require.ErrorAs(t, err, &re, "a follower of the deleted thread")
		assert.Equal(t, &relay.RangeError{Thread: "t", After: 5}, re)
	case <-time.After(30 * time.Second):
		t.Fatal("a follower of a deleted thread waits on")
	}

	assert.Empty(t, mustRead(t, replica, "t", 0), "no log")
	_, _, err := replica.LoadCheckpoint(ctx, "t")
	assert.ErrorIs(t, err, relay.ErrNoCheckpoint, "no checkpoint")
	assert.ErrorIs(t, replica.Stop(ctx, "t"), relay.ErrNotLeased, "no lease")
	require.NoError(t, replica.Lease(ctx, "t", "B", "", time.Minute), "the lease is free, and no stop is asked of it")
	require.NoError(t, replica.Release(ctx, "t", "B"))
	got, _ := list(t, replica, 10)
	assert.Equal(t, []string{"kept"}, ids(got), "not listed")

	assert.ErrorIs(t, s.Append(ctx, "t", 6, event(6)), relay.ErrConflict, "the log starts again")
	mustAppend(t, s, "t", 1, event("again"))
	assert.Equal(t, entries(1, [][]byte{event("again")}), mustRead(t, replica, "t", 0))
	got, _ = list(t, replica, 10)
	require.Equal(t, []string{"t", "kept"}, ids(got))
	assert.Equal(t, relay.ThreadInfo{ID: "t", Events: 1}, withoutTime(got[0]), "a new thread: no last run")

	other := replica.Tenant("other")
	assert.Equal(t, entries(4, events("t", 4, 5)), mustRead(t, other, "t", 3), "another tenant's thread t")
	assert.ErrorIs(t, other.Lease(ctx, "t", "A", "", time.Minute), relay.ErrStopped)
}

// withoutTime returns info with a zero UpdatedAt.
func withoutTime(info relay.ThreadInfo) relay.ThreadInfo {
	info.UpdatedAt = time.Time{}
	return info
}
