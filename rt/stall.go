package rt

import (
	"os"
	"strings"

	"github.com/racekit/racekit/trace"
)

// A test whose goroutines are all blocked on each other (issue 30, item
// 3). Under go test such a test hangs until the -timeout alarm, since the
// alarm's timer keeps Go's own "all goroutines are asleep" check from
// firing. racekit's patched runtime (instrument/runtimehook.go,
// stallFuncs) tells whether every goroutine is blocked in a channel, select
// or sync operation with no timer due before the alarm; rttest asks it
// periodically and, when it holds, reports the test at once: the trace is
// finished (its block events and the channel begins name what each
// goroutine waits for), a file beside it says the run stalled, and the
// test binary panics as the alarm would.

// allBlocked is the patched runtime's check (racekitStalled), set by the
// file racekit adds to rt's copy; nil without it.
var allBlocked func(skip []uintptr) bool

// CanSeeStall reports whether Stalled can answer (the runtime is patched).
func CanSeeStall() bool { return allBlocked != nil }

// Stalled reports whether every goroutine but the caller is blocked on
// another's channel, lock, WaitGroup or Cond, and no timer can wake one
// before the test binary's -timeout alarm: nothing will ever run again.
// skip are the entries of AfterFunc callbacks that wake no goroutine;
// those of SysAfterFunc's timers (the writer's, rttest's) are skipped too.
func Stalled(skip ...uintptr) bool {
	return allBlocked != nil && allBlocked(append(skip, sysCallbackPC()))
}

// FinishStalled records that the run stalled while tests ran and finishes
// the trace.
func FinishStalled(tests []string) {
	wmu.Lock()
	path := outPath
	wmu.Unlock()
	if on && path != "" {
		if err := os.WriteFile(path+trace.StallSuffix, []byte(strings.Join(tests, "\n")+"\n"), 0o666); err != nil {
			os.Stderr.WriteString("racekit: " + err.Error() + "\n")
		}
	}
	Finish()
}
