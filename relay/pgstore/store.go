// Store: the relay.Store on PostgreSQL tables, with LISTEN/NOTIFY for the live tail.

package pgstore

import (
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/binary"
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
	// connection that listens for appends fails (the store reconnects it),
	// and each time a periodic sweep fails.
	Logger *slog.Logger

	// TTL is how long a thread whose log does not grow is kept: from its
	// last append, or from when the store first held it. A thread with an
	// unexpired lease is kept. [Store.Sweep] removes the others, and a
	// Store does every SweepEvery while it is open. 0 (the default) keeps
	// threads until they are deleted.
	TTL time.Duration

	// SweepEvery is the time between two sweeps of a Store with a TTL, the
	// first SweepEvery after New. 0 means the default, TTL/10 within 1 s
	// and 10 min; a negative value means none: call Sweep yourself.
	SweepEvery time.Duration
}

// Store is a [relay.Store] in PostgreSQL. It is safe for concurrent use,
// by any number of processes on one database. Call Close when done with
// it.
type Store struct {
	pool *pgxpool.Pool
	t    tables
	hub  *hub
	q    *queries
	ttl  time.Duration
	sw   *sweeper // nil without periodic sweeps
	root *Store   // tenant ""

	tenant []byte // never nil, for the NOT NULL column
	err    error  // not nil for a tenant whose name is too long: every call returns it
}

// queries are the SQL statements of a Store and its tenants. $1 is always
// the tenant, $2 the thread.
type queries struct {
	append, last, page, save, load, trim, lease, release, stop string
	list, listAfter, sweep                                     string
	delete                                                     [3]string
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
		q:      newQueries(t),
		tenant: []byte{},
	}
	s.root = s
	if opts != nil && opts.TTL > 0 {
		s.ttl = opts.TTL
		every := opts.SweepEvery
		if every == 0 {
			every = min(max(s.ttl/10, time.Second), 10*time.Minute)
		}
		if every > 0 {
			s.sw = s.startSweeper(every, logger)
		}
	}
	return s, nil
}

