// Store: the relay.Store on a Redis Stream per thread, with a checkpoint key beside it.

package redisstore

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"iter"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/aguistate/aguistate/relay"
	"github.com/redis/go-redis/v9"
)

// Options configures a [Store]. A nil *Options means the defaults.
type Options struct {
	// Prefix begins every key the store writes, and names the channel its
	// appends are published on (PREFIX + "appended"). Stores with
	// different prefixes share nothing. Default "aguistate:".
	Prefix string

	// Logger, when not nil, receives a record at level Warn each time the
	// subscription that wakes followers fails (the store subscribes again).
	Logger *slog.Logger
}

// Store is a [relay.Store] and a [relay.Leaser] in Redis. It is safe for
// concurrent use, by any number of processes on one server. Call Close
// when done with it.
type Store struct {
	rdb    redis.UniversalClient
	prefix string
	hub    *hub
}

// New returns a Store that keeps its threads in the Redis server (or
// cluster) that rdb reaches, configured by opts. It sends nothing until
// used; its first Follow that waits opens one more connection, outside the
// client's pool, to subscribe. The caller keeps rdb and closes it after
// Close.
func New(rdb redis.UniversalClient, opts *Options) *Store {
	s := &Store{rdb: rdb, prefix: "aguistate:"}
	logger := slog.New(slog.DiscardHandler)
	if opts != nil && opts.Prefix != "" {
		s.prefix = opts.Prefix
	}
	if opts != nil && opts.Logger != nil {
		logger = opts.Logger
	}
	s.hub = newHub(rdb, s.prefix+"appended", logger)
	return s
}

// Close stops the subscription that wakes followers: follows that wait,
// and later ones, end with an error. It does not close the client; close
// that after Close.
func (s *Store) Close() {
	s.hub.close()
}

// keys returns the keys of a thread's log and checkpoint, which share a
// hash slot in a cluster, so that a script may use both.
func (s *Store) keys(thread string) []string {
	k := s.base(thread)
	return []string{k + ":log", k + ":cp"}
}

// leaseKey returns the key of a thread's lease, a string holding the
// holder that expires with the lease.
func (s *Store) leaseKey(thread string) []string {
	return []string{s.base(thread) + ":lease"}
}

// base returns what a thread's keys begin with: PREFIX{THREAD}, whose hash
// tag (up to the first "}") is not empty, so that the keys share a slot.
// A thread id that is empty or begins with "}" would leave it empty; such
// an id's keys begin PREFIX~{CRC}THREAD instead, CRC being the id's
// CRC-32 in 8 hex digits.
func (s *Store) base(thread string) string {
	if thread == "" || thread[0] == '}' {
		return fmt.Sprintf("%s~{%08x}%s", s.prefix, crc32.ChecksumIEEE([]byte(thread)), thread)
	}
	return s.prefix + "{" + thread + "}"
}

// Append implements [relay.Store.Append] with a script that checks the
// log's last position, adds the events with XADD and publishes the log's
// key on the store's channel.
func (s *Store) Append(ctx context.Context, thread string, pos int64, events ...[]byte) error {
	if err := ctx.Err(); err != nil {
		return wrap("append to", thread, err)
	}
	if len(events) == 0 {
		return nil
	}
	args := make([]any, 0, 2+len(events))
	args = append(args, pos, s.hub.channel)
	for _, e := range events {
		args = append(args, e)
	}
	ok, last, err := result(appendScript.Run(ctx, s.rdb, s.keys(thread), args...))
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

// Follow implements [relay.Store.Follow] with XRANGE, and between reads
// waits for the store's subscription to name the thread (or for 5 s),
// holding no connection of the client's pool. It registers
// for the thread's notifications before each read, so that an append its
// read misses wakes it.
func (s *Store) Follow(ctx context.Context, thread string, after int64) iter.Seq2[relay.Entry, error] {
	return relay.Scan(ctx, thread, after, pager{s, thread}, true)
}

// SaveCheckpoint implements [relay.Store.SaveCheckpoint].
func (s *Store) SaveCheckpoint(ctx context.Context, thread string, pos int64, data []byte) error {
	if err := ctx.Err(); err != nil {
		return wrap("save the checkpoint of", thread, err)
	}
	ok, last, err := result(saveScript.Run(ctx, s.rdb, s.keys(thread), pos, data))
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
	if err := ctx.Err(); err != nil {
		return 0, nil, wrap("load the checkpoint of", thread, err)
	}
	vals, err := s.rdb.HMGet(ctx, s.keys(thread)[1], "pos", "data").Result()
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
	if err := ctx.Err(); err != nil {
		return wrap("trim", thread, err)
	}
	if err := trimScript.Run(ctx, s.rdb, s.keys(thread), before).Err(); err != nil {
		return wrap("trim", thread, err)
	}
	return nil
}

// Lease implements [relay.Leaser.Lease] with a script: SET PX when the key
// is absent or the holder's. Redis measures the expiry.
func (s *Store) Lease(ctx context.Context, thread, holder string, ttl time.Duration) error {
	if err := ctx.Err(); err != nil {
		return wrap("lease", thread, err)
	}
	ok, err := leaseScript.Run(ctx, s.rdb, s.leaseKey(thread), holder, max(ttl.Milliseconds(), 1)).Int()
	if err != nil {
		return wrap("lease", thread, err)
	}
	if ok != 1 {
		return fmt.Errorf("%w: thread %q", relay.ErrLeased, thread)
	}
	return nil
}

// Release implements [relay.Leaser.Release].
func (s *Store) Release(ctx context.Context, thread, holder string) error {
	if err := ctx.Err(); err != nil {
		return wrap("release the lease of", thread, err)
	}
	if err := releaseScript.Run(ctx, s.rdb, s.leaseKey(thread), holder).Err(); err != nil && !errors.Is(err, redis.Nil) {
		return wrap("release the lease of", thread, err)
	}
	return nil
}

// pager reads one thread's log for relay.Scan.
type pager struct {
	s      *Store
	thread string
}

func (p pager) Page(ctx context.Context, from int64, n int) ([]relay.Entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, wrap("read", p.thread, err)
	}
	msgs, err := p.s.rdb.XRangeN(ctx, p.s.keys(p.thread)[0], strconv.FormatInt(from, 10), "+", int64(n)).Result()
	if err != nil {
		return nil, wrap("read", p.thread, err)
	}
	return p.entries(msgs)
}

func (p pager) Wait(ctx context.Context, after int64, n int) ([]relay.Entry, error) {
	key := p.s.keys(p.thread)[0]
	ch := p.s.hub.register(key)
	if ch == nil {
		return nil, p.closed()
	}
	defer p.s.hub.unregister(key, ch)
	for {
		page, err := p.Page(ctx, after+1, n)
		if err != nil || len(page) > 0 {
			return page, err
		}
		select {
		case <-ch:
		case <-time.After(p.s.hub.poll):
		case <-p.s.hub.closed:
			return nil, p.closed()
		case <-ctx.Done():
			return nil, wrap("follow", p.thread, ctx.Err())
		}
	}
}

// closed returns the error of a follow on a closed Store.
func (p pager) closed() error {
	return fmt.Errorf("aguistate: redis: follow thread %q: the store is closed", p.thread)
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
