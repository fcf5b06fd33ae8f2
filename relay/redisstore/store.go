// Store: the relay.Store on a Redis Stream per thread, with a checkpoint key beside it.

package redisstore

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"hash/crc32"
	"iter"
	"strconv"
	"strings"
	"time"

	"github.com/aguistate/aguistate/relay"
	"github.com/redis/go-redis/v9"
)

// block is the longest one XREAD waits in Follow, and so the longest a
// follow goes on after its context is cancelled: the driver does not
// interrupt a blocked read.
const block = time.Second

// Options configures a [Store]. A nil *Options means the defaults.
type Options struct {
	// Prefix begins every key the store writes. Stores with different
	// prefixes share nothing. Default "aguistate:".
	Prefix string

	// TTL is how long a thread whose log does not grow is kept: each
	// append, checkpoint and lease sets its keys to expire after TTL, or
	// with its lease when that lasts longer, and Redis removes them then.
	// Keys that a store with a TTL wrote keep their expiry. 0 (the default)
	// sets no expiry. Milliseconds are its unit.
	TTL time.Duration
}

// Store is a [relay.Store] in Redis. It is safe for concurrent use, by any
// number of processes on one server.
type Store struct {
	rdb    redis.UniversalClient
	prefix string
	ttl    int64  // milliseconds, 0 for none
	root   *Store // tenant ""

	tenant string
	home   string // what the keys of the tenant's threads begin with
	err    error  // not nil for a tenant whose name is too long: every call returns it
}

// New returns a Store that keeps its threads in the Redis server (or
// cluster) that rdb reaches, configured by opts. It sends nothing until
// used. The caller keeps rdb and closes it after the last use of the Store.
func New(rdb redis.UniversalClient, opts *Options) *Store {
	s := &Store{rdb: rdb, prefix: "aguistate:"}
	if opts != nil && opts.Prefix != "" {
		s.prefix = opts.Prefix
	}
	if opts != nil && opts.TTL > 0 {
		s.ttl = max(opts.TTL.Milliseconds(), 1)
	}
	s.root, s.home = s, s.prefix
	return s
}

