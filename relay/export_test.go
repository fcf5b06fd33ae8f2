// Hooks for the tests of package relay_test.

package relay

import "time"

// SetKeepAlive sets the interval of r's keep-alive comments, before r
// serves anything.
func SetKeepAlive(r *Relay, d time.Duration) { r.keepAlive = d }
