// Memory, the in-memory Store: the embedded default.

package relay

import (
	"bytes"
	"container/list"
	"context"
	"fmt"
	"iter"
	"slices"
	"sync"
	"time"
)

// Memory is a [Store] that keeps threads in this process's memory: the
// default when nothing else is configured. It is safe for concurrent use.
// It holds at most [MemoryOptions] MaxThreads threads and MaxBytes bytes of
// logs and checkpoints, evicting the least recently used thread that holds
// no unexpired lease, as Delete removes it, to make room; and it removes
// a thread whose log has not grown for TTL. Its tenants ([Memory.Tenant])
// share one Memory's bounds and lock.
type Memory struct {
	s      *memState
	tenant string
	err    error // not nil for a tenant whose name is too long: every call returns it
}

// MemoryOptions configures a [Memory]. A nil *MemoryOptions means the
// defaults.
type MemoryOptions struct {
	// MaxThreads is the most threads the Memory holds, of all its tenants:
	// with a log, a checkpoint, a lease, or a follower waiting for its
	// first event. 0 means the default, 10,000; a negative value, no bound.
	MaxThreads int

	// MaxBytes is the most bytes of events and checkpoints the Memory holds,
	// of all its tenants (not counting the Go values around them, about 100
	// bytes per event). 0 means the default, 512 MiB; a negative value, no
	// bound. A run's end appended alone (a RUN_FINISHED or RUN_ERROR of at
	// most 1 KiB) is taken past it, so that a run that filled the Memory
	// still ends and its thread can run again once there is room.
	MaxBytes int64

	// TTL is how long a thread whose log does not grow is kept: from its
	// last append, or from when the Memory first held it. A thread with an
	// unexpired lease is kept. Expired threads are removed as the Memory is
	// used, at least every TTL/10. 0 (the default) keeps threads until they
	// are evicted or deleted.
	TTL time.Duration
}

// memState is what a Memory and its tenants share.
type memState struct {
	root       *Memory // tenant ""
	maxThreads int     // < 0: no bound
	maxBytes   int64   // < 0: no bound
	ttl        time.Duration

	mu        sync.Mutex
	threads   map[memKey]*memThread
	tenants   map[string]*memIndex // the listing of each tenant with a thread listed
	seq       uint64               // appends so far
	bytes     int64                // of events and checkpoints held
	used      list.List            // of *memThread, the most recently used first
	aging     list.List            // of *memThread, the longest unchanged first (when ttl > 0)
	nextSweep time.Time
}

// memKey names a thread of a tenant.
type memKey struct{ tenant, id string }

// memThread is one thread: its log from position first on, its
// checkpoint, and its lease.
type memThread struct {
	key    memKey
	first  int64 // position of log[0]; 1 until trimmed
	log    [][]byte
	cpPos  int64
	cpData []byte        // nil when there is no checkpoint
	bytes  int64         // of log and cpData
	wake   chan struct{} // closed by the next append; nil while no follower waits

	holder  string    // the lease's holder; "" when nobody has it
	expires time.Time // the lease's expiry
	stop    bool      // a Stop asked the holder to stop
	run     string    // the last run id given with a lease

	seq     uint64    // the seq of its last append, 0 while it is not listed (no log)
	updated time.Time // the time of its last append, or of its creation
	use     *list.Element
	age     *list.Element // nil when the Memory has no TTL
}

func (t *memThread) last() int64 { return t.first + int64(len(t.log)) - 1 }

// NewMemory returns an empty [Memory] configured by opts.
func NewMemory(opts *MemoryOptions) *Memory {
	var o MemoryOptions
	if opts != nil {
		o = *opts
	}
	s := &memState{maxThreads: o.MaxThreads, maxBytes: o.MaxBytes, ttl: max(o.TTL, 0),
		threads: make(map[memKey]*memThread), tenants: make(map[string]*memIndex)}
	if s.maxThreads == 0 {
		s.maxThreads = 10_000
	}
	if s.maxBytes == 0 {
		s.maxBytes = 512 << 20
	}
	s.root = &Memory{s: s}
	return s.root
}

