package testout

import (
	"runtime"
	"syscall"
)

// yieldToTests makes the calling goroutine's thread run below the test
// binaries' priority (nice +analysisNice), locking the goroutine to it for
// the rest of its life (the thread ends with it). An analysis that follows a
// trace while its binary runs then takes only the CPU the tests leave idle:
// the tests' own timing (timeouts, throughput assertions, sleeps racing
// tickers) stays closer to a plain run's on a machine with few cores, and
// the trace, which the writer does not hold back for the analysis, waits
// on disk. On Linux a nice value is a thread's.
func yieldToTests() {
	runtime.LockOSThread()
	_ = syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), analysisNice)
}
