// Package redisstore keeps AG-UI thread logs and checkpoints in Redis, as a
// [relay.Store] that several replicas share.
//
// Use [New] with a go-redis client. Each thread has keys named by
// [Options].Prefix, its tenant and the thread id: a stream, the log, whose
// entry ids are the events' positions ("POS-0", the event in field "e"); a
// hash with the checkpoint (fields "pos" and "data"); a string that
// expires, holding its lease's holder, and another beside it while a stop
// is asked; and a string with its last run id. Appends, checkpoints, trims,
// leases and stops run as Lua scripts, so each check and the write it
// guards are atomic. Follow reads the stream with XREAD BLOCK: every
// replica following a thread sees each append, whichever replica made it.
// The keys of a thread share a hash tag that is never empty, "{THREAD}" (up
// to the id's first "}"), or "{CRC}" for an id that is empty or begins with
// "}", so the store works on a Redis Cluster too, for any thread id and a
// prefix without braces. A tenant's keys begin PREFIX@TENANT: (the name in
// unpadded base64url); tenant ""'s keys are PREFIX{THREAD}:log and so on,
// as before tenants. Each tenant's threads are listed in a sorted set,
// scored by the time of their last append ([Store.Threads]). With a TTL
// ([Options].TTL), each append, checkpoint and lease sets the thread's keys
// to expire, and Redis removes them.
//
// # Errors
//
// A server that cannot be reached is an error wrapping the driver's,
// beginning "aguistate: redis:". An append cut off in the middle has
// written all its events or none; read the log to know which.
//
// # Concurrency
//
// Each Follow holds one of the client's connections while it waits, up to
// a second at a time, and notices a cancelled context within that second.
// Share one Follow per thread among the viewers of a process.
package redisstore
