package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// progress prints a one-line counter to stderr while long work runs, only
// when stderr is a terminal (or forced on), so logs and CI stay clean.
type progress struct {
	enabled bool
	label   string
	start   time.Time
	last    time.Time
	printed bool
}

func newProgress(mode, label string) *progress {
	p := &progress{label: label, start: time.Now()}
	p.last = p.start
	switch mode {
	case "on":
		p.enabled = true
	case "off":
	default:
		p.enabled = stderrIsTerminal()
	}
	return p
}

func stderrIsTerminal() bool {
	fi, err := os.Stderr.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func (p *progress) update(n int64) {
	if !p.enabled {
		return
	}
	now := time.Now()
	if now.Sub(p.last) < 500*time.Millisecond {
		return
	}
	p.last = now
	p.printed = true
	rate := float64(n) / now.Sub(p.start).Seconds()
	fmt.Fprintf(os.Stderr, "\rracekit %s: %d events, %.1fM events/s   ", p.label, n, rate/1e6)
}

func (p *progress) done() {
	if p.printed {
		fmt.Fprint(os.Stderr, "\r\033[K")
	}
}

// peakRSS returns the process's peak resident set size (VmHWM on Linux), or
// the Go runtime's view of memory obtained from the OS elsewhere.
func peakRSS() string {
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				fields := strings.Fields(rest)
				if len(fields) >= 1 {
					if kb, err := strconv.ParseInt(fields[0], 10, 64); err == nil {
						return fmt.Sprintf("%.1f MiB", float64(kb)/1024)
					}
				}
			}
		}
	}
	return "unknown"
}

// progressLines reports the units of a command's long work (fuzz: a pair's
// runs; hatch: a recording, a round of clips; vet: the analysis) on
// stderr, one line each, "racekit CMD: [ELAPSED] what", so that a run of
// minutes is never silent. Unlike progress it prints whether or not
// stderr is a terminal (a log shows how far a run got); -q silences it.
// Its methods may be called from several goroutines.
type progressLines struct {
	cmd   string
	quiet bool
	start time.Time
	w     io.Writer
	mu    sync.Mutex
}

// progressEvery is how often a unit that goes on (a pair's runs, the
// static analysis) reports how far it got.
var progressEvery = 5 * time.Second

func newProgressLines(cmd string, quiet bool) *progressLines {
	return &progressLines{cmd: cmd, quiet: quiet, start: time.Now(), w: os.Stderr}
}

// printf prints one progress line, with the time since the command
// started.
func (p *progressLines) printf(format string, args ...any) {
	if p.quiet {
		return
	}
	el := time.Since(p.start).Round(100 * time.Millisecond)
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "racekit %s: [%v] %s\n", p.cmd, el, fmt.Sprintf(format, args...))
}

// every prints what f returns every progressEvery until the returned stop
// is called: for one long step with no units of its own.
func (p *progressLines) every(f func() string) (stop func()) {
	if p.quiet {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				p.printf("%s", f())
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// analysis reports the analysis of the trace at path: a line every
// progressEvery with the events read so far (none for an analysis shorter
// than that). progress is detect.RunProgress's callback; stop ends the
// lines.
func (p *progressLines) analysis(path string) (progress func(n int64), stop func()) {
	n := new(atomic.Int64)
	return func(k int64) { n.Store(k) }, p.analysisOf(path, n, time.Now())
}

// analysisOf prints the progress of an analysis of path begun at start
// that stores its events so far in n, until stop is called.
func (p *progressLines) analysisOf(path string, n *atomic.Int64, start time.Time) (stop func()) {
	name := filepath.Base(path)
	return p.every(func() string {
		k := n.Load()
		return fmt.Sprintf("analyzing %s: %d events so far (%.1fM events/s)", name, k, float64(k)/time.Since(start).Seconds()/1e6)
	})
}
