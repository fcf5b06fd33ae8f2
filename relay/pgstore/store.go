// Store: the relay.Store on PostgreSQL tables, with LISTEN/NOTIFY for the live tail.

package pgstore

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"time"

	"github.com/aguistate/aguistate/relay"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Options configures a [Store] and [Setup]. A nil *Options means the
// defaults.
type Options struct {
	// Schema holds the store's tables. Stores on different schemas share
	// nothing. At most 46 bytes. Default "public".
	Schema string

	// Logger, when not nil, receives a record at level Warn each time the
	// connection that listens for appends fails (the store reconnects it).
	Logger *slog.Logger
}

// Store is a [relay.Store] and a [relay.Leaser] in PostgreSQL. It is safe
// for concurrent use, by any number of processes on one database. Call
// Close when done with it.
type Store struct {
	pool *pgxpool.Pool
	t    tables
	hub  *hub

	sqlAppend, sqlLast, sqlPage, sqlSave, sqlLoad, sqlTrim, sqlLease, sqlRelease string
}

// New returns a Store that keeps its threads in the tables that [Setup]
// made in the database pool reaches, configured by opts. It sends nothing
// until used; its first Follow opens one more connection, outside the
// pool, to LISTEN. The caller keeps pool and closes it after Close.
func New(pool *pgxpool.Pool, opts *Options) (*Store, error) {
	t, err := newTables(opts)
	if err != nil {
		return nil, err
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	if opts != nil && opts.Logger != nil {
		logger = opts.Logger
	}
	s := &Store{
		pool: pool,
		t:    t,
		hub: &hub{
			connect: func(ctx context.Context) (*pgx.Conn, error) {
				return pgx.ConnectConfig(ctx, pool.Config().ConnConfig.Copy())
			},
			channel: t.channel,
			logger:  logger,
			waiters: make(map[string]map[chan struct{}]bool),
			closed:  make(chan struct{}),
		},
	}
	// The append inserts the events only if the log ends right before them;
	// the primary key turns a concurrent insert at the same position into a
	// unique violation. It notifies the followers in the same statement, so
	// that the notification goes out with the commit, once.
	s.sqlAppend = fmt.Sprintf(`
WITH ins AS (
	INSERT INTO %[1]s (thread, pos, event)
	SELECT $1, $2::bigint + e.o - 1, e.v FROM unnest($3::bytea[]) WITH ORDINALITY AS e(v, o)
	WHERE (SELECT coalesce(max(pos), 0) FROM %[1]s WHERE thread = $1) = $2 - 1
	RETURNING pos
), note AS (
	SELECT pg_notify($4, md5($1)) FROM (SELECT FROM ins LIMIT 1) one
)
SELECT (SELECT count(*) FROM ins), (SELECT count(*) FROM note)`, t.events)
	s.sqlLast = fmt.Sprintf(`SELECT coalesce(max(pos), 0) FROM %s WHERE thread = $1`, t.events)
	s.sqlPage = fmt.Sprintf(`SELECT pos, event FROM %s WHERE thread = $1 AND pos >= $2 ORDER BY pos LIMIT $3`, t.events)
	s.sqlSave = fmt.Sprintf(`
WITH last AS (
	SELECT coalesce(max(pos), 0) AS n FROM %[1]s WHERE thread = $1
), up AS (
	INSERT INTO %[2]s (thread, pos, data)
	SELECT $1, $2::bigint, $3 FROM last WHERE $2::bigint BETWEEN 0 AND last.n
	ON CONFLICT (thread) DO UPDATE SET pos = excluded.pos, data = excluded.data
	WHERE %[2]s.pos <= excluded.pos
)
SELECT n FROM last`, t.events, t.checkpoints)
	s.sqlLoad = fmt.Sprintf(`SELECT pos, data FROM %s WHERE thread = $1`, t.checkpoints)
	s.sqlTrim = fmt.Sprintf(`
DELETE FROM %s WHERE thread = $1
AND pos < (SELECT least($2::bigint, pos) FROM %s WHERE thread = $1)`, t.events, t.checkpoints)
	// The lease goes to the holder when no row holds another holder's
	// unexpired lease; the server's clock decides.
	s.sqlLease = fmt.Sprintf(`
INSERT INTO %[1]s AS l (thread, holder, expires)
VALUES ($1, $2, clock_timestamp() + $3::bigint * interval '1 millisecond')
ON CONFLICT (thread) DO UPDATE SET holder = excluded.holder, expires = excluded.expires
WHERE l.holder = excluded.holder OR l.expires <= clock_timestamp()
RETURNING 1`, t.leases)
	s.sqlRelease = fmt.Sprintf(`DELETE FROM %s WHERE thread = $1 AND holder = $2`, t.leases)
	return s, nil
}

// Close stops listening for appends: follows that wait, and later ones,
// end with an error. It does not close the pool; close that after Close.
func (s *Store) Close() {
	s.hub.close()
}

// Append implements [relay.Store.Append] with one INSERT statement that
// also notifies the followers.
func (s *Store) Append(ctx context.Context, thread string, pos int64, events ...[]byte) error {
	if err := ctx.Err(); err != nil {
		return wrap("append to", thread, err)
	}
	if len(events) == 0 {
		return nil
	}
	var n, notes int64
	err := s.pool.QueryRow(ctx, s.sqlAppend, []byte(thread), pos, events, s.t.channel).Scan(&n, &notes)
	if pgErr := (*pgconn.PgError)(nil); errors.As(err, &pgErr) && pgErr.Code == "23505" { // unique_violation
		err, n = nil, 0
	}
	if err != nil {
		return wrap("append to", thread, err)
	}
	if n == int64(len(events)) {
		return nil
	}
	var last int64
	if err := s.pool.QueryRow(ctx, s.sqlLast, []byte(thread)).Scan(&last); err != nil {
		return wrap("append to", thread, err)
	}
	return &relay.ConflictError{Thread: thread, Pos: pos, Last: last}
}

// Read implements [relay.Store.Read].
func (s *Store) Read(ctx context.Context, thread string, after int64) iter.Seq2[relay.Entry, error] {
	return relay.Scan(ctx, thread, after, s.pager(thread), false)
}

// Follow implements [relay.Store.Follow]. It waits for a notification
// about the thread, registering for it before it reads the log, so that an
// append that its read misses wakes it.
func (s *Store) Follow(ctx context.Context, thread string, after int64) iter.Seq2[relay.Entry, error] {
	return relay.Scan(ctx, thread, after, s.pager(thread), true)
}

// SaveCheckpoint implements [relay.Store.SaveCheckpoint].
func (s *Store) SaveCheckpoint(ctx context.Context, thread string, pos int64, data []byte) error {
	if err := ctx.Err(); err != nil {
		return wrap("save the checkpoint of", thread, err)
	}
	if data == nil {
		data = []byte{}
	}
	var last int64
	if err := s.pool.QueryRow(ctx, s.sqlSave, []byte(thread), pos, data).Scan(&last); err != nil {
		return wrap("save the checkpoint of", thread, err)
	}
	if pos < 0 || pos > last {
		return &relay.ConflictError{Thread: thread, Pos: pos, Last: last}
	}
	return nil
}

// LoadCheckpoint implements [relay.Store.LoadCheckpoint].
func (s *Store) LoadCheckpoint(ctx context.Context, thread string) (int64, []byte, error) {
	if err := ctx.Err(); err != nil {
		return 0, nil, wrap("load the checkpoint of", thread, err)
	}
	var pos int64
	var data []byte
	err := s.pool.QueryRow(ctx, s.sqlLoad, []byte(thread)).Scan(&pos, &data)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil, fmt.Errorf("%w: thread %q", relay.ErrNoCheckpoint, thread)
	}
	if err != nil {
		return 0, nil, wrap("load the checkpoint of", thread, err)
	}
	return pos, data, nil
}

