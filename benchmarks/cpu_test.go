// The CPU time of a benchmark, which a loaded machine changes less than
// the time on the clock.

package benchmarks

import "testing"

// reportCPU runs the loop of b with body, and reports the process's CPU
// time per op as cpu-ns/op beside ns/op: on a machine shared with other
// work, the clock counts the time other processes ran, and the CPU time
// does not.
func reportCPU(b *testing.B, body func()) {
	start, ok := cpuTime()
	for b.Loop() {
		body()
	}
	if end, _ := cpuTime(); ok && b.N > 0 {
		b.ReportMetric(float64((end-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}