func newQueries(t tables) *queries {
	var q queries
	// Every write of a thread locks its row of the threads table first, so
	// that appends, checkpoints, leases and deletes of one thread take
	// turns. An append is a compare-and-set on the row's last position: it
	// updates the row where the position is the one before the events (or
	// adds the row of a new thread at position 1), and inserts the events
	// only then. A concurrent append waits for the row and then finds the
	// position moved on; the primary key of the events makes any other
	// race a unique violation. The append notifies the followers in the
	// same statement, so that the notification goes out with the commit,
	// once.
	q.append = fmt.Sprintf(`
WITH gate AS (
	UPDATE %[1]s SET last_pos = $3::bigint + cardinality($4::bytea[]) - 1, updated_at = clock_timestamp()
	WHERE tenant = $1 AND thread = $2 AND last_pos = $3::bigint - 1
	RETURNING 1
), fresh AS (
	INSERT INTO %[1]s (tenant, thread, updated_at, last_pos)
	SELECT $1, $2, clock_timestamp(), cardinality($4::bytea[]) WHERE $3::bigint = 1
	ON CONFLICT (tenant, thread) DO NOTHING
	RETURNING 1
), ins AS (
	INSERT INTO %[2]s (tenant, thread, pos, event)
	SELECT $1, $2, $3::bigint + e.o - 1, e.v FROM unnest($4::bytea[]) WITH ORDINALITY AS e(v, o)
	WHERE EXISTS (SELECT FROM gate) OR EXISTS (SELECT FROM fresh)
	RETURNING pos
), note AS (
	SELECT pg_notify($5, $6) FROM (SELECT FROM ins LIMIT 1) one
)
SELECT (SELECT count(*) FROM ins), (SELECT count(*) FROM note)`, t.threads, t.events)
	q.last = fmt.Sprintf(`SELECT coalesce((SELECT last_pos FROM %s WHERE tenant = $1 AND thread = $2), 0)`, t.threads)
	q.page = fmt.Sprintf(`SELECT pos, event FROM %s WHERE tenant = $1 AND thread = $2 AND pos >= $3 ORDER BY pos LIMIT $4`, t.events)
	// A checkpoint locks the thread's row, adding it for a thread with no
	// log, so that a checkpoint of a deleted thread is deleted with it.
	q.save = fmt.Sprintf(`
WITH t AS (
	INSERT INTO %[1]s AS t (tenant, thread, updated_at) VALUES ($1, $2, clock_timestamp())
	ON CONFLICT (tenant, thread) DO UPDATE SET last_pos = t.last_pos
	RETURNING last_pos
), up AS (
	INSERT INTO %[2]s (tenant, thread, pos, data)
	SELECT $1, $2, $3::bigint, $4 FROM t WHERE $3::bigint BETWEEN 0 AND t.last_pos
	ON CONFLICT (tenant, thread) DO UPDATE SET pos = excluded.pos, data = excluded.data
	WHERE %[2]s.pos <= excluded.pos
)
SELECT last_pos FROM t`, t.threads, t.checkpoints)
	q.load = fmt.Sprintf(`SELECT pos, data FROM %s WHERE tenant = $1 AND thread = $2`, t.checkpoints)
	q.trim = fmt.Sprintf(`
DELETE FROM %s WHERE tenant = $1 AND thread = $2
AND pos < (SELECT least($3::bigint, pos) FROM %s WHERE tenant = $1 AND thread = $2)`, t.events, t.checkpoints)
	// The lease goes to the holder when the row holds no other holder's
	// unexpired lease; the server's clock decides. stop is 1 while a stop
	// is asked of the holder, 2 once a renewal has reported it.
	q.lease = fmt.Sprintf(`
INSERT INTO %[1]s AS t (tenant, thread, updated_at, holder, expires, last_run)
VALUES ($1, $2, clock_timestamp(), $3, clock_timestamp() + $4::bigint * interval '1 millisecond', $5)
ON CONFLICT (tenant, thread) DO UPDATE SET holder = excluded.holder, expires = excluded.expires,
	last_run = CASE WHEN excluded.last_run = ''::bytea THEN t.last_run ELSE excluded.last_run END,
	stop = CASE WHEN t.stop = 1 AND t.holder = excluded.holder AND t.expires > clock_timestamp() THEN 2 ELSE 0 END
WHERE t.holder = excluded.holder OR t.expires <= clock_timestamp()
RETURNING stop = 2`, t.threads)
	q.release = fmt.Sprintf(`UPDATE %s SET holder = ''::bytea, expires = '-infinity', stop = 0
WHERE tenant = $1 AND thread = $2 AND holder = $3`, t.threads)
	q.stop = fmt.Sprintf(`UPDATE %s SET stop = 1
WHERE tenant = $1 AND thread = $2 AND holder <> ''::bytea AND expires > clock_timestamp() RETURNING 1`, t.threads)
	// The listing reads the threads table by its index on (tenant,
	// updated_at, thread), backwards from the cursor's time and thread.
	list := `SELECT thread, updated_at, last_pos, last_run, holder <> ''::bytea AND expires > clock_timestamp()
FROM %s WHERE tenant = $1 AND last_pos > 0 %s ORDER BY updated_at DESC, thread DESC LIMIT $2`
	q.list = fmt.Sprintf(list, t.threads, "")
	q.listAfter = fmt.Sprintf(list, t.threads, "AND (updated_at, thread) < ($3, $4)")
	// A delete locks the thread's row as it deletes it, then deletes the
	// rest: an append that waited for the row finds no thread, and one that
	// had it is deleted too.
	q.delete = [3]string{
		fmt.Sprintf(`DELETE FROM %s WHERE tenant = $1 AND thread = $2`, t.threads),
		fmt.Sprintf(`DELETE FROM %s WHERE tenant = $1 AND thread = $2`, t.events),
		fmt.Sprintf(`DELETE FROM %s WHERE tenant = $1 AND thread = $2`, t.checkpoints),
	}
	q.sweep = sweepQuery(t)
	return &q
}

// Tenant implements [relay.Store.Tenant]. The tenant's name is the tenant
// column of its rows. Its Close is the original's.
func (s *Store) Tenant(name string) relay.Store {
	if name == "" {
		return s.root
	}
	t := &Store{pool: s.pool, t: s.t, hub: s.hub, q: s.q, ttl: s.ttl, sw: s.sw, root: s.root, tenant: []byte(name)}
	if len(name) > relay.MaxTenant {
		t.err = fmt.Errorf("the tenant name is %d bytes long, more than %d", len(name), relay.MaxTenant)
	}
	return t
}

