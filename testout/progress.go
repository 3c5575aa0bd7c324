package testout

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"
)

// activity is when go test started and last printed a line, for Progress
// (unix nanoseconds; 0: not yet).
type activity struct {
	started, last atomic.Int64
}

func (a *activity) start() { a.started.CompareAndSwap(0, time.Now().UnixNano()) }
func (a *activity) saw()   { a.last.Store(time.Now().UnixNano()) }

// progressLine says what go test is doing while it prints nothing for quiet or
// longer (Run's progress lines ask every progress.Interval): the
// test binaries whose traces are growing, else that it is building. It is
// "" before Run and while go test's output flows. Safe to call while Run
// runs.
func (o *Output) progressLine(quiet time.Duration) string {
	since := o.activity.last.Load()
	if since == 0 {
		since = o.activity.started.Load()
	}
	if since == 0 {
		return ""
	}
	silent := time.Since(time.Unix(0, since))
	if silent < quiet {
		return ""
	}
	var running []string
	files, _ := filepath.Glob(filepath.Join(o.TraceDir, "*.rkt"))
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil || time.Since(st.ModTime()) > 2*quiet {
			continue
		}
		running = append(running, fmt.Sprintf("%s (trace %d MB so far)", traceBinary(f), st.Size()>>20))
	}
	if len(running) == 0 {
		return fmt.Sprintf("go test: building the instrumented tests, or running tests that record nothing (no output for %v)", silent.Round(time.Second))
	}
	if len(running) > 3 {
		running = append(running[:3], fmt.Sprintf("%d more", len(running)-3))
	}
	return fmt.Sprintf("go test: running %s (no output for %v)", strings.Join(running, ", "), silent.Round(time.Second))
}

// traceBinary is the test binary a trace file names: "p.test" for
// "p.test.1234.rkt".
func traceBinary(path string) string {
	name := strings.TrimSuffix(filepath.Base(path), ".rkt")
	if i := strings.LastIndexByte(name, '.'); i > 0 {
		name = name[:i]
	}
	return name
}
