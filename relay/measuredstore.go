// The measured store: a Store wrapper that records each operation in the relay's metrics.

package relay

import (
	"context"
	"errors"
	"iter"
	"time"
)

// measuredStore is the Store that a relay uses: Options.Store, whose
// operations it records in tel (see telemetry.storeDone), its appended
// events, conflicts and trims too. It embeds the Store, so a method that
// it does not measure is the store's own; Tenant's stores are measured.
type measuredStore struct {
	Store
	tel *telemetry
}

// Append implements [Store.Append].
func (s measuredStore) Append(ctx context.Context, thread string, pos int64, events ...[]byte) error {
	start := s.tel.storeStart(ctx)
	err := s.Store.Append(ctx, thread, pos, events...)
	s.tel.storeDone(ctx, opAppend, start, err)
	switch {
	case err == nil:
		s.tel.appended.Add(ctx, int64(len(events)))
	case errors.Is(err, ErrConflict):
		s.tel.conflicts.Add(ctx, 1)
	}
	return err
}

// Read implements [Store.Read]. Its duration is the time spent in the
// store's sequence, not in the caller's loop.
func (s measuredStore) Read(ctx context.Context, thread string, after int64) iter.Seq2[Entry, error] {
	return s.measure(ctx, opRead, s.Store.Read(ctx, thread, after))
}

// Follow implements [Store.Follow]. Only its errors are recorded: it
// waits for entries.
func (s measuredStore) Follow(ctx context.Context, thread string, after int64) iter.Seq2[Entry, error] {
	return s.measure(ctx, opFollow, s.Store.Follow(ctx, thread, after))
}

// measure returns seq, whose time (for opRead, when recorded) and error
// tel records as op's.
func (s measuredStore) measure(ctx context.Context, op storeOp, seq iter.Seq2[Entry, error]) iter.Seq2[Entry, error] {
	timed := op == opRead && s.tel.storeDuration.Enabled(ctx)
	if !timed && !s.tel.storeErrors.Enabled(ctx) {
		return seq
	}
	return func(yield func(Entry, error) bool) {
		var spent time.Duration
		var err error
		from := time.Now()
		for e, ferr := range seq {
			if timed {
				spent += time.Since(from)
			}
			err = ferr
			if !yield(e, ferr) {
				break
			}
			if timed {
				from = time.Now()
			}
		}
		if timed {
			s.tel.storeDuration.Record(ctx, spent.Seconds(), s.tel.ops[op])
		}
		s.tel.storeDone(ctx, op, time.Time{}, err)
	}
}

// SaveCheckpoint implements [Store.SaveCheckpoint].
func (s measuredStore) SaveCheckpoint(ctx context.Context, thread string, pos int64, data []byte) error {
	start := s.tel.storeStart(ctx)
	err := s.Store.SaveCheckpoint(ctx, thread, pos, data)
	s.tel.storeDone(ctx, opSaveCheckpoint, start, err)
	return err
}

// LoadCheckpoint implements [Store.LoadCheckpoint].
func (s measuredStore) LoadCheckpoint(ctx context.Context, thread string) (int64, []byte, error) {
	start := s.tel.storeStart(ctx)
	pos, data, err := s.Store.LoadCheckpoint(ctx, thread)
	s.tel.storeDone(ctx, opLoadCheckpoint, start, err)
	return pos, data, err
}

// Trim implements [Store.Trim]. A trim before a position past the first
// (one that may remove entries) that the store takes counts as one.
func (s measuredStore) Trim(ctx context.Context, thread string, before int64) error {
	start := s.tel.storeStart(ctx)
	err := s.Store.Trim(ctx, thread, before)
	s.tel.storeDone(ctx, opTrim, start, err)
	if err == nil && before > 1 {
		s.tel.trims.Add(ctx, 1)
	}
	return err
}

// Lease implements [Store.Lease].
func (s measuredStore) Lease(ctx context.Context, thread, holder, run string, ttl time.Duration) error {
	start := s.tel.storeStart(ctx)
	err := s.Store.Lease(ctx, thread, holder, run, ttl)
	s.tel.storeDone(ctx, opLease, start, err)
	return err
}

// Release implements [Store.Release].
func (s measuredStore) Release(ctx context.Context, thread, holder string) error {
	start := s.tel.storeStart(ctx)
	err := s.Store.Release(ctx, thread, holder)
	s.tel.storeDone(ctx, opRelease, start, err)
	return err
}

// Stop implements [Store.Stop].
func (s measuredStore) Stop(ctx context.Context, thread string) error {
	start := s.tel.storeStart(ctx)
	err := s.Store.Stop(ctx, thread)
	s.tel.storeDone(ctx, opStop, start, err)
	return err
}

// Threads implements [Store.Threads].
func (s measuredStore) Threads(ctx context.Context, cursor string, limit int) ([]ThreadInfo, string, error) {
	start := s.tel.storeStart(ctx)
	threads, next, err := s.Store.Threads(ctx, cursor, limit)
	s.tel.storeDone(ctx, opThreads, start, err)
	return threads, next, err
}

// Delete implements [Store.Delete].
func (s measuredStore) Delete(ctx context.Context, thread string) error {
	start := s.tel.storeStart(ctx)
	err := s.Store.Delete(ctx, thread)
	s.tel.storeDone(ctx, opDelete, start, err)
	return err
}

// Tenant implements [Store.Tenant]: the tenant's store, measured too.
func (s measuredStore) Tenant(name string) Store {
	return measuredStore{s.Store.Tenant(name), s.tel}
}
