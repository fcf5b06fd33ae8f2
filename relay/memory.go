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

// Memory is a [Store] that keeps threads in this process's memory: the
// default when nothing else is configured. It is safe for concurrent use;
// what it holds lasts as long as it does, and only Trim frees it. Its
// tenants ([Memory.Tenant]) share one Memory's bounds and lock.
type Memory struct {
	s      *memState
	tenant string
	err    error // not nil for a tenant whose name is too long: every call returns it
}

// memState is what a Memory and its tenants share.
type memState struct {
	root *Memory // tenant ""

	mu      sync.Mutex
	threads map[memKey]*memThread
	tenants map[string]*memIndex // the listing of each tenant with a thread listed
	seq     uint64               // appends so far
}

// memKey names a thread of a tenant.
type memKey struct{ tenant, id string }

// memThread is one thread: its log from position first on, its
// checkpoint, and its lease.
type memThread struct {
	id     string
	first  int64 // position of log[0]; 1 until trimmed
	log    [][]byte
	cpPos  int64
	cpData []byte        // nil when there is no checkpoint
	wake   chan struct{} // closed by the next append; nil while no follower waits

	holder  string    // the lease's holder; "" when nobody has it
	expires time.Time // the lease's expiry
	stop    bool      // a Stop asked the holder to stop
	run     string    // the last run id given with a lease

	seq     uint64    // the seq of its last append, 0 while it is not listed (no log)
	updated time.Time // the time of its last append
}

func (t *memThread) last() int64 { return t.first + int64(len(t.log)) - 1 }

// NewMemory returns an empty [Memory].
func NewMemory() *Memory {
	s := &memState{threads: make(map[memKey]*memThread), tenants: make(map[string]*memIndex)}
	s.root = &Memory{s: s}
	return s.root
}

// Tenant implements [Store.Tenant]: the Memory of tenant name, which
// shares m's memory and lock.
func (m *Memory) Tenant(name string) Store {
	if name == "" {
		return m.s.root
	}
	t := &Memory{s: m.s, tenant: name}
	if len(name) > MaxTenant {
		t.err = fmt.Errorf("the tenant name is %d bytes long, more than %d", len(name), MaxTenant)
	}
	return t
}

// begin returns the error that a call of op on thread returns before it
// starts, or nil.
func (m *Memory) begin(ctx context.Context, op, thread string) error {
	if m.err != nil {
		return memError(op, thread, m.err)
	}
	if err := ctx.Err(); err != nil {
		return memError(op, thread, err)
	}
	return nil
}

// thread returns the thread named id, adding an empty one. The caller holds
// m.s.mu.
func (m *Memory) thread(id string) *memThread {
	k := memKey{m.tenant, id}
	t := m.s.threads[k]
	if t == nil {
		t = &memThread{id: id, first: 1}
		m.s.threads[k] = t
	}
	return t
}

// find returns the thread named id, or nil. The caller holds m.s.mu.
func (m *Memory) find(id string) *memThread { return m.s.threads[memKey{m.tenant, id}] }

// Append implements [Store.Append].
func (m *Memory) Append(ctx context.Context, thread string, pos int64, events ...[]byte) error {
	if err := m.begin(ctx, "append to", thread); err != nil {
		return err
	}
	if len(events) == 0 {
		return nil
	}
	m.s.mu.Lock()
	defer m.s.mu.Unlock()
	t := m.thread(thread)
	if last := t.last(); pos != last+1 {
		return &ConflictError{Thread: thread, Pos: pos, Last: last}
	}
	for _, e := range events {
		t.log = append(t.log, bytes.Clone(e))
	}
	m.s.touch(m.tenant, t, time.Now())
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
	if err := m.begin(ctx, "save the checkpoint of", thread); err != nil {
		return err
	}
	m.s.mu.Lock()
	defer m.s.mu.Unlock()
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
	if err := m.begin(ctx, "load the checkpoint of", thread); err != nil {
		return 0, nil, err
	}
	m.s.mu.Lock()
	defer m.s.mu.Unlock()
	t := m.find(thread)
	if t == nil || t.cpData == nil {
		return 0, nil, fmt.Errorf("%w: thread %q", ErrNoCheckpoint, thread)
	}
	return t.cpPos, bytes.Clone(t.cpData), nil
}

// Trim implements [Store.Trim].
func (m *Memory) Trim(ctx context.Context, thread string, before int64) error {
	if err := m.begin(ctx, "trim", thread); err != nil {
		return err
	}
	m.s.mu.Lock()
	defer m.s.mu.Unlock()
	t := m.find(thread)
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
	if err := s.m.begin(ctx, "read", s.thread); err != nil {
		return nil, err
	}
	s.m.s.mu.Lock()
	defer s.m.s.mu.Unlock()
	t := s.m.find(s.thread)
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
		s.m.s.mu.Lock()
		t := s.m.find(s.thread)
		if t == nil && after == 0 {
			t = s.m.thread(s.thread) // wait for its first append
		}
		if t == nil || t.last() < after { // deleted
			s.m.s.mu.Unlock()
			return nil, &RangeError{Thread: s.thread, After: after}
		}
		if t.last() > after { // appended since Page
			s.m.s.mu.Unlock()
			continue
		}
		if t.wake == nil {
			t.wake = make(chan struct{})
		}
		wake := t.wake
		s.m.s.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, memError("follow", s.thread, ctx.Err())
		}
	}
}

func memError(op, thread string, err error) error {
	return fmt.Errorf("aguistate: %s thread %q: %w", op, thread, err)
}
