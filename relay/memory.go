// Memory, the in-memory Store: the embedded default.

package relay

import (
	"bytes"
	"context"
	"fmt"
	"iter"
	"slices"
	"sync"
	"time"
)

// Memory is a [Store] and a [Leaser] that keeps threads in this process's
// memory: the default when nothing else is configured. It is safe for
// concurrent use; what it holds lasts as long as it does, and only Trim
// frees it.
type Memory struct {
	mu      sync.Mutex
	threads map[string]*memThread
	leases  map[string]memLease
}

// memLease is a thread's lease.
type memLease struct {
	holder  string
	expires time.Time
}

// memThread is one thread: its log from position first on, and its
// checkpoint.
type memThread struct {
	first  int64 // position of log[0]; 1 until trimmed
	log    [][]byte
	cpPos  int64
	cpData []byte        // nil when there is no checkpoint
	wake   chan struct{} // closed by the next append; nil while no follower waits
}

func (t *memThread) last() int64 { return t.first + int64(len(t.log)) - 1 }

// NewMemory returns an empty [Memory].
func NewMemory() *Memory {
	return &Memory{threads: make(map[string]*memThread), leases: make(map[string]memLease)}
}

// thread returns the thread named id, adding an empty one. The caller holds
// m.mu.
func (m *Memory) thread(id string) *memThread {
	t := m.threads[id]
	if t == nil {
		t = &memThread{first: 1}
		m.threads[id] = t
	}
	return t
}

// Append implements [Store.Append].
func (m *Memory) Append(ctx context.Context, thread string, pos int64, events ...[]byte) error {
	if err := ctx.Err(); err != nil {
		return memError("append to", thread, err)
	}
	if len(events) == 0 {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.thread(thread)
	if last := t.last(); pos != last+1 {
		return &ConflictError{Thread: thread, Pos: pos, Last: last}
	}
	for _, e := range events {
		t.log = append(t.log, bytes.Clone(e))
	}
	if t.wake != nil {
		close(t.wake)
		t.wake = nil
	}
	return nil
}

// Read implements [Store.Read].
func (m *Memory) Read(ctx context.Context, thread string, after int64) iter.Seq2[Entry, error] {
	return m.seq(ctx, thread, after, false)
}

// Follow implements [Store.Follow].
func (m *Memory) Follow(ctx context.Context, thread string, after int64) iter.Seq2[Entry, error] {
	return m.seq(ctx, thread, after, true)
}

// SaveCheckpoint implements [Store.SaveCheckpoint].
func (m *Memory) SaveCheckpoint(ctx context.Context, thread string, pos int64, data []byte) error {
	if err := ctx.Err(); err != nil {
		return memError("save the checkpoint of", thread, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.thread(thread)
	if last := t.last(); pos < 0 || pos > last {
		return &ConflictError{Thread: thread, Pos: pos, Last: last}
	}
	if t.cpData == nil || pos >= t.cpPos {
		t.cpPos, t.cpData = pos, bytes.Clone(data)
		if t.cpData == nil {
			t.cpData = []byte{}
		}
	}
	return nil
}

// LoadCheckpoint implements [Store.LoadCheckpoint].
func (m *Memory) LoadCheckpoint(ctx context.Context, thread string) (int64, []byte, error) {
	if err := ctx.Err(); err != nil {
		return 0, nil, memError("load the checkpoint of", thread, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.threads[thread]
	if t == nil || t.cpData == nil {
		return 0, nil, fmt.Errorf("%w: thread %q", ErrNoCheckpoint, thread)
	}
	return t.cpPos, bytes.Clone(t.cpData), nil
}

// Trim implements [Store.Trim].
func (m *Memory) Trim(ctx context.Context, thread string, before int64) error {
	if err := ctx.Err(); err != nil {
		return memError("trim", thread, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.threads[thread]
	if t == nil || t.cpData == nil {
		return nil
	}
	if n := min(before, t.cpPos) - t.first; n > 0 {
		t.log = slices.Clone(t.log[n:]) // let the removed events go
		t.first += n
	}
	return nil
}

func (m *Memory) seq(ctx context.Context, thread string, after int64, follow bool) iter.Seq2[Entry, error] {
	return Scan(ctx, thread, after, memPager{m, thread}, follow)
}

// memPager reads one thread of a Memory for Scan.
type memPager struct {
	m      *Memory
	thread string
}

func (s memPager) Page(ctx context.Context, from int64, n int) ([]Entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, memError("read", s.thread, err)
	}
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	t := s.m.threads[s.thread]
	if t == nil {
		return nil, nil
	}
	from = max(from, t.first)
	i := from - t.first
	if i >= int64(len(t.log)) {
		return nil, nil
	}
	page := make([]Entry, 0, min(int64(n), int64(len(t.log))-i))
	for _, e := range t.log[i:min(int64(len(t.log)), i+int64(n))] {
		page = append(page, Entry{Pos: from, Event: bytes.Clone(e)})
		from++
	}
	return page, nil
}

func (s memPager) Wait(ctx context.Context, after int64, n int) ([]Entry, error) {
	for {
		page, err := s.Page(ctx, after+1, n)
		if err != nil || len(page) > 0 {
			return page, err
		}
		s.m.mu.Lock()
		t := s.m.thread(s.thread)
		if t.last() > after { // appended since Page
			s.m.mu.Unlock()
			continue
		}
		if t.wake == nil {
			t.wake = make(chan struct{})
		}
		wake := t.wake
		s.m.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, memError("follow", s.thread, ctx.Err())
		}
	}
}

// Lease implements [Leaser.Lease].
func (m *Memory) Lease(ctx context.Context, thread, holder string, ttl time.Duration) error {
	if err := ctx.Err(); err != nil {
		return memError("lease", thread, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	if l, ok := m.leases[thread]; ok && l.holder != holder && now.Before(l.expires) {
		return fmt.Errorf("%w: thread %q", ErrLeased, thread)
	}
	m.leases[thread] = memLease{holder: holder, expires: now.Add(max(ttl, time.Millisecond))}
	return nil
}

// Release implements [Leaser.Release].
func (m *Memory) Release(ctx context.Context, thread, holder string) error {
	if err := ctx.Err(); err != nil {
		return memError("release the lease of", thread, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.leases[thread].holder == holder {
		delete(m.leases, thread)
	}
	return nil
}

func memError(op, thread string, err error) error {
	return fmt.Errorf("aguistate: %s thread %q: %w", op, thread, err)
}
