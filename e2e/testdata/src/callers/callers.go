// Package callers is racekit test's check that instrumenting a package's
// tests adds no frame their code can see: its Example and tests print the
// function names of their callers (runtime.Callers, runtime.Caller, a
// recovered panic's stack) and testing.Testing(), and racekit test's
// output must equal go test's (e2e.TestTestUnchanged).
package callers

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// Callers returns the function names of its caller's callers, innermost
// first, skip frames up.
func Callers(skip int) []string {
	pcs := make([]uintptr, 64)
	n := runtime.Callers(skip+2, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	var names []string
	for {
		f, more := frames.Next()
		names = append(names, f.Function)
		if !more {
			break
		}
	}
	return names
}

// PanicStack returns the functions of the goroutine stack printed while a
// panic is recovered: "goroutine N [running]:" then a function line and a
// file line per frame; racekit's own packages would show there.
func PanicStack() (names []string) {
	defer func() {
		recover()
		buf := make([]byte, 1<<16)
		buf = buf[:runtime.Stack(buf, false)]
		for _, line := range strings.Split(string(buf), "\n")[1:] {
			if line == "" || strings.HasPrefix(line, "\t") || strings.HasPrefix(line, "created by ") {
				continue
			}
			if i := strings.LastIndexByte(line, '('); i > 0 {
				line = line[:i]
			}
			names = append(names, line)
		}
	}()
	panic(fmt.Sprint("callers"))
}

// Walk runs f in a subtest per name, from a function literal of a file
// that is not a test file (a library that runs tests, as
// cockroachdb/datadriven's Walk).
func Walk(t *testing.T, names []string, f func(t *testing.T, name string)) {
	for _, n := range names {
		t.Run(n, func(t *testing.T) { f(t, n) })
	}
}
