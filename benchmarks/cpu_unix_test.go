//go:build unix

package benchmarks

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time the process has used so far, user and
// system, garbage collection included, and whether it can tell.
func cpuTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
