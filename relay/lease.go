// Leases: the optional store interface that tells a running relay from a lost one.

package relay

import (
	"context"
	"time"
)

// Leaser is implemented by a [Store] that also keeps leases: a thread's
// lease names the one holder (a relay) that runs the thread's current run,
// until it expires. The holder renews it while the run goes on; a relay
// that finds a run open and its lease free may end the run, since nobody
// runs it. The three stores of this module implement it.
//
// Expiry is measured by the store: the server's clock for a store that
// keeps threads in a server, so that holders' clocks do not matter.
type Leaser interface {
	// Lease takes the lease of thread for holder until ttl from now, when
	// no other holder has a lease of it that has not expired, and renews it
	// when holder has it. Otherwise it changes nothing and returns an error
	// wrapping [ErrLeased]. ttl is at least a millisecond.
	Lease(ctx context.Context, thread, holder string, ttl time.Duration) error

	// Release ends holder's lease of thread, if holder has it; it does
	// nothing otherwise.
	Release(ctx context.Context, thread, holder string) error
}