// Tenant implements [Store.Tenant]: the Memory of tenant name, which
// shares m's memory, bounds and lock.
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

// Append implements [Store.Append]. It returns an error wrapping [ErrFull]
// when the events do not fit in MaxBytes, even once every thread that
// holds no lease is evicted, unless they are a run's end (see MaxBytes).
func (m *Memory) Append(ctx context.Context, thread string, pos int64, events ...[]byte) error {
	if err := m.begin(ctx, "append to", thread); err != nil {
		return err
	}
	if len(events) == 0 {
		return nil
	}
	now := m.s.lock()
	defer m.s.mu.Unlock()
	t, err := m.thread(thread, now)
	if err != nil {
		return memError("append to", thread, err)
	}
	if last := t.last(); pos != last+1 {
		return &ConflictError{Thread: thread, Pos: pos, Last: last}
	}
	var size int64
	for _, e := range events {
		size += int64(len(e))
	}
	if err := m.s.room(t, size, now); err != nil && !isRunEnd(events) {
		return memError("append to", thread, err)
	}
	for _, e := range events {
		t.log = append(t.log, bytes.Clone(e))
	}
	m.s.grow(t, size)
	m.s.touch(t, now)
	if t.wake != nil {
		close(t.wake)
		t.wake = nil
	}
	return nil
}

// Read implements [Store.Read].
func (m *Memory) Read(ctx context.Context, thread string, after int64) iter.Seq2[Entry, error] {
	return Scan(ctx, thread, after, memPager{m, thread}, false)
}

// Follow implements [Store.Follow].
func (m *Memory) Follow(ctx context.Context, thread string, after int64) iter.Seq2[Entry, error] {
	return Scan(ctx, thread, after, memPager{m, thread}, true)
}

// SaveCheckpoint implements [Store.SaveCheckpoint]. It returns an error
// wrapping [ErrFull] as Append does.
func (m *Memory) SaveCheckpoint(ctx context.Context, thread string, pos int64, data []byte) error {
	if err := m.begin(ctx, "save the checkpoint of", thread); err != nil {
		return err
	}
	now := m.s.lock()
	defer m.s.mu.Unlock()
	t, err := m.thread(thread, now)
	if err != nil {
		return memError("save the checkpoint of", thread, err)
	}
	if last := t.last(); pos < 0 || pos > last {
		return &ConflictError{Thread: thread, Pos: pos, Last: last}
	}
	if t.cpData != nil && pos < t.cpPos {
		return nil
	}
	size := int64(len(data) - len(t.cpData))
	if err := m.s.room(t, size, now); err != nil {
		return memError("save the checkpoint of", thread, err)
	}
	t.cpPos, t.cpData = pos, bytes.Clone(data)
	if t.cpData == nil {
		t.cpData = []byte{}
	}
	m.s.grow(t, size)
	return nil
}

// LoadCheckpoint implements [Store.LoadCheckpoint].
func (m *Memory) LoadCheckpoint(ctx context.Context, thread string) (int64, []byte, error) {
	if err := m.begin(ctx, "load the checkpoint of", thread); err != nil {
		return 0, nil, err
	}
	now := m.s.lock()
	defer m.s.mu.Unlock()
	t := m.find(thread, now)
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
	now := m.s.lock()
	defer m.s.mu.Unlock()
	t := m.find(thread, now)
	if t == nil || t.cpData == nil {
		return nil
	}
	if n := min(before, t.cpPos) - t.first; n > 0 {
		var size int64
		for _, e := range t.log[:n] {
			size += int64(len(e))
		}
		t.log = slices.Clone(t.log[n:]) // let the removed events go
		t.first += n
		m.s.grow(t, -size)
	}
	return nil
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
	now := s.m.s.lock()
	defer s.m.s.mu.Unlock()
	return s.m.find(s.thread, now).page(from, n), nil
}

