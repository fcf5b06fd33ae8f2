//go:build !unix

package benchmarks

import "time"

// cpuTime cannot tell the CPU time here.
func cpuTime() (time.Duration, bool) { return 0, false }
