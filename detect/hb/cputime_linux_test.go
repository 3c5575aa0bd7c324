package hb_test

import (
	"syscall"
	"time"
)

// threadCPU returns the CPU time consumed so far by the calling OS thread;
// the caller must be locked to its thread (runtime.LockOSThread). On a
// shared machine it measures the detector's own work where wall-clock
// time also counts the time other processes held the core.
func threadCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_THREAD, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
