// Memory's listing: each tenant's threads in the order of their last append, and Delete.

package relay

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
)

// memIndex lists a tenant's threads that have a log, in the order of their
// last append: a mark for each append, of which the thread's latest is
// live. Marks that are no longer live are dropped when they outnumber the
// live ones, so an append costs O(1) amortized and a page O(log n) to find.
type memIndex struct {
	marks []memMark // by seq, ascending
	live  int       // the live marks: one per thread listed
}

// memMark is an append to t, the seq-th of the Memory. It is live while
// t.seq is seq.
type memMark struct {
	seq uint64
	t   *memThread
}

func (mk memMark) live() bool { return mk.t.seq == mk.seq }

// list lists t at its latest append, as the Memory's next seq. The caller
// holds s.mu.
func (s *memState) list(t *memThread) {
	x := s.tenants[t.key.tenant]
	if x == nil {
		x = &memIndex{}
		s.tenants[t.key.tenant] = x
	}
	if t.seq == 0 {
		x.live++
	}
	s.seq++
	t.seq = s.seq
	x.marks = append(x.marks, memMark{t.seq, t})
	x.compact()
}

// unlist removes t from its tenant's listing. The caller holds s.mu.
func (s *memState) unlist(t *memThread) {
	if t.seq == 0 {
		return
	}
	t.seq = 0
	x := s.tenants[t.key.tenant]
	if x.live--; x.live == 0 {
		delete(s.tenants, t.key.tenant)
		return
	}
	x.compact()
}

// compact drops the marks that are no longer live once they outnumber the
// live ones.
func (x *memIndex) compact() {
	if len(x.marks) <= 2*x.live+16 {
		return
	}
	x.marks = slices.DeleteFunc(x.marks, func(mk memMark) bool { return !mk.live() })
	x.marks = slices.Clip(x.marks) // let go of a large array
}

// Threads implements [Store.Threads]. A cursor is the seq of the last
// append listed, in base 36.
func (m *Memory) Threads(ctx context.Context, cursor string, limit int) ([]ThreadInfo, string, error) {
	if m.err != nil {
		return nil, "", fmt.Errorf("aguistate: list threads: %w", m.err)
	}
	if err := ctx.Err(); err != nil {
		return nil, "", fmt.Errorf("aguistate: list threads: %w", err)
	}
	limit = min(max(limit, 1), MaxThreadsPage)
	before := ^uint64(0)
	if cursor != "" {
		var err error
		if before, err = strconv.ParseUint(cursor, 36, 64); err != nil {
			return nil, "", fmt.Errorf("%w: %q", ErrBadCursor, cursor)
		}
	}
	now := m.s.lock()
	defer m.s.mu.Unlock()
	x := m.s.tenants[m.tenant]
	if x == nil {
		return nil, "", nil
	}
	var page []ThreadInfo
	var last uint64
	for i := sort.Search(len(x.marks), func(i int) bool { return x.marks[i].seq >= before }) - 1; i >= 0; i-- {
		mk := x.marks[i]
		if until, ok := m.s.expiry(mk.t, now); !mk.live() || ok && !now.Before(until) {
			continue // expired: the next sweep removes it
		}
		if len(page) == limit {
			return page, strconv.FormatUint(last, 36), nil
		}
		t := mk.t
		page = append(page, ThreadInfo{ID: t.key.id, UpdatedAt: t.updated, Events: t.last(), LastRunID: t.run, Running: t.leased(now)})
		last = mk.seq
	}
	return page, "", nil
}

// Delete implements [Store.Delete].
func (m *Memory) Delete(ctx context.Context, thread string) error {
	if err := m.begin(ctx, "delete", thread); err != nil {
		return err
	}
	now := m.s.lock()
	defer m.s.mu.Unlock()
	if t := m.find(thread, now); t != nil {
		m.s.remove(t)
	}
	return nil
}
