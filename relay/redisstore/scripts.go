// The Lua scripts that append at an expected position (and notify followers), save a
// checkpoint and trim, each atomically.

package redisstore

import "github.com/redis/go-redis/v9"

// The scripts run atomically in Redis, so that each check and the write it
// guards are one step. KEYS[1] is a thread's log, a stream whose entry ids
// are "POS-0" with the event in field "e"; KEYS[2] is its checkpoint, a
// hash with fields "pos" and "data". Trim never removes a log's last entry,
// so the newest entry gives the log's last position.
const lastPosition = `
local function last(log)
  local top = redis.call('XREVRANGE', log, '+', '-', 'COUNT', 1)
  if #top == 0 then return 0 end
  return tonumber(string.match(top[1][1], '^%d+'))
end
`

// appendScript appends ARGV[3], ARGV[4], ... at positions ARGV[1], ... if
// the log ends at ARGV[1]-1, and publishes the log's key on channel
// ARGV[2]. It returns {1, last} after appending, {0, last} when the
// position conflicts. It publishes first, so that a server that refuses
// (an ACL without the channel) refuses the append whole; no follower reads
// the log before the script ends, so none misses the events.
var appendScript = redis.NewScript(lastPosition + `
local pos = tonumber(ARGV[1])
local n = last(KEYS[1])
if pos ~= n + 1 then return {0, n} end
redis.call('PUBLISH', ARGV[2], KEYS[1])
for i = 3, #ARGV do
  redis.call('XADD', KEYS[1], string.format('%d-0', pos + i - 3), 'e', ARGV[i])
end
return {1, pos + #ARGV - 3}
`)

// saveScript stores ARGV[2] as the checkpoint at position ARGV[1], unless
// the one held is at a later position. It returns {1, last}, or {0, last}
// when the position is outside the log.
var saveScript = redis.NewScript(lastPosition + `
local pos = tonumber(ARGV[1])
local n = last(KEYS[1])
if pos < 0 or pos > n then return {0, n} end
local held = redis.call('HGET', KEYS[2], 'pos')
if not held or tonumber(held) <= pos then
  redis.call('HSET', KEYS[2], 'pos', ARGV[1], 'data', ARGV[2])
end
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

// leaseScript gives the lease KEYS[1] to holder ARGV[1] for ARGV[2]
// milliseconds, when it is free (absent or expired: Redis removes an
// expired key) or the holder's. It returns 1 when it did, 0 otherwise.
var leaseScript = redis.NewScript(`
local held = redis.call('GET', KEYS[1])
if held and held ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
`)

// releaseScript removes the lease KEYS[1] if holder ARGV[1] has it.
var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0
`)