// page returns the entries of t's log at positions from on: n of them, or
// fewer when the log ends; none when t is nil. The caller holds s.mu.
func (t *memThread) page(from int64, n int) []Entry {
	if t == nil {
		return nil
	}
	from = max(from, t.first)
	i := from - t.first
	if i >= int64(len(t.log)) {
		return nil
	}
	page := make([]Entry, 0, min(int64(n), int64(len(t.log))-i))
	for _, e := range t.log[i:min(int64(len(t.log)), i+int64(n))] {
		page = append(page, Entry{Pos: from, Event: bytes.Clone(e)})
		from++
	}
	return page
}

// Wait implements [Pager.Wait]. A thread deleted while it waits, and made
// again, is another thread: its positions are not those of the log waited
// on, and Wait returns a *RangeError rather than its entries (a follower
// would take them for the deleted thread's next). After 0 it waits for
// any thread of the id, since position 0 is in every log; it makes the
// thread then, but evicts none for it: with MaxThreads held, it returns an
// error wrapping [ErrFull].
func (s memPager) Wait(ctx context.Context, after int64, n int) ([]Entry, error) {
	var waited *memThread // the thread a wait was on
	for {
		if err := s.m.begin(ctx, "read", s.thread); err != nil {
			return nil, err
		}
		now := s.m.s.lock()
		t := s.m.find(s.thread, now)
		if waited != nil && t != waited && after > 0 { // deleted, maybe made again
			s.m.s.mu.Unlock()
			return nil, &RangeError{Thread: s.thread, After: after}
		}
		if page := t.page(after+1, n); len(page) > 0 {
			s.m.s.mu.Unlock()
			return page, nil
		}
		if t == nil && after == 0 { // wait for its first append
			if ms := s.m.s; ms.maxThreads >= 0 && len(ms.threads) >= ms.maxThreads { // a wait evicts no thread
				s.m.s.mu.Unlock()
				return nil, memError("follow", s.thread, fmt.Errorf("%w: %d threads, and a wait for a first event evicts none", ErrFull, len(ms.threads)))
			}
			var err error
			if t, err = s.m.thread(s.thread, now); err != nil {
				s.m.s.mu.Unlock()
				return nil, memError("follow", s.thread, err)
			}
		}
		if t == nil || t.last() < after { // deleted
			s.m.s.mu.Unlock()
			return nil, &RangeError{Thread: s.thread, After: after}
		}
		if t.wake == nil {
			t.wake = make(chan struct{})
		}
		wake := t.wake
		waited = t
		expiry := time.NewTimer(time.Duration(1<<63 - 1))
		if until, ok := s.m.s.expiry(t, now); ok { // the thread may expire meanwhile
			expiry.Reset(until.Sub(now) + time.Millisecond)
		}
		s.m.s.mu.Unlock()
		select {
		case <-wake:
		case <-expiry.C:
		case <-ctx.Done():
			expiry.Stop()
			return nil, memError("follow", s.thread, ctx.Err())
		}
		expiry.Stop()
	}
}

func memError(op, thread string, err error) error {
	return fmt.Errorf("aguistate: %s thread %q: %w", op, thread, err)
}

// maxEndOverrun is the size of the largest run's end that a full Memory
// takes past MaxBytes.
const maxEndOverrun = 1 << 10

// isRunEnd reports whether events are one run's end of at most
// maxEndOverrun bytes: a RUN_FINISHED or a RUN_ERROR.
func isRunEnd(events [][]byte) bool {
	if len(events) != 1 || len(events[0]) > maxEndOverrun {
		return false
	}
	typ := eventType(events[0])
	return typ == "RUN_FINISHED" || typ == "RUN_ERROR"
}
