// A run's lease: renewed while the run goes on, the stop it carries from another relay, and
// taken to end a run that nobody runs.

package relay

import (
	"context"
	"errors"
	"time"
)

// renewLease renews ru's lease every third of LeaseTTL until the run ends.
// It stops the run when a [Store.Stop] asked it to (a stop sent to another
// relay), and cancels it when another relay has taken the lease.
func (r *Relay) renewLease(ru *run) {
	tick := time.NewTicker(r.o.LeaseTTL / 3)
	defer tick.Stop()
	for {
		select {
		case <-ru.ctx.Done():
			return
		case <-tick.C:
		}
		err := ru.t.store.Lease(ru.ctx, ru.t.id, r.holder, ru.in.RunID, r.o.LeaseTTL)
		switch {
		case errors.Is(err, ErrStopped):
			ru.cancel(errStopped)
			return
		case errors.Is(err, ErrLeased):
			r.o.Logger.Warn("aguistate: relay: a run's lease was lost", "request", ru.reqID, "thread", ru.t.id, "run", ru.in.RunID)
			ru.cancel(errLeaseLost)
			return
		case err != nil && ru.ctx.Err() == nil:
			r.o.Logger.Warn("aguistate: relay: renewing a lease failed", "request", ru.reqID, "thread", ru.t.id, "err", err)
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
			_, _ = t.endOrphan(ctx, false)
		}
		t.progress = false
		t.mu.Unlock()
	}
}

// endOrphan ends the run in progress when this relay can take the
// thread's lease: no relay holds it, so nobody runs the run. It ends it
// with a RUN_ERROR of code CodeRunLost, or for a stop (stopped) with a
// RUN_FINISHED whose outcome is "cancelled". It reports whether it ended
// the run; an error wrapping ErrLeased means that a relay holds the lease.
// The caller holds t.mu.
func (t *thread) endOrphan(ctx context.Context, stopped bool) (bool, error) {
	if err := t.store.Lease(ctx, t.id, t.r.holder, "", t.r.o.LeaseTTL); err != nil && !errors.Is(err, ErrStopped) {
		return false, err
	}
	defer func() {
		ctx, cancel := t.r.storeContext(ctx)
		defer cancel()
		_ = t.store.Release(ctx, t.id, t.r.holder)
	}()
	if err := t.sync(ctx); err != nil || !t.c.Running() {
		return false, err
	}
	end := runError(CodeRunLost, msgRunLost)
	if stopped {
		end = runCancelled(t.c.ThreadID(), t.c.RunID())
	}
	if err := t.appendOwn(ctx, end); err != nil {
		t.r.o.Logger.Warn("aguistate: relay: ending a lost run failed", "thread", t.id, "err", err)
		return false, err
	}
	return true, nil
}
