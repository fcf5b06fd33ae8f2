// What the tests reach inside the package: the hub's timing and tallies.

package redisstore

import "time"

// SetTiming sets the longest that s's followers wait without reading their
// logs (poll) and how long its subscription stays silent before a ping,
// so that a test can tell a notification from the poll, and see pings.
// Call it before the first Follow.
func SetTiming(s *Store, poll, ping time.Duration) { s.hub.poll, s.hub.ping = poll, ping }

// Heard returns how many times s's subscription was confirmed and how many
// wakes its hub delivered to followers (a wake merged into one not yet
// taken is not counted): each wake costs its follower one read of its log
// and, when that finds nothing, one more to see whether the thread is gone.
func Heard(s *Store) (subscriptions, wakes int) {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	return s.hub.heard, s.hub.wakes
}
