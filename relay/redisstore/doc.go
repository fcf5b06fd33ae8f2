// Package redisstore keeps AG-UI thread logs and checkpoints in Redis, as a
// [relay.Store] that several replicas share.
//
// Use [New] with a go-redis client. Each thread has two keys, named by
// [Options].Prefix and the thread id: a stream, the log, whose entry ids
// are the events' positions ("POS-0", the event in field "e"), and a hash
// with the checkpoint (fields "pos" and "data"); a third, a string that
// expires, holds its lease ([relay.Leaser]). Appends, checkpoints, trims
// and leases run as Lua scripts, so each check and the write it guards are
// atomic. An append also publishes the log's key on the channel
// PREFIX+"appended"; each Store subscribes to it and wakes the thread's
// followers, which read the stream with XRANGE: every replica following a
// thread sees each append, whichever replica made it. The keys of a thread
// share a hash tag that is never empty, "{THREAD}" (up to the id's first
// "}"), or "{CRC}" for an id that is empty or begins with "}", so the store
// works on a Redis Cluster too, for any thread id and a prefix without
// braces; there PUBLISH reaches every node, so one subscription hears the
// appends to every slot.
//
// # Errors
//
// A server that cannot be reached is an error wrapping the driver's,
// beginning "aguistate: redis:". An append cut off in the middle has
// written all its events or none; read the log to know which.
//
// # Connections
//
// Every call, Follow's reads included, borrows a connection of the
// client's pool for one command and gives it back: a Follow that waits
// holds none, and ends as soon as its context does. The subscription is
// one more connection, outside the pool (go-redis's pub/sub connections),
// opened by the first Follow that waits and kept until [Store.Close]; a
// subscription lost is made again, and wakes every follower so that none
// misses an append. A follower also reads its log every 5 s, whatever it
// hears. The server must let the client's user publish and subscribe to
// the channel (with an ACL, "&PREFIX*" or "allchannels"): an append that
// cannot publish fails and writes nothing.
package redisstore
