// Package progress prints the progress lines of racekit's long work (fuzz:
// a pair's runs; hatch: a recording, a round of clips; vet: the analysis;
// test: an analysis that goes on) on stderr, one line each,
// "racekit CMD: [ELAPSED] what", so that a run of minutes is never silent.
// The lines are printed whether or not stderr is a terminal (a log shows
// how far a run got); quiet (-q) silences them.
package progress

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// Lines reports the units of one command's work. Its methods may be called
// from several goroutines; a nil *Lines prints nothing.
type Lines struct {
	cmd   string
	quiet bool
	start time.Time
	w     io.Writer
	mu    sync.Mutex
}

// Interval is how often a unit that goes on (a pair's runs, the static
// analysis) reports how far it got.
var Interval = 5 * time.Second

// New returns the progress lines of racekit cmd, on stderr.
func New(cmd string, quiet bool) *Lines {
	return NewTo(os.Stderr, cmd, quiet)
}

// NewTo returns progress lines written to w.
func NewTo(w io.Writer, cmd string, quiet bool) *Lines {
	return &Lines{cmd: cmd, quiet: quiet, start: time.Now(), w: w}
}

// Printf prints one progress line, with the time since the command
// started.
func (p *Lines) Printf(format string, args ...any) {
	if p == nil || p.quiet {
		return
	}
	el := time.Since(p.start).Round(100 * time.Millisecond)
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "racekit %s: [%v] %s\n", p.cmd, el, fmt.Sprintf(format, args...))
}

// Every prints what f returns every Interval until the returned stop is
// called: for one long step with no units of its own. An empty string
// prints nothing (the step has not begun, or has nothing to say).
func (p *Lines) Every(f func() string) (stop func()) {
	if p == nil || p.quiet {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(Interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if s := f(); s != "" {
					p.Printf("%s", s)
				}
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// Analysis reports the analysis of the trace at path: a line every
// Interval with the events read so far (none for an analysis shorter
// than that). progress is detect.RunProgress's callback; stop ends the
// lines.
func (p *Lines) Analysis(path string) (progress func(n int64), stop func()) {
	n := new(atomic.Int64)
	return func(k int64) { n.Store(k) }, p.AnalysisOf(path, n, time.Now())
}

// AnalysisOf prints the progress of an analysis of path begun at start
// that stores its events so far in n, until stop is called.
func (p *Lines) AnalysisOf(path string, n *atomic.Int64, start time.Time) (stop func()) {
	name := filepath.Base(path)
	return p.Every(func() string {
		k := n.Load()
		return fmt.Sprintf("analyzing %s: %d events so far (%.1fM events/s)", name, k, float64(k)/time.Since(start).Seconds()/1e6)
	})
}
