package rt

import (
	"runtime"
	"testing"
	"weak"
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

// A goroutine's state, once it ended and the writer wrote its records, is
// garbage: nothing of the writer's (its snapshot of the registry, its merge
// heap) keeps it, with its chunks and the channel counts its hooks hold.
// A program that counts its live heap objects (runtime.MemStats.HeapObjects
// after runtime.GC, as otter's ticker test does) would count them as its own.
func TestEndedStateCollected(t *testing.T) {
	const n = 64
	var states []weak.Pointer[gstate]
	record(t, false, func(site uint32) {
		x := escape[int]()
		for range n {
			c := Fork(site)
			st := make(chan weak.Pointer[gstate])
			go func() {
				Begin(c)
				*W1(x, site, true) = 1
				w := weak.Make(c.st)
				End(c)
				st <- w // after End: the rounds below must see every goroutine ended
			}()
			states = append(states, <-st)
		}
		for range 2 { // a round may see an End before its records
			Flush()
		}
		runtime.GC()
		alive := 0
		for _, w := range states {
			if w.Value() != nil {
				alive++
			}
		}
		if alive > 0 {
			t.Errorf("%d of %d ended goroutines' states are still reachable after the writer's rounds", alive, n)
		}
	})
}
