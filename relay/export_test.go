// Hooks for the tests of package relay_test.

package relay

import "time"

// SetKeepAlive sets the interval of r's keep-alive comments, before r
// serves anything.
func SetKeepAlive(r *Relay, d time.Duration) { r.keepAlive = d }

// MemoryWaits reports whether a Follow of thread of m's tenant waits for
// its next append.
func MemoryWaits(m *Memory, thread string) bool {
	m.s.mu.Lock()
	defer m.s.mu.Unlock()
	t := m.s.threads[memKey{m.tenant, thread}]
	return t != nil && t.wake != nil
}