// begin returns the error that a call of op on thread returns before it
// starts, or nil.
func (s *Store) begin(ctx context.Context, op, thread string) error {
	if s.err != nil {
		return wrap(op, thread, s.err)
	}
	if err := ctx.Err(); err != nil {
		return wrap(op, thread, err)
	}
	return nil
}

// key returns the payload of the notifications about thread.
func (s *Store) key(thread string) string { return notifyKey(s.tenant, thread) }

// notifyKey returns the payload of the notifications about a tenant's
// thread: the md5 (in hex) of the thread id, after the tenant's name and
// its length for a tenant other than "".
func notifyKey(tenant []byte, thread string) string {
	h := md5.New()
	if len(tenant) > 0 {
		h.Write(binary.AppendUvarint(nil, uint64(len(tenant))))
		h.Write(tenant)
	}
	h.Write([]byte(thread))
	return hex.EncodeToString(h.Sum(nil))
}

// Close stops listening for appends (follows that wait, and later ones,
// end with an error) and stops the periodic sweeps, for the Store and its
// tenants. It does not close the pool; close that after Close.
func (s *Store) Close() {
	s.hub.close()
	s.sw.close()
}

// Append implements [relay.Store.Append] with one INSERT statement that
// also notifies the followers.
func (s *Store) Append(ctx context.Context, thread string, pos int64, events ...[]byte) error {
	if err := s.begin(ctx, "append to", thread); err != nil {
		return err
	}
	if len(events) == 0 {
		return nil
	}
	var n, notes int64
	err := s.pool.QueryRow(ctx, s.q.append, s.tenant, []byte(thread), pos, events, s.t.channel, s.key(thread)).Scan(&n, &notes)
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
	if err := s.pool.QueryRow(ctx, s.q.last, s.tenant, []byte(thread)).Scan(&last); err != nil {
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
	if err := s.begin(ctx, "save the checkpoint of", thread); err != nil {
		return err
	}
	if data == nil {
		data = []byte{}
	}
	var last int64
	if err := s.pool.QueryRow(ctx, s.q.save, s.tenant, []byte(thread), pos, data).Scan(&last); err != nil {
		return wrap("save the checkpoint of", thread, err)
	}
	if pos < 0 || pos > last {
		return &relay.ConflictError{Thread: thread, Pos: pos, Last: last}
	}
	return nil
}

// LoadCheckpoint implements [relay.Store.LoadCheckpoint].
func (s *Store) LoadCheckpoint(ctx context.Context, thread string) (int64, []byte, error) {
	if err := s.begin(ctx, "load the checkpoint of", thread); err != nil {
		return 0, nil, err
	}
	var pos int64
	var data []byte
	err := s.pool.QueryRow(ctx, s.q.load, s.tenant, []byte(thread)).Scan(&pos, &data)
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
	if err := s.begin(ctx, "trim", thread); err != nil {
		return err
	}
	if _, err := s.pool.Exec(ctx, s.q.trim, s.tenant, []byte(thread), before); err != nil {
		return wrap("trim", thread, err)
	}
	return nil
}

// Lease implements [relay.Store.Lease] with one upsert of the thread's row
// that takes the lease only when it is free, expired or the holder's.
func (s *Store) Lease(ctx context.Context, thread, holder, run string, ttl time.Duration) error {
	if err := s.begin(ctx, "lease", thread); err != nil {
		return err
	}
	var stopped bool
	err := s.pool.QueryRow(ctx, s.q.lease, s.tenant, []byte(thread), []byte(holder), max(ttl.Milliseconds(), 1), []byte(run)).Scan(&stopped)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("%w: thread %q", relay.ErrLeased, thread)
	case err != nil:
		return wrap("lease", thread, err)
	case stopped:
		return fmt.Errorf("%w: thread %q", relay.ErrStopped, thread)
	}
	return nil
}

