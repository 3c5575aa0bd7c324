package rt

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
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
	sigMu      sync.Mutex
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

// SignalNotify is signal.Notify(c, sigs...).
func SignalNotify(c chan<- os.Signal, sigs ...os.Signal) {
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
