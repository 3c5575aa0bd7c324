package rt

import (
	"os"
	"time"

	"github.com/racekit/racekit/gorace"
)

// Exit finishes the trace and exits; instrumented code calls it in place
// of os.Exit. A zero status first waits as go test -race does (exitWait).
func Exit(code int) {
	if code == 0 {
		exitWait()
	}
	Finish()
	os.Exit(code)
}

// MainExit is deferred at the top of an instrumented main function: the
// trace is finished when main returns or panics; a return first waits as
// go test -race does (exitWait).
func MainExit() {
	if returnedNormally() {
		exitWait()
	}
	Finish()
}

// TestMainExit is deferred at the top of a test package's TestMain: the
// trace is finished when it returns (the testing package then exits with
// m.Run's status) or panics. A return after a passing m.Run first waits
// as go test -race does (exitWait).
func TestMainExit() {
	if returnedNormally() && runStatus.Load() == 0 {
		exitWait()
	}
	Finish()
}

// setExitHook installs the runtime's exit hook; nil without the patched
// runtime (instrument/runtimehook.go, exitPatch).
var setExitHook func(h func(code int))

// exitHook runs where a -race binary's runtime calls racefini (the end of
// runtime.main, os.Exit's os_beforeExit), at every exit, after whatever of
// Exit, MainExit or TestMainExit ran: it covers the exits racekit does not
// rewrite, the testing package's os.Exit in a test binary without
// racekit's TestMain (its package has examples, or its TestMain hands m to
// untraced code) and os.Exit in untraced code. It waits at status 0 only,
// as racefini runs only then, and finishes the trace (a no-op when it is
// finished). Controlled runs finish as before.
func exitHook(code int) {
	if ctl {
		return
	}
	if code == 0 {
		exitWait()
	}
	Finish()
}

func installExitHook() {
	if setExitHook != nil {
		setExitHook(exitHook)
	}
}

// runStatus is the status the last m.Run returned (TestsRan).
var runStatus OwnInt64

// TestsRan notes the status m.Run returned: the testing package exits
// with it when TestMain returns.
func TestsRan(code int) { runStatus.Store(int64(code)) }

// exitWait pauses the exiting goroutine, tracing on, for GORACE's
// atexit_sleep_ms (default 1000), as the race runtime does at a normal
// exit of a program built with -race (os.Exit(0) or main's return; not a
// non-zero status, not a panic). The other goroutines run on meanwhile and
// are checked. Programs come to rely on that second: a plugin process
// whose handler lets main exit while another goroutine still writes the
// reply (hashicorp/go-plugin's Quit) loses the reply without it, and what
// the program does in that time is what -race checks. Controlled runs
// (sched.go) do not wait: their goroutines run one at a time.
func exitWait() {
	if !on || ctl || !live.Load() {
		return
	}
	n := skipBegin() // Getenv read-locks the environment: rt's, not the program's
	gorace := os.Getenv("GORACE")
	skipEnd(n)
	if d := atexitSleep(gorace); d > 0 {
		time.Sleep(d)
	}
}

// atexitSleep is the pause GORACE's options give: atexit_sleep_ms, 1000
// when absent or not a number (package gorace reads the variable as the
// race runtime does, for the analysis too).
func atexitSleep(env string) time.Duration {
	return time.Duration(gorace.Int(gorace.Options(env), "atexit_sleep_ms", 1000)) * time.Millisecond
}
