package rttest

import (
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/racekit/racekit/rt"
)

// The stall watch (issue 30, item 3): a test whose goroutines are all
// blocked on each other is reported at once, not when the -timeout alarm
// fires minutes later (rt.Stalled says when nothing can run again). It
// runs in a timer's callback, so no goroutine of rttest's shows between
// checks (goleak, runtime.NumGoroutine). Two checks in a row must agree,
// stallPoll apart: the check is exact (the world is stopped while it
// looks), the second only guards against what it cannot see.

const stallPoll = 500 * time.Millisecond

// watchStall starts the watch once, at the first test's Start: not under
// the controlled scheduler (which has a deadlock check of its own), and
// not with RACEKIT_STALL=0.
var watchStall = sync.OnceFunc(func() {
	if !forks || !rt.CanSeeStall() || !rt.Enabled() || os.Getenv("RACEKIT_STALL") == "0" {
		return
	}
	var seen bool
	var t *time.Timer
	var check func()
	check = func() {
		if !rt.Enabled() {
			return // the trace is finished: the binary is exiting
		}
		stalled := rt.Stalled()
		if stalled && seen {
			stall()
			return
		}
		seen = stalled
		t.Reset(stallPoll)
	}
	t = rt.SysAfterFunc(time.Hour, check) // armed once t is set; the program does not see its goroutine
	t.Reset(stallPoll)
})

// stall reports the stalled tests and ends the binary as the alarm does.
func stall() {
	var names []string
	tests.Range(func(k, _ any) bool {
		names = append(names, k.(*testing.T).Name())
		return true
	})
	slices.Sort(names)
	rt.FinishStalled(names)
	debug.SetTraceback("all")
	running := "no test running"
	if len(names) > 0 {
		running = "running tests: " + strings.Join(names, ", ")
	}
	panic(fmt.Sprintf("racekit: all goroutines are asleep - deadlock! (%s; every goroutine is blocked in a channel, select or sync operation, and no timer can wake one before the -timeout alarm)", running))
}
