// Expiry: Sweep removes the threads whose log has not grown for the TTL, and a Store sweeps
// periodically while it is open.

package pgstore

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
)

// sweepBatch is the most threads that one statement of a sweep removes.
const sweepBatch = 1000

// sweepQuery returns the statement that removes up to $2 threads of any
// tenant whose last append is more than $1 milliseconds ago and that hold
// no unexpired lease, and returns them. It locks their rows, skipping
// those that a write holds (their thread changes), and checks them again
// once locked; with the rows gone, their events and checkpoints are
// stable, and go too.
func sweepQuery(t tables) string {
	return fmt.Sprintf(`
WITH gone AS (
	DELETE FROM %[1]s t USING (
		SELECT tenant, thread FROM %[1]s
		WHERE updated_at < clock_timestamp() - $1::bigint * interval '1 millisecond'
		AND (holder = ''::bytea OR expires <= clock_timestamp())
		LIMIT $2 FOR UPDATE SKIP LOCKED
	) old
	WHERE t.tenant = old.tenant AND t.thread = old.thread
	RETURNING t.tenant, t.thread
), events AS (
	DELETE FROM %[2]s e USING gone WHERE e.tenant = gone.tenant AND e.thread = gone.thread
), checkpoints AS (
	DELETE FROM %[3]s c USING gone WHERE c.tenant = gone.tenant AND c.thread = gone.thread
)
SELECT tenant, thread FROM gone`, t.threads, t.events, t.checkpoints)
}

// Sweep removes the threads of every tenant whose log has not grown for
// the store's TTL (Options.TTL) and that hold no unexpired lease, as
// Delete removes them, their followers included, and returns how many it
// removed. Without a TTL it removes nothing. It works in statements of
// 1,000 threads; several stores may sweep at once. A Store with a TTL
// calls it every Options.SweepEvery.
func (s *Store) Sweep(ctx context.Context) (int, error) {
	if s.ttl <= 0 {
		return 0, nil
	}
	removed := 0
	for {
		rows, err := s.pool.Query(ctx, s.q.sweep, s.ttl.Milliseconds(), sweepBatch)
		if err != nil {
			return removed, fmt.Errorf("aguistate: postgres: sweep: %w", err)
		}
		keys, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (string, error) {
			var tenant, thread []byte
			err := row.Scan(&tenant, &thread)
			return notifyKey(tenant, string(thread)), err
		})
		if err != nil {
			return removed, fmt.Errorf("aguistate: postgres: sweep: %w", err)
		}
		removed += len(keys)
		if len(keys) > 0 {
			_, err := s.pool.Exec(ctx, `SELECT pg_notify($1, k) FROM unnest($2::text[]) AS k`, s.t.channel, keys)
			if err != nil {
				return removed, fmt.Errorf("aguistate: postgres: sweep: notify the followers: %w", err)
			}
		}
		if len(keys) < sweepBatch {
			return removed, nil
		}
	}
}

// sweeper calls Sweep every interval until stopped.
type sweeper struct {
	stop func()
	done chan struct{}
}

// startSweeper starts s's periodic sweep, every interval, which logs its
// failures to logger.
func (s *Store) startSweeper(every time.Duration, logger *slog.Logger) *sweeper {
	ctx, stop := context.WithCancel(context.Background())
	sw := &sweeper{stop: stop, done: make(chan struct{})}
	go func() {
		defer close(sw.done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if _, err := s.Sweep(ctx); err != nil && ctx.Err() == nil {
				logger.Warn("aguistate: postgres: sweep", "schema", s.t.schema, "err", err)
			}
		}
	}()
	return sw
}

// close stops the sweeps and waits for the one under way.
func (sw *sweeper) close() {
	if sw != nil {
		sw.stop()
		<-sw.done
	}
}
