package rt

import (
	"runtime"
	"testing"
)

// returnedNormally, from a deferred call, tells a normal return (from the
// function's end, an early return, a function whose defers the runtime
// runs) from a panic and from runtime.Goexit.
func TestReturnedNormally(t *testing.T) {
	var got bool
	run := func(f func()) bool {
		done := make(chan bool)
		go func() {
			defer close(done)
			defer func() { recover() }()
			f()
		}()
		<-done
		return got
	}
	for _, tc := range []struct {
		name string
		f    func()
		want bool
	}{
		{"end", func() { defer func() { got = returnedNormally() }() }, true},
		{"return", func() {
			defer func() { got = returnedNormally() }()
			if len(t.Name()) > 0 {
				return
			}
			panic("unreached")
		}, true},
		{"loop defers", func() {
			for range 2 {
				defer func() {}()
			}
			defer func() { got = returnedNormally() }()
		}, true},
		{"panic", func() { defer func() { got = returnedNormally() }(); panic("p") }, false},
		{"Goexit", func() { defer func() { got = returnedNormally() }(); runtime.Goexit() }, false},
	} {
		got = !tc.want
		if run(tc.f) != tc.want {
			t.Errorf("%s: returnedNormally() = %v, want %v", tc.name, !tc.want, tc.want)
		}
	}
}
