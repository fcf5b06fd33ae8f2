// Leases: what tells a running relay from a lost one; renewed by a run, taken to end a lost run.

package relay

import (
	"context"
	"errors"
	"time"
)

// Leaser is implemented by a [Store] that also keeps leases: a thread's
// lease names the one holder (a relay) that runs the thread's current run,
// until it expires. The holder renews it while the run goes on; a relay
// that finds a run open and its lease free may end the run, since nobody
// runs it. The three stores of this module implement it.
//
// Expiry is measured by the store: the server's clock for a store that
// keeps threads in a server, so that holders' clocks do not matter.
type Leaser interface {
	// Lease takes the lease of thread for holder until ttl from now, when
	// no other holder has a lease of it that has not expired, and renews it
	// when holder has it. Otherwise it changes nothing and returns an error
	// wrapping [ErrLeased]. ttl is at least a millisecond.
	Lease(ctx context.Context, thread, holder string, ttl time.Duration) error

	// Release ends holder's lease of thread, if holder has it; it does
	// nothing otherwise.
	Release(ctx context.Context, thread, holder string) error
}

// renewLease renews ru's lease until the run ends, and cancels the run
// when another relay has taken it.
func (r *Relay) renewLease(ru *run) {
	l, ok := ru.t.store.(Leaser)
	if !ok {
		return
	}
	tick := time.NewTicker(r.o.LeaseTTL / 3)
	defer tick.Stop()
	for {
		select {
		case <-ru.ctx.Done():
			return
		case <-tick.C:
		}
		err := l.Lease(ru.ctx, ru.t.id, r.holder, r.o.LeaseTTL)
		if errors.Is(err, ErrLeased) {
			r.o.Logger.Warn("aguistate: relay: a run's lease was lost", "thread", ru.t.id, "run", ru.in.RunID)
			ru.cancel(errLeaseLost)
			return
		}
		if err != nil && ru.ctx.Err() == nil {
			r.o.Logger.Warn("aguistate: relay: renewing a lease failed", "thread", ru.t.id, "err", err)
		}
	}
}

// watchLease ends, once per lease time, a run that nobody runs: one in
// progress whose log has not moved for that long, and whose lease this
// relay can take (see endOrphan).
func (t *thread) watchLease(ctx context.Context) {
	tick := time.NewTicker(t.r.o.LeaseTTL)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		t.mu.Lock()
		if !t.progress && t.running == nil && t.c != nil && t.c.Running() {
			t.endOrphan(ctx)
		}
		t.progress = false
		t.mu.Unlock()
	}
}

// endOrphan ends the run in progress with a RUN_ERROR of code CodeRunLost
// when the store is a Leaser and this relay can take the thread's lease:
// no relay holds it, so nobody runs the run. The caller holds t.mu.
func (t *thread) endOrphan(ctx context.Context) {
	l, ok := t.store.(Leaser)
	if !ok {
		return
	}
	if err := l.Lease(ctx, t.id, t.r.holder, t.r.o.LeaseTTL); err != nil {
		return
	}
	defer func() {
		ctx, cancel := t.r.storeContext(ctx)
		defer cancel()
		_ = l.Release(ctx, t.id, t.r.holder)
	}()
	if err := t.sync(ctx); err != nil {
		return
	}
	if t.c.Running() {
		err := t.appendOwn(ctx, runError(CodeRunLost, msgRunLost))
		if err != nil {
			t.r.o.Logger.Warn("aguistate: relay: ending a lost run failed", "thread", t.id, "err", err)
		}
	}
}
