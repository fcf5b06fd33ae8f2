// What the tests reach inside the package: the hub's timing.

package redisstore

import "time"

// SetTiming sets the longest that s's followers wait without reading their
// logs (poll) and how long its subscription stays silent before a ping,
// so that a test can tell a notification from the poll, and see pings.
// Call it before the first Follow.
func SetTiming(s *Store, poll, ping time.Duration) { s.hub.poll, s.hub.ping = poll, ping }
