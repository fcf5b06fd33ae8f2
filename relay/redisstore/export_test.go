// What the tests reach inside the package: the poll that backs the subscription up.

package redisstore

import "time"

// SetPoll sets the longest that s's followers wait without reading their
// logs, so that a test can tell a notification from the poll.
func SetPoll(s *Store, d time.Duration) { s.hub.poll = d }
