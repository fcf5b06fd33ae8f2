// The Lua scripts that append at an expected position (and notify followers), save a
// checkpoint, trim, lease, stop and delete, each atomically.

package redisstore

import "github.com/redis/go-redis/v9"

// The scripts run atomically in Redis, so that each check and the write it
// guards are one step. KEYS are a thread's keys, as Store.keys returns
// them: KEYS[1] its log, a stream whose entry ids are "POS-0" with the
// event in field "e"; KEYS[2] its checkpoint, a hash with fields "pos" and
// "data"; KEYS[3] its lease, the holder; KEYS[4] its stop, the holder
// asked to stop; KEYS[5] its last run id. Trim never removes a log's last
// entry, so the newest entry gives the log's last position. The scripts
// that refresh the thread's expiry take the store's TTL in milliseconds (0
// for none) as ARGV[1].
const lastPosition = `
local function last(log)
  local top = redis.call('XREVRANGE', log, '+', '-', 'COUNT', 1)
  if #top == 0 then return 0 end
  return tonumber(string.match(top[1][1], '^%d+'))
end
`

// refresh makes the thread's log, checkpoint and last run id expire after
// the TTL ttl, or with its lease when that lasts longer. The lease and the
// stop expire on their own.
const refresh = `
local function refresh(ttl)
  if ttl == 0 then return end
  local keep = math.max(ttl, redis.call('PTTL', KEYS[3]))
  for _, k in ipairs({KEYS[1], KEYS[2], KEYS[5]}) do redis.call('PEXPIRE', k, keep) end
end
`

// appendScript appends ARGV[4], ARGV[5], ... at positions ARGV[2], ... if
// the log ends at ARGV[2]-1, publishes the log's key on channel ARGV[3],
// and refreshes the thread's expiry. It returns {1, last} after appending,
// {0, last} when the position conflicts. It publishes first, so that a
// server that refuses (an ACL without the channel) refuses the append
// whole; no follower reads the log before the script ends, so none misses
// the events.
var appendScript = redis.NewScript(lastPosition + refresh + `
local pos = tonumber(ARGV[2])
local n = last(KEYS[1])
if pos ~= n + 1 then return {0, n} end
redis.call('PUBLISH', ARGV[3], KEYS[1])
for i = 4, #ARGV do
  redis.call('XADD', KEYS[1], string.format('%d-0', pos + i - 4), 'e', ARGV[i])
end
refresh(tonumber(ARGV[1]))
return {1, pos + #ARGV - 4}
`)

// saveScript stores ARGV[3] as the checkpoint at position ARGV[2], unless
// the one held is at a later position, and refreshes the thread's expiry.
// It returns {1, last}, or {0, last} when the position is outside the log.
var saveScript = redis.NewScript(lastPosition + refresh + `
local pos = tonumber(ARGV[2])
local n = last(KEYS[1])
if pos < 0 or pos > n then return {0, n} end
local held = redis.call('HGET', KEYS[2], 'pos')
if not held or tonumber(held) <= pos then
  redis.call('HSET', KEYS[2], 'pos', ARGV[2], 'data', ARGV[3])
end
refresh(tonumber(ARGV[1]))
return {1, n}
`)

// trimScript removes the log's entries before position ARGV[1] and before
// the checkpoint's position; none without a checkpoint.
var trimScript = redis.NewScript(`
local held = redis.call('HGET', KEYS[2], 'pos')
if not held then return 0 end
local upto = math.min(tonumber(ARGV[1]), tonumber(held))
if upto <= 1 then return 0 end
return redis.call('XTRIM', KEYS[1], 'MINID', string.format('%d', upto))
`)

// leaseScript gives the lease to holder ARGV[2] for ARGV[3] milliseconds,
// when it is free (absent or expired: Redis removes an expired key) or the
// holder's, keeps a non-empty run id ARGV[4], and refreshes the thread's
// expiry. It returns 1 when it did, 2 when it did and cleared a stop asked
// of the holder, 0 otherwise.
var leaseScript = redis.NewScript(refresh + `
local held = redis.call('GET', KEYS[3])
if held and held ~= ARGV[2] then return 0 end
local stopped = held and redis.call('GET', KEYS[4]) == ARGV[2]
redis.call('SET', KEYS[3], ARGV[2], 'PX', ARGV[3])
redis.call('DEL', KEYS[4])
if ARGV[4] ~= '' then redis.call('SET', KEYS[5], ARGV[4]) end
refresh(tonumber(ARGV[1]))
if stopped then return 2 end
return 1
`)

