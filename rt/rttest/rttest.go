// Package rttest models the synchronization of package testing for
// instrumented tests. The testing framework is not instrumented, so the
// edges it makes (t.Run waits for its subtest, parallel tests resume after
// the sequential ones, cleanups run after subtests, m.Run returns after
// every test) would be invisible; rttest records them on sync objects:
//
//   - every test, benchmark, example and fuzz function starts with Start (an
//     acquire of the "tests ended" object) and ends with Stop (a release of
//     it);
//   - t.Run(name, f) becomes Run: f's end (or its call of t.Parallel)
//     releases a token that Run acquires when t.Run returns, and f's end
//     also releases "tests ended";
//   - t.Parallel() becomes Parallel: it releases the token, then acquires
//     "tests ended" when the test resumes;
//   - t.Cleanup(f) and m.Run() acquire "tests ended" after the tests they
//     wait for.
//
// A goroutine the framework starts is a goroutine born in untraced code:
// its first event is ordered after everything recorded before it.
package rttest

import (
	"reflect"
	"sync"
	"testing"

	"github.com/racekit/racekit/rt"
)

var testsEnded = rt.NewObject()

// tokens maps a subtest's *testing.T (or *testing.B) to the token its
// parent's Run acquires.
var tokens sync.Map

// Start is called first in every test, benchmark, example and fuzz
// function.
func Start() { rt.SyncAcquire(testsEnded, 0) }

// Stop is deferred right after Start. Under controlled scheduling the
// function then departs at a point of the schedule (rt.Depart), so that
// what its goroutines do after it returns replays from the seed.
func Stop() {
	rt.SyncRelease(testsEnded, 0)
	rt.Depart()
}

// Run is t.Run(name, f).
func Run(t *testing.T, name string, f func(*testing.T), site uint32) bool {
	done := rt.NewObject()
	ok := t.Run(name, func(t *testing.T) {
		tokens.Store(t, done)
		defer func() {
			rt.SyncRelease(done, site)
			rt.SyncRelease(testsEnded, site)
			tokens.Delete(t)
		}()
		f(t)
	})
	rt.SyncAcquire(done, site)
	return ok
}

// RunB is b.Run(name, f).
func RunB(b *testing.B, name string, f func(*testing.B), site uint32) bool {
	done := rt.NewObject()
	ok := b.Run(name, func(b *testing.B) {
		defer rt.SyncRelease(testsEnded, site)
		defer rt.SyncRelease(done, site)
		f(b)
	})
	rt.SyncAcquire(done, site)
	return ok
}

// RunParallel is b.RunParallel(body): its worker goroutines are born in
// untraced code; their ends are ordered before RunParallel returns.
func RunParallel(b *testing.B, body func(*testing.PB), site uint32) {
	done := rt.NewObject()
	b.RunParallel(func(pb *testing.PB) {
		defer rt.SyncRelease(done, site)
		body(pb)
	})
	rt.SyncAcquire(done, site)
}

// Parallel is t.Parallel().
func Parallel(t *testing.T, site uint32) {
	if tok, ok := tokens.Load(t); ok {
		rt.SyncRelease(tok.(uint64), site)
	}
	t.Parallel()
	rt.SyncAcquire(testsEnded, site)
}

// Cleanup is t.Cleanup(f) (on *testing.T, *testing.B or *testing.F).
func Cleanup(t testing.TB, f func(), site uint32) {
	t.Cleanup(func() {
		rt.SyncAcquire(testsEnded, site)
		f()
	})
}

// MRun is m.Run() in TestMain.
func MRun(m *testing.M, site uint32) int {
	code := m.Run()
	rt.SyncAcquire(testsEnded, site)
	return code
}

// Fuzz is f.Fuzz(ff): the fuzz function runs, for each input, in a
// goroutine the framework starts; its end is ordered before Fuzz returns
// (and before later tests, through "tests ended").
func Fuzz(f *testing.F, ff any, site uint32) {
	v := reflect.ValueOf(ff)
	if v.Kind() != reflect.Func {
		f.Fuzz(ff) // let testing report the misuse
		return
	}
	done := rt.NewObject()
	wrapped := reflect.MakeFunc(v.Type(), func(args []reflect.Value) []reflect.Value {
		defer rt.SyncRelease(testsEnded, site)
		defer rt.SyncRelease(done, site)
		return v.Call(args)
	})
	f.Fuzz(wrapped.Interface())
	rt.SyncAcquire(done, site)
}