// Tenant implements [relay.Store.Tenant]. A tenant's keys begin with
// PREFIX@TENANT: (the name in unpadded base64url), tenant ""'s with PREFIX.
func (s *Store) Tenant(name string) relay.Store {
	if name == "" {
		return s.root
	}
	t := &Store{rdb: s.rdb, prefix: s.prefix, ttl: s.ttl, root: s.root, tenant: name,
		home: s.prefix + "@" + base64.RawURLEncoding.EncodeToString([]byte(name)) + ":"}
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

// The keys of a thread, in the order keys returns them: every script gets
// them all.
const (
	logKey   = iota // a stream whose entry ids are "POS-0", the event in field "e"
	cpKey           // a hash with the checkpoint: fields "pos" and "data"
	leaseKey        // a string, the lease's holder, that expires with the lease
	stopKey         // a string, the holder asked to stop, that expires with the lease
	runKey          // a string, the last run id given with a lease
)

// keys returns the keys of a thread (see logKey), which share a hash slot
// in a cluster, so that a script may use them all.
func (s *Store) keys(thread string) []string {
	k := s.base(thread)
	return []string{k + ":log", k + ":cp", k + ":lease", k + ":stop", k + ":run"}
}

// indexKeys returns the keys of the tenant's listing, sorted sets of its
// thread ids, PREFIX~index{@TENANT}:threads scored by the time of their
// last append (in microseconds, made unique) and, with a TTL,
// PREFIX~index{@TENANT}:expiry scored by the time their keys expire (in
// milliseconds); the tenant's name is in unpadded base64url. Their hash tag
// is the tenant's, so they share a slot; no thread's key begins with
// PREFIX~i.
func (s *Store) indexKeys() []string {
	k := s.prefix + "~index{@" + base64.RawURLEncoding.EncodeToString([]byte(s.tenant)) + "}"
	return []string{k + ":threads", k + ":expiry"}
}

// base returns what a thread's keys begin with: HOME{THREAD}, whose hash tag
// (up to the first "}") is not empty, so that the keys share a slot; HOME
// is the prefix, and the tenant's name but for tenant "". A thread id that
// is empty or begins with "}" would leave the tag empty; such an id's keys
// begin HOME~{CRC}THREAD instead, CRC being the id's CRC-32 in 8 hex
// digits. After the prefix, a tenant's keys go on with "@", tenant ""'s
// with "{" or "~", so that no two tenants share a key.
func (s *Store) base(thread string) string {
	if thread == "" || thread[0] == '}' {
		return fmt.Sprintf("%s~{%08x}%s", s.home, crc32.ChecksumIEEE([]byte(thread)), thread)
	}
	return s.home + "{" + thread + "}"
}

// Append implements [relay.Store.Append] with a script that checks the
// log's last position and adds the events with XADD, and one that lists the
// thread at the front of its tenant's listing, in one round trip. The
// listing is in another hash slot than the thread's keys, so the two are
// not one atomic step (see Threads).
func (s *Store) Append(ctx context.Context, thread string, pos int64, events ...[]byte) error {
	if err := s.begin(ctx, "append to", thread); err != nil {
		return err
	}
	if len(events) == 0 {
		return nil
	}
	args := make([]any, 0, 2+len(events))
	args = append(args, s.ttl, pos)
	for _, e := range events {
		args = append(args, e)
	}
	appended := &call{script: appendScript, keys: s.keys(thread), args: args}
	listed := &call{script: touchScript, keys: s.indexKeys(), args: []any{thread, s.ttl}}
	s.eval(ctx, appended, listed)
	ok, last, err := result(appended.cmd)
	if err == nil {
		err = listed.cmd.Err()
	}
	if err != nil {
		return wrap("append to", thread, err)
	}
	if !ok {
		return &relay.ConflictError{Thread: thread, Pos: pos, Last: last}
	}
	return nil
}

// Read implements [relay.Store.Read] with XRANGE.
func (s *Store) Read(ctx context.Context, thread string, after int64) iter.Seq2[relay.Entry, error] {
	return relay.Scan(ctx, thread, after, pager{s, thread}, false)
}

// Follow implements [relay.Store.Follow] with XRANGE for the backlog, then
// XREAD BLOCK from the last entry read: stream ids are positions, so no
// entry is missed or repeated between the two.
func (s *Store) Follow(ctx context.Context, thread string, after int64) iter.Seq2[relay.Entry, error] {
	return relay.Scan(ctx, thread, after, pager{s, thread}, true)
}

// SaveCheckpoint implements [relay.Store.SaveCheckpoint].
func (s *Store) SaveCheckpoint(ctx context.Context, thread string, pos int64, data []byte) error {
	if err := s.begin(ctx, "save the checkpoint of", thread); err != nil {
		return err
	}
	saved := &call{script: saveScript, keys: s.keys(thread), args: []any{s.ttl, pos, data}}
	s.eval(ctx, saved, s.extend(thread, s.ttl))
	ok, last, err := result(saved.cmd)
	if err != nil {
		return wrap("save the checkpoint of", thread, err)
	}
	if !ok {
		return &relay.ConflictError{Thread: thread, Pos: pos, Last: last}
	}
	return nil
}

// LoadCheckpoint implements [relay.Store.LoadCheckpoint].
func (s *Store) LoadCheckpoint(ctx context.Context, thread string) (int64, []byte, error) {
	if err := s.begin(ctx, "load the checkpoint of", thread); err != nil {
		return 0, nil, err
	}
	vals, err := s.rdb.HMGet(ctx, s.keys(thread)[cpKey], "pos", "data").Result()
	if err != nil {
		return 0, nil, wrap("load the checkpoint of", thread, err)
	}
	posText, ok1 := vals[0].(string)
	data, ok2 := vals[1].(string)
	if !ok1 || !ok2 {
		return 0, nil, fmt.Errorf("%w: thread %q", relay.ErrNoCheckpoint, thread)
	}
	pos, err := strconv.ParseInt(posText, 10, 64)
	if err != nil {
		return 0, nil, wrap("load the checkpoint of", thread, err)
	}
	return pos, []byte(data), nil
}

// Trim implements [relay.Store.Trim] with XTRIM MINID.
func (s *Store) Trim(ctx context.Context, thread string, before int64) error {
	if err := s.begin(ctx, "trim", thread); err != nil {
		return err
	}
	if err := trimScript.Run(ctx, s.rdb, s.keys(thread), before).Err(); err != nil {
		return wrap("trim", thread, err)
	}
	return nil
}

// Lease implements [relay.Store.Lease] with a script: SET PX when the
// lease is absent or the holder's. Redis measures the expiry.
func (s *Store) Lease(ctx context.Context, thread, holder, run string, ttl time.Duration) error {
	if err := s.begin(ctx, "lease", thread); err != nil {
		return err
	}
	ms := max(ttl.Milliseconds(), 1)
	leased := &call{script: leaseScript, keys: s.keys(thread), args: []any{s.ttl, holder, ms, run}}
	s.eval(ctx, leased, s.extend(thread, max(s.ttl, ms)))
	res, err := leased.cmd.Int()
	switch {
	case err != nil:
		return wrap("lease", thread, err)
	case res == 0:
		return fmt.Errorf("%w: thread %q", relay.ErrLeased, thread)
	case res == 2:
		return fmt.Errorf("%w: thread %q", relay.ErrStopped, thread)
	}
	return nil
}

// extend returns the call that extends thread's expiry in its tenant's
// listing to keep milliseconds from now, or nil when the store has no
// TTL. Its failure is not the caller's: the listing may then drop the
// thread early, until its next append.
func (s *Store) extend(thread string, keep int64) *call {
	if s.ttl == 0 {
		return nil
	}
	return &call{script: extendScript, keys: s.indexKeys(), args: []any{thread, keep}}
}

// Release implements [relay.Store.Release].
func (s *Store) Release(ctx context.Context, thread, holder string) error {
	if err := s.begin(ctx, "release the lease of", thread); err != nil {
		return err
	}
	if err := releaseScript.Run(ctx, s.rdb, s.keys(thread), holder).Err(); err != nil && !errors.Is(err, redis.Nil) {
		return wrap("release the lease of", thread, err)
	}
	return nil
}

// Stop implements [relay.Store.Stop] with a script that names the holder
// in a key that expires with the lease.
func (s *Store) Stop(ctx context.Context, thread string) error {
	if err := s.begin(ctx, "stop", thread); err != nil {
		return err
	}
	ok, err := stopScript.Run(ctx, s.rdb, s.keys(thread)).Int()
	if err != nil {
		return wrap("stop", thread, err)
	}
	if ok != 1 {
		return fmt.Errorf("%w: thread %q", relay.ErrNotLeased, thread)
	}
	return nil
}

// pager reads one thread's log for relay.Scan.
type pager struct {
	s      *Store
	thread string
}

func (p pager) Page(ctx context.Context, from int64, n int) ([]relay.Entry, error) {
	if err := p.s.begin(ctx, "read", p.thread); err != nil {
		return nil, err
	}
	msgs, err := p.s.rdb.XRangeN(ctx, p.s.keys(p.thread)[logKey], strconv.FormatInt(from, 10), "+", int64(n)).Result()
	if err != nil {
		return nil, wrap("read", p.thread, err)
	}
	return p.entries(msgs)
}

func (p pager) Wait(ctx context.Context, after int64, n int) ([]relay.Entry, error) {
	if err := p.s.begin(ctx, "follow", p.thread); err != nil {
		return nil, err
	}
	wait := block
	if d, ok := ctx.Deadline(); ok {
		wait = max(min(wait, time.Until(d)), time.Millisecond) // BLOCK 0 would wait forever
	}
	log := p.s.keys(p.thread)[logKey]
	streams, err := p.s.rdb.XRead(ctx, &redis.XReadArgs{
		Streams: []string{log, strconv.FormatInt(after, 10)},
		Count:   int64(n),
		Block:   wait,
	}).Result()
	if errors.Is(err, redis.Nil) { // nothing new in time: the thread may be gone
		return nil, p.gone(ctx, log, after)
	}
	if err != nil {
		return nil, wrap("follow", p.thread, err)
	}
	return p.entries(streams[0].Messages)
}

// gone returns a *relay.RangeError when the log ends before after: the
// thread was deleted (or expired) meanwhile.
func (p pager) gone(ctx context.Context, log string, after int64) error {
	top, err := p.s.rdb.XRevRangeN(ctx, log, "+", "-", 1).Result()
	if err != nil {
		return wrap("follow", p.thread, err)
	}
	last := int64(0)
	if len(top) > 0 {
		es, err := p.entries(top)
		if err != nil {
			return err
		}
		last = es[0].Pos
	}
	if last < after {
		return &relay.RangeError{Thread: p.thread, After: after}
	}
	return nil
}

// entries converts stream entries to log entries.
func (p pager) entries(msgs []redis.XMessage) ([]relay.Entry, error) {
	es := make([]relay.Entry, len(msgs))
	for i, m := range msgs {
		ms, _, _ := strings.Cut(m.ID, "-")
		pos, err := strconv.ParseInt(ms, 10, 64)
		event, ok := m.Values["e"].(string)
		if err != nil || !ok {
			return nil, fmt.Errorf("aguistate: redis: read thread %q: entry %s is not one of ours", p.thread, m.ID)
		}
		es[i] = relay.Entry{Pos: pos, Event: []byte(event)}
	}
	return es, nil
}

// result reads a script's {ok, last} reply.
func result(cmd *redis.Cmd) (ok bool, last int64, err error) {
	vals, err := cmd.Int64Slice()
	if err != nil {
		return false, 0, err
	}
	if len(vals) != 2 {
		return false, 0, fmt.Errorf("script returned %v", vals)
	}
	return vals[0] == 1, vals[1], nil
}

func wrap(op, thread string, err error) error {
	return fmt.Errorf("aguistate: redis: %s thread %q: %w", op, thread, err)
}
