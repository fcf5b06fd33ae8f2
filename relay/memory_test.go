// The store conformance suite and benchmarks, run on Memory.

package relay_test

import (
	"sync"
	"testing"

	"github.com/aguistate/aguistate/relay"
	"github.com/aguistate/aguistate/relay/storetest"
)

// memoryHarness opens one Memory per namespace: stores opened on one
// namespace are the same Memory, as replicas in one process would share it.
func memoryHarness() storetest.Harness {
	var mu sync.Mutex
	stores := make(map[string]*relay.Memory)
	return storetest.Harness{Open: func(tb testing.TB, ns, _ string) relay.Store {
		mu.Lock()
		defer mu.Unlock()
		if stores[ns] == nil {
			stores[ns] = relay.NewMemory()
		}
		return stores[ns]
	}}
}

func TestMemory(t *testing.T) { storetest.Run(t, memoryHarness()) }

func BenchmarkMemory(b *testing.B) { storetest.Bench(b, memoryHarness()) }

func BenchmarkRelay(b *testing.B) { storetest.BenchRelay(b, memoryHarness()) }

func BenchmarkLoad(b *testing.B) { storetest.BenchLoad(b, memoryHarness()) }
