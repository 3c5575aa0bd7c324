package rt

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/racekit/racekit/trace"
)

// Signals: with RACEKIT_SIGNALS=1, SIGINT and SIGTERM finish the trace.
// When the program itself asked for the signal (an instrumented call of
// signal.Notify), the trace is only flushed and the program goes on;
// otherwise rt finishes the trace and lets the signal kill the process as
// it would have.
//
// The watcher is the one goroutine of rt's that lives as long as the
// program (issue 33: every other ends, or is a timer's callback, once its
// work is done): a signal is delivered to a channel, and only a goroutine
// waiting on it can finish the trace before the process dies. Only racekit
// run sets RACEKIT_SIGNALS=1, for a main program; racekit test does not,
// so tests that count goroutines (goleak, runtime.NumGoroutine) never see
// it.

var (
	sigMu      OwnMutex
	sigHandled = map[os.Signal]bool{} // signals the program asked for
)

func watchSignals() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		for s := range c {
			sigMu.Lock()
			handled := sigHandled[s]
			sigMu.Unlock()
			if handled {
				Flush()
				continue
			}
			Finish()
			signal.Reset(s)
			if p, err := os.FindProcess(os.Getpid()); err == nil {
				_ = p.Signal(s)
			}
			return
		}
	}()
}

// Signals delivered to the program's channels. os/signal's Notify takes
// its handlers' lock, and its goroutine takes the lock again to deliver a
// signal to the channels: under go test -race, what a goroutine did before
// it called Notify is ordered before every receive of a signal on such a
// channel that a later delivery sent (held-out gubernator's TestReloadTLS
// writes a reloader's paths, calls Notify, sends itself SIGHUP, and the
// reloader's goroutine reads the paths on receiving it: a false race under
// racekit, whose trace has neither the lock nor os/signal's goroutine).
// So a traced Notify releases sigObj, and a receive of a value from a
// channel given to Notify acquires it: more edges than the lock's (a
// Notify made after the delivery is ordered before the receive too).
var (
	sigObj  = NewObject()
	sigKept OwnBool // some channel was given to Notify: receives look theirs up
)

// SignalNotify is signal.Notify(c, sigs...).
func SignalNotify(c chan<- os.Signal, sigs ...os.Signal) {
	if on && c != nil && live.Load() {
		if a := chanAddr(c); a != 0 {
			chanCounts(c, a, 0).signals.Store(true)
			sigKept.Store(true)
		}
		emitEdge(trace.OpSyncRelease, 0, sigObj)
	}
	sigMu.Lock()
	if len(sigs) == 0 {
		sigHandled[syscall.SIGINT] = true
		sigHandled[syscall.SIGTERM] = true
	}
	for _, s := range sigs {
		sigHandled[s] = true
	}
	sigMu.Unlock()
	signal.Notify(c, sigs...)
}
