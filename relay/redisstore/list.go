// The listing of a tenant's threads, a sorted set beside their keys, and Delete.

package redisstore

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aguistate/aguistate/relay"
	"github.com/redis/go-redis/v9"
)

// call is a script to run in a pipeline, and its result.
type call struct {
	script *redis.Script
	keys   []string
	args   []any
	cmd    *redis.Cmd
}

// eval runs calls in one pipeline, in order, and sets their cmd; it skips
// nil calls. A call that finds its script missing on the server (a new
// server, or one whose scripts were flushed) did nothing: it runs again,
// loading its script.
func (s *Store) eval(ctx context.Context, calls ...*call) {
	calls = slices.DeleteFunc(calls, func(c *call) bool { return c == nil })
	pipe := s.rdb.Pipeline()
	for _, c := range calls {
		c.cmd = c.script.EvalSha(ctx, pipe, c.keys, c.args...)
	}
	_, _ = pipe.Exec(ctx)
	for _, c := range calls {
		if err := c.cmd.Err(); err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") {
			c.cmd = c.script.Run(ctx, s.rdb, c.keys, c.args...)
		}
	}
}

// Threads implements [relay.Store.Threads] with ZREVRANGEBYSCORE on the
// tenant's listing, and a script per thread listed that reads its log's
// last position, last run and lease. A cursor is the score of the last
// thread listed, in base 36.
//
// An append and its listing are not one atomic step: they run in one
// round trip, but in two hash slots of a cluster. So a thread may be
// listed for a moment before its log has the append (or a refused append
// lists it anew), and a thread that is deleted or expires stays in the
// listing until Threads comes across it: Threads skips the entries of
// threads with no log, and removes them.
func (s *Store) Threads(ctx context.Context, cursor string, limit int) ([]relay.ThreadInfo, string, error) {
	fail := func(err error) ([]relay.ThreadInfo, string, error) {
		return nil, "", fmt.Errorf("aguistate: redis: list threads: %w", err)
	}
	if s.err != nil {
		return fail(s.err)
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	limit = min(max(limit, 1), relay.MaxThreadsPage)
	bound := "+inf"
	if cursor != "" {
		score, err := strconv.ParseInt(cursor, 36, 64)
		if err != nil || score <= 0 {
			return nil, "", fmt.Errorf("%w: %q", relay.ErrBadCursor, cursor)
		}
		bound = "(" + strconv.FormatInt(score, 10)
	}
	index := s.indexKeys()
	var page []relay.ThreadInfo
	var scores []int64
	for len(page) <= limit { // one more than limit tells whether a page follows
		want := limit + 1 - len(page)
		zs, err := s.rdb.ZRevRangeByScoreWithScores(ctx, index[0], &redis.ZRangeBy{
			Max: bound, Min: "-inf", Count: int64(want)}).Result()
		if err != nil {
			return fail(err)
		}
		infos := make([]*call, len(zs))
		for i, z := range zs {
			infos[i] = &call{script: infoScript, keys: s.keys(z.Member.(string))}
		}
		s.eval(ctx, infos...)
		var gone []*call
		for i, z := range zs {
			id, score := z.Member.(string), int64(z.Score)
			bound = "(" + strconv.FormatInt(score, 10)
			vals, err := infos[i].cmd.Slice()
			if err != nil {
				return fail(err)
			}
			last, _ := vals[0].(int64)
			if last == 0 {
				gone = append(gone, &call{script: unlistScript, keys: index, args: []any{id, score}})
				continue
			}
			run, _ := vals[1].(string)
			leased, _ := vals[2].(int64)
			page = append(page, relay.ThreadInfo{ID: id, UpdatedAt: time.UnixMicro(score), Events: last,
				LastRunID: run, Running: leased == 1})
			scores = append(scores, score)
		}
		s.eval(ctx, gone...) // best effort: a later listing removes what this one could not
		if len(zs) < want {
			break
		}
	}
	if len(page) <= limit {
		return page, "", nil
	}
	return page[:limit], strconv.FormatInt(scores[limit-1], 36), nil
}

// Delete implements [relay.Store.Delete]: it removes the thread's keys, and
// its listing entry in the same round trip. Its followers, which wait up to
// a second at a time, then find the log ended before their position.
func (s *Store) Delete(ctx context.Context, thread string) error {
	if err := s.begin(ctx, "delete", thread); err != nil {
		return err
	}
	deleted := &call{script: deleteScript, keys: s.keys(thread)}
	unlisted := &call{script: unlistScript, keys: s.indexKeys(), args: []any{thread, math.MaxInt64}}
	s.eval(ctx, deleted, unlisted)
	for _, c := range []*call{deleted, unlisted} {
		if err := c.cmd.Err(); err != nil {
			return wrap("delete", thread, err)
		}
	}
	return nil
}
