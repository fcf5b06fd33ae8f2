// Leases: Memory's leases of threads, and the stops asked of their holders.

package relay

import (
	"context"
	"fmt"
	"time"
)

// leased reports whether t has a lease that has not expired at now.
func (t *memThread) leased(now time.Time) bool {
	return t.holder != "" && now.Before(t.expires)
}

// Lease implements [Store.Lease]. It returns an error wrapping [ErrFull]
// when the Memory holds MaxThreads threads, each with a lease, and thread
// is not one of them.
func (m *Memory) Lease(ctx context.Context, thread, holder, run string, ttl time.Duration) error {
	if err := m.begin(ctx, "lease", thread); err != nil {
		return err
	}
	now := m.s.lock()
	defer m.s.mu.Unlock()
	t, err := m.thread(thread, now)
	if err != nil {
		return memError("lease", thread, err)
	}
	renewal := t.leased(now) && t.holder == holder
	if t.leased(now) && !renewal {
		return fmt.Errorf("%w: thread %q", ErrLeased, thread)
	}
	stopped := renewal && t.stop
	t.holder, t.expires, t.stop = holder, now.Add(max(ttl, time.Millisecond)), false
	if run != "" {
		t.run = run
	}
	if stopped {
		return fmt.Errorf("%w: thread %q", ErrStopped, thread)
	}
	return nil
}

// Release implements [Store.Release].
func (m *Memory) Release(ctx context.Context, thread, holder string) error {
	if err := m.begin(ctx, "release the lease of", thread); err != nil {
		return err
	}
	now := m.s.lock()
	defer m.s.mu.Unlock()
	if t := m.find(thread, now); t != nil && t.holder == holder {
		t.holder, t.expires, t.stop = "", time.Time{}, false
	}
	return nil
}

// Stop implements [Store.Stop].
func (m *Memory) Stop(ctx context.Context, thread string) error {
	if err := m.begin(ctx, "stop", thread); err != nil {
		return err
	}
	now := m.s.lock()
	defer m.s.mu.Unlock()
	t := m.find(thread, now)
	if t == nil || !t.leased(now) {
		return fmt.Errorf("%w: thread %q", ErrNotLeased, thread)
	}
	t.stop = true
	return nil
}
