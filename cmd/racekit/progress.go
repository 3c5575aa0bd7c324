package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// eventCounter prints a one-line counter to stderr while long work runs, only
// when stderr is a terminal (or forced on), so logs and CI stay clean.
type eventCounter struct {
	enabled bool
	label   string
	start   time.Time
	last    time.Time
	printed bool
}

func newEventCounter(mode, label string) *eventCounter {
	p := &eventCounter{label: label, start: time.Now()}
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

func (p *eventCounter) update(n int64) {
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

func (p *eventCounter) done() {
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