// Trim implements [relay.Store.Trim].
func (s *Store) Trim(ctx context.Context, thread string, before int64) error {
	if err := ctx.Err(); err != nil {
		return wrap("trim", thread, err)
	}
	if _, err := s.pool.Exec(ctx, s.sqlTrim, []byte(thread), before); err != nil {
		return wrap("trim", thread, err)
	}
	return nil
}

// Lease implements [relay.Leaser.Lease] with one upsert that takes the
// lease only when it is free, expired or the holder's.
func (s *Store) Lease(ctx context.Context, thread, holder string, ttl time.Duration) error {
	if err := ctx.Err(); err != nil {
		return wrap("lease", thread, err)
	}
	var one int
	err := s.pool.QueryRow(ctx, s.sqlLease, []byte(thread), holder, max(ttl.Milliseconds(), 1)).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%w: thread %q", relay.ErrLeased, thread)
	}
	if err != nil {
		return wrap("lease", thread, err)
	}
	return nil
}

// Release implements [relay.Leaser.Release].
func (s *Store) Release(ctx context.Context, thread, holder string) error {
	if err := ctx.Err(); err != nil {
		return wrap("release the lease of", thread, err)
	}
	if _, err := s.pool.Exec(ctx, s.sqlRelease, []byte(thread), holder); err != nil {
		return wrap("release the lease of", thread, err)
	}
	return nil
}

func (s *Store) pager(thread string) pager {
	sum := md5.Sum([]byte(thread))
	return pager{s: s, thread: thread, key: hex.EncodeToString(sum[:])}
}

// pager reads one thread's log for relay.Scan.
type pager struct {
	s      *Store
	thread string
	key    string // the thread's notification payload
}

func (p pager) Page(ctx context.Context, from int64, n int) ([]relay.Entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, wrap("read", p.thread, err)
	}
	rows, err := p.s.pool.Query(ctx, p.s.sqlPage, []byte(p.thread), from, n)
	if err != nil {
		return nil, wrap("read", p.thread, err)
	}
	page, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (relay.Entry, error) {
		var e relay.Entry
		err := row.Scan(&e.Pos, &e.Event)
		return e, err
	})
	if err != nil {
		return nil, wrap("read", p.thread, err)
	}
	return page, nil
}

func (p pager) Wait(ctx context.Context, after int64, n int) ([]relay.Entry, error) {
	closed := fmt.Errorf("aguistate: postgres: follow thread %q: the store is closed", p.thread)
	ch := p.s.hub.register(p.key)
	if ch == nil {
		return nil, closed
	}
	defer p.s.hub.unregister(p.key, ch)
	for {
		page, err := p.Page(ctx, after+1, n)
		if err != nil || len(page) > 0 {
			return page, err
		}
		select {
		case <-ch:
		case <-p.s.hub.closed:
			return nil, closed
		case <-ctx.Done():
			return nil, wrap("follow", p.thread, ctx.Err())
		}
	}
}

func wrap(op, thread string, err error) error {
	return fmt.Errorf("aguistate: postgres: %s thread %q: %w", op, thread, err)
}
