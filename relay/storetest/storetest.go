// Package storetest holds the conformance tests that every [relay.Store]
// implementation passes, and the relay's scenarios on a store.
//
// Use [Store] from a test of the implementation for the store contract:
// compare-and-set appends, concurrent writers, reads, following,
// checkpoints, trimming, thread ids, replicas, context cancellation, a
// store that is down or cut off, leases and stops, tenants, the listing of
// threads, their deletion and their expiry. Use [Relay] for the relay's
// scenarios on the store: two relays running one thread at once, a relay
// killed mid-run whose viewers another relay serves and whose run it ends,
// a viewer on one relay following a run on another, a restart, a store
// that goes down, a store wrapped in a struct, listing and deleting threads
// through relays, a relay that drains. A store without a server,
// such as [relay.Memory], goes down through a wrapper that fails its
// calls. Use [Bench] and [BenchRelay] from benchmarks:
//
//	func TestStore(t *testing.T) { storetest.Store(t, harness) }
//	func TestRelay(t *testing.T) { storetest.Relay(t, harness) }
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"testing"
	"time"

	"github.com/aguistate/aguistate/relay"
	"github.com/stretchr/testify/require"
)

// Harness tells [Store], [Relay], [Bench] and [BenchRelay] how to open
// stores of one implementation.
type Harness struct {
	// Open returns a store on the namespace ns (a key prefix, a schema:
	// short, of lowercase letters, digits and underscores). Stores opened on
	// one namespace share their threads, as replicas on one server do; a new
	// namespace has none. The store reaches its server at addr (host:port),
	// or at its usual address when addr is "". Open registers with tb the
	// cleanup of the store and of the namespace.
	Open func(tb testing.TB, ns, addr string) relay.Store

	// Addr is the usual address of the store's server, or "" when the store
	// has none, such as [relay.Memory]: then the tests of a store that goes
	// down wrap it in a store that fails its calls, rather than cut its
	// connections.
	Addr string

	// Expiring returns a store on the namespace ns, as Open does, whose
	// threads expire after ttl (its TTL option), with whatever removes
	// them running often. Nil skips the tests of expiry.
	Expiring func(tb testing.TB, ns string, ttl time.Duration) relay.Store

	// Size returns measures of what the store holds for the namespace ns
	// (or, where it cannot tell, in all), by name: for [BenchChurn]. Nil
	// skips it.
	Size func(tb testing.TB, ns string) map[string]float64
}

// Store runs the store contract's tests on stores that h opens, each in
// its own namespace, in parallel subtests.
func Store(t *testing.T, h Harness) { run(t, h, storeTests) }

// Relay runs the relay's scenarios on stores that h opens, each in its own
// namespace, in parallel subtests.
func Relay(t *testing.T, h Harness) { run(t, h, relayTests) }

// test is a test of a store, named for its subtest.
type test struct {
	name string
	run  func(t *testing.T, h Harness)
}

func run(t *testing.T, h Harness, tests []test) {
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t, h)
		})
	}
}

// storeTests lists the tests of the store contract; a new capability of
// the Store interface adds rows here.
var storeTests = []test{
	{"AppendRead", testAppendRead},
	{"Conflict", testConflict},
	{"ConcurrentAppend", testConcurrentAppend},
	{"Copies", testCopies},
	{"Paging", testPaging},
	{"Follow", testFollow},
	{"FollowConcurrent", testFollowConcurrent},
	{"FollowEnd", testFollowEnd},
	{"FollowBehindTrim", testFollowBehindTrim},
	{"Checkpoint", testCheckpoint},
	{"CheckpointConcurrent", testCheckpointConcurrent},
	{"Trim", testTrim},
	{"Threads", testThreads},
	{"Namespaces", testNamespaces},
	{"Replicas", testReplicas},
	{"Canceled", testCanceled},
	{"Down", testDown},
	{"Cut", testCut},
	{"Lease", testLease},
	{"LeaseExpiry", testLeaseExpiry},
	{"LeaseConcurrent", testLeaseConcurrent},
	{"Stop", testStop},
	{"Wrapped", testWrapped},
	{"Tenants", testTenants},
	{"TenantTooLong", testTenantTooLong},
	{"List", testList},
	{"ListPages", testListPages},
	{"Delete", testDelete},
	{"Expiry", testExpiry},
}

// relayTests lists the relay's scenarios on a store.
var relayTests = []test{
	{"OneWriter", testRelayOneWriter},
	{"Killed", testRelayKilled},
	{"Across", testRelayAcross},
	{"Restart", testRelayRestart},
	{"StoreDown", testRelayStoreDown},
	{"Trim", testRelayTrim},
	{"Wrapped", testRelayWrapped},
	{"RunRace", testRelayRunRace},
	{"BackToBack", testRelayBackToBack},
	{"Idle", testRelayIdle},
	{"Tenants", testRelayTenants},
	{"Stop", testRelayStop},
	{"Manage", testRelayManage},
	{"Drain", testRelayDrain},
	{"FollowThread", testRelayFollowThread},
	{"FollowDeleted", testRelayFollowDeleted},
	{"FollowResume", testRelayFollowResume},
	{"FollowClosed", testRelayFollowClosed},
	{"JoinSeam", testRelayJoinSeam},
}

// namespace returns a new namespace name, unique across processes.
func namespace(tb testing.TB) string {
	b := make([]byte, 8)
	_, err := rand.Read(b)
	require.NoError(tb, err)
	return "aguistate_test_" + hex.EncodeToString(b)
}

// open returns a store on a new namespace, and the namespace.
func open(tb testing.TB, h Harness) (relay.Store, string) {
	ns := namespace(tb)
	return h.Open(tb, ns, ""), ns
}

// testContext returns a context that ends with the test, or after a minute:
// no test waits forever on a store.
func testContext(tb testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	tb.Cleanup(cancel)
	return ctx
}

// event returns the JSON text of a CUSTOM event that names n.
func event(n any) []byte {
	return fmt.Appendf(nil, `{"type":"CUSTOM","name":"storetest","value":%q}`, fmt.Sprint(n))
}

// events returns the events named prefix-from to prefix-to.
func events(prefix string, from, to int) [][]byte {
	var es [][]byte
	for i := from; i <= to; i++ {
		es = append(es, event(fmt.Sprintf("%s-%d", prefix, i)))
	}
	return es
}

// entries returns the entries that a log holding es from position from on
// yields.
func entries(from int64, es [][]byte) []relay.Entry {
	var want []relay.Entry
	for i, e := range es {
		want = append(want, relay.Entry{Pos: from + int64(i), Event: e})
	}
	return want
}

// readAll returns the entries that s.Read yields and its error.
func readAll(ctx context.Context, s relay.Store, thread string, after int64) ([]relay.Entry, error) {
	var got []relay.Entry
	for e, err := range s.Read(ctx, thread, after) {
		if err != nil {
			return got, err
		}
		got = append(got, e)
	}
	return got, nil
}

// mustRead returns what s.Read yields, failing tb on an error.
func mustRead(tb testing.TB, s relay.Store, thread string, after int64) []relay.Entry {
	tb.Helper()
	got, err := readAll(testContext(tb), s, thread, after)
	require.NoError(tb, err, "read thread %q after %d", thread, after)
	return got
}

// mustAppend appends es at pos, failing tb on an error.
func mustAppend(tb testing.TB, s relay.Store, thread string, pos int64, es ...[]byte) {
	tb.Helper()
	require.NoError(tb, s.Append(testContext(tb), thread, pos, es...), "append to thread %q at %d", thread, pos)
}