// Release implements [relay.Store.Release].
func (s *Store) Release(ctx context.Context, thread, holder string) error {
	if err := s.begin(ctx, "release the lease of", thread); err != nil {
		return err
	}
	if _, err := s.pool.Exec(ctx, s.q.release, s.tenant, []byte(thread), []byte(holder)); err != nil {
		return wrap("release the lease of", thread, err)
	}
	return nil
}

// Stop implements [relay.Store.Stop].
func (s *Store) Stop(ctx context.Context, thread string) error {
	if err := s.begin(ctx, "stop", thread); err != nil {
		return err
	}
	var one int
	err := s.pool.QueryRow(ctx, s.q.stop, s.tenant, []byte(thread)).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%w: thread %q", relay.ErrNotLeased, thread)
	}
	if err != nil {
		return wrap("stop", thread, err)
	}
	return nil
}

// Threads implements [relay.Store.Threads] with one query of the threads
// table. A cursor is the last thread listed: the time of its last append,
// in microseconds, then its id, in unpadded base64url.
func (s *Store) Threads(ctx context.Context, cursor string, limit int) ([]relay.ThreadInfo, string, error) {
	fail := func(err error) ([]relay.ThreadInfo, string, error) {
		return nil, "", fmt.Errorf("aguistate: postgres: list threads: %w", err)
	}
	if s.err != nil {
		return fail(s.err)
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	limit = min(max(limit, 1), relay.MaxThreadsPage)
	var rows pgx.Rows
	var err error
	if cursor == "" {
		rows, err = s.pool.Query(ctx, s.q.list, s.tenant, limit+1)
	} else {
		b, derr := base64.RawURLEncoding.DecodeString(cursor)
		if derr != nil || len(b) < 8 {
			return nil, "", fmt.Errorf("%w: %q", relay.ErrBadCursor, cursor)
		}
		at := time.UnixMicro(int64(binary.BigEndian.Uint64(b)))
		rows, err = s.pool.Query(ctx, s.q.listAfter, s.tenant, limit+1, at, b[8:])
	}
	if err != nil {
		return fail(err)
	}
	page, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (relay.ThreadInfo, error) {
		var info relay.ThreadInfo
		var id, run []byte
		err := row.Scan(&id, &info.UpdatedAt, &info.Events, &run, &info.Running)
		info.ID, info.LastRunID = string(id), string(run)
		return info, err
	})
	if err != nil {
		return fail(err)
	}
	if len(page) <= limit {
		return page, "", nil
	}
	last := page[limit-1]
	next := binary.BigEndian.AppendUint64(nil, uint64(last.UpdatedAt.UnixMicro()))
	return page[:limit], base64.RawURLEncoding.EncodeToString(append(next, last.ID...)), nil
}

// Delete implements [relay.Store.Delete] with its statements in one
// transaction, which notifies the thread's followers.
func (s *Store) Delete(ctx context.Context, thread string) error {
	if err := s.begin(ctx, "delete", thread); err != nil {
		return err
	}
	b := &pgx.Batch{}
	for _, sql := range s.q.delete {
		b.Queue(sql, s.tenant, []byte(thread))
	}
	b.Queue("SELECT pg_notify($1, $2)", s.t.channel, s.key(thread))
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return wrap("delete", thread, err)
	}
	return nil
}

func (s *Store) pager(thread string) pager {
	return pager{s: s, thread: thread, key: s.key(thread)}
}

// pager reads one thread's log for relay.Scan.
type pager struct {
	s      *Store
	thread string
	key    string // the thread's notification payload
}

func (p pager) Page(ctx context.Context, from int64, n int) ([]relay.Entry, error) {
	if err := p.s.begin(ctx, "read", p.thread); err != nil {
		return nil, err
	}
	rows, err := p.s.pool.Query(ctx, p.s.q.page, p.s.tenant, []byte(p.thread), from, n)
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
		// With no new entry, the thread may be gone: deleted before the
		// follower registered, or since.
		var last int64
		if err := p.s.pool.QueryRow(ctx, p.s.q.last, p.s.tenant, []byte(p.thread)).Scan(&last); err != nil {
			return nil, wrap("follow", p.thread, err)
		}
		if last < after {
			return nil, &relay.RangeError{Thread: p.thread, After: after}
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