// releaseScript removes the lease, and the stop asked of it, if holder
// ARGV[1] has it.
var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[3]) == ARGV[1] then redis.call('DEL', KEYS[3], KEYS[4]) end
return 0
`)

// stopScript asks the lease's holder to stop: the stop names the holder
// and expires with the lease. It returns 1, or 0 when nobody holds it.
var stopScript = redis.NewScript(`
local held = redis.call('GET', KEYS[3])
local ttl = redis.call('PTTL', KEYS[3])
if not held or ttl <= 0 then return 0 end
redis.call('SET', KEYS[4], held, 'PX', ttl)
return 1
`)

// The listing scripts take a tenant's listing keys, as Store.indexKeys
// returns them: KEYS[1] its threads scored by their last append (in
// microseconds), KEYS[2] the time (in milliseconds) at which their keys
// expire, when the store has a TTL. extend moves thread id's expiry to
// keep milliseconds from now, unless it is later, and makes both keys
// expire a second after the last of their threads: a tenant's listing
// goes once its threads have. clean removes from both up to 16 threads
// whose keys have expired, a second late for the clocks of a cluster.
const expiry = `
local function clock()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local function extend(id, keep, now)
  if keep == 0 then return end
  local at = math.floor(now / 1000) + keep
  local held = redis.call('ZSCORE', KEYS[2], id)
  if not held or tonumber(held) < at then redis.call('ZADD', KEYS[2], string.format('%.0f', at), id) end
  for _, k in ipairs(KEYS) do
    if redis.call('PTTL', k) < keep + 1000 then redis.call('PEXPIRE', k, keep + 1000) end
  end
end
local function clean(now)
  local gone = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', string.format('%.0f', math.floor(now / 1000) - 1000), 'LIMIT', 0, 16)
  if #gone == 0 then return end
  redis.call('ZREM', KEYS[1], unpack(gone))
  redis.call('ZREM', KEYS[2], unpack(gone))
end
`

// touchScript lists thread ARGV[1] in the listing at the server's time in
// microseconds, or just after the newest entry when that is later, so that
// no two entries share a score: a score is a cursor. With the store's TTL
// ARGV[2] (milliseconds; 0 for none), it extends the thread's expiry and
// cleans the listing. It returns the score.
var touchScript = redis.NewScript(expiry + `
local now = clock()
local score = now
local top = redis.call('ZREVRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if #top > 0 and tonumber(top[2]) >= score then score = tonumber(top[2]) + 1 end
redis.call('ZADD', KEYS[1], string.format('%.0f', score), ARGV[1])
local ttl = tonumber(ARGV[2])
if ttl > 0 then
  extend(ARGV[1], ttl, now)
  clean(now)
end
return score
`)

// extendScript extends thread ARGV[1]'s expiry to ARGV[2] milliseconds
// from now, as a checkpoint or a lease does, and cleans the listing.
var extendScript = redis.NewScript(expiry + `
local now = clock()
extend(ARGV[1], tonumber(ARGV[2]), now)
clean(now)
return 0
`)

// infoScript returns what the listing shows of a thread: {last, run,
// leased}, last being 0 for a thread with no log.
var infoScript = redis.NewScript(lastPosition + `
local run = redis.call('GET', KEYS[5]) or ''
return {last(KEYS[1]), run, redis.call('EXISTS', KEYS[3])}
`)

// deleteScript removes every key of a thread and publishes its log's key
// on channel ARGV[1], which wakes its followers.
var deleteScript = redis.NewScript(`
redis.call('PUBLISH', ARGV[1], KEYS[1])
return redis.call('DEL', unpack(KEYS))
`)

// unlistScript removes thread ARGV[1] from the listing, if its score is at
// most ARGV[2]: an entry that a later append moved on stays.
var unlistScript = redis.NewScript(`
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) <= tonumber(ARGV[2]) then
  redis.call('ZREM', KEYS[1], ARGV[1])
  if KEYS[2] then redis.call('ZREM', KEYS[2], ARGV[1]) end
end
return 0
`)
