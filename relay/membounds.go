// Memory's bounds: the threads and bytes it holds, eviction of the least recently used,
// and expiry.

package relay

import (
	"fmt"
	"time"
)

// lock locks s and removes the expired threads when a sweep is due, and
// returns the time.
func (s *memState) lock() time.Time {
	s.mu.Lock()
	now := time.Now()
	if s.ttl > 0 && !now.Before(s.nextSweep) {
		s.nextSweep = now.Add(max(s.ttl/10, time.Millisecond))
		for e := s.aging.Front(); e != nil; {
			t, next := e.Value.(*memThread), e.Next()
			if now.Sub(t.updated) < s.ttl {
				break // the rest changed later
			}
			if !t.leased(now) {
				s.remove(t)
			}
			e = next
		}
	}
	return now
}

// expiry returns when t expires unless it changes, if the Memory has a
// TTL: its TTL after its last change, or when its lease expires. The
// caller holds s.mu.
func (s *memState) expiry(t *memThread, now time.Time) (time.Time, bool) {
	if s.ttl == 0 {
		return time.Time{}, false
	}
	until := t.updated.Add(s.ttl)
	if t.leased(now) && t.expires.After(until) {
		until = t.expires
	}
	return until, true
}

// find returns the thread named id of m's tenant, as used now, or nil. It
// removes the thread if it has expired. The caller holds m.s.mu.
func (m *Memory) find(id string, now time.Time) *memThread {
	t := m.s.threads[memKey{m.tenant, id}]
	if t == nil {
		return nil
	}
	if until, ok := m.s.expiry(t, now); ok && !now.Before(until) {
		m.s.remove(t)
		return nil
	}
	m.s.used.MoveToFront(t.use)
	return t
}

// thread returns the thread named id of m's tenant, as used now, adding an
// empty one, for which it evicts the least recently used thread when the
// Memory holds MaxThreads. It returns an error wrapping ErrFull when every
// thread holds a lease. The caller holds m.s.mu.
func (m *Memory) thread(id string, now time.Time) (*memThread, error) {
	if t := m.find(id, now); t != nil {
		return t, nil
	}
	s := m.s
	if s.maxThreads >= 0 && len(s.threads) >= s.maxThreads && !s.evict(nil, now) {
		return nil, fmt.Errorf("%w: %d threads, every one leased", ErrFull, len(s.threads))
	}
	t := &memThread{key: memKey{m.tenant, id}, first: 1, updated: now}
	t.use = s.used.PushFront(t)
	if s.ttl > 0 {
		t.age = s.aging.PushBack(t)
	}
	s.threads[t.key] = t
	return t, nil
}

// room makes room for size more bytes of t, evicting the least recently
// used threads but t. It returns an error wrapping ErrFull when they do
// not fit: in MaxBytes with t's, or with the threads that hold a lease.
// The caller holds s.mu.
func (s *memState) room(t *memThread, size int64, now time.Time) error {
	if s.maxBytes < 0 || size <= 0 {
		return nil
	}
	if t.bytes+size > s.maxBytes {
		return fmt.Errorf("%w: the thread would hold %d bytes, more than %d", ErrFull, t.bytes+size, s.maxBytes)
	}
	for s.bytes+size > s.maxBytes {
		if !s.evict(t, now) {
			return fmt.Errorf("%w: %d bytes held, and every other thread is leased", ErrFull, s.bytes)
		}
	}
	return nil
}

// grow counts size more bytes in t (fewer when negative). The caller
// holds s.mu.
func (s *memState) grow(t *memThread, size int64) {
	t.bytes += size
	s.bytes += size
}

// evict removes the least recently used thread but except that holds no
// unexpired lease, and reports whether there was one. The caller holds
// s.mu.
func (s *memState) evict(except *memThread, now time.Time) bool {
	for e := s.used.Back(); e != nil; e = e.Prev() {
		if t := e.Value.(*memThread); t != except && !t.leased(now) {
			s.remove(t)
			return true
		}
	}
	return false
}

// touch records an append to t at now: t moves to the front of its
// tenant's listing and to the end of the expiry order. The caller holds
// s.mu.
func (s *memState) touch(t *memThread, now time.Time) {
	t.updated = now
	if t.age != nil {
		s.aging.MoveToBack(t.age)
	}
	s.list(t)
}

// remove removes t, and wakes its followers. The caller holds s.mu.
func (s *memState) remove(t *memThread) {
	delete(s.threads, t.key)
	s.unlist(t)
	s.used.Remove(t.use)
	if t.age != nil {
		s.aging.Remove(t.age)
	}
	s.bytes -= t.bytes
	t.log, t.cpData, t.bytes = nil, nil, 0
	if t.wake != nil {
		close(t.wake)
		t.wake = nil
	}
}
