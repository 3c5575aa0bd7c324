//go:build go1.25

package rttest

import (
	"testing"
	"testing/synctest"
	"unsafe"

	"github.com/racekit/racekit/rt"
)

// SynctestTest is synctest.Test(t, f), where f begins with Start's
// prologue: the bubble's test, a subtest of t with t's name, claims its
// state.
func SynctestTest(t *testing.T, f func(*testing.T), site uint32) {
	if parentField < 0 {
		SynctestTestWrap(t, f, site)
		return
	}
	n := newTest(lookup(t))
	n.kind, n.site, n.ret = kindSub, site, 0
	runPending(unsafe.Pointer(t), &pend{same: true, n: n}, func() bool {
		synctest.Test(t, f)
		return true
	})
	afterAll(site)
}

// SynctestTestWrap is synctest.Test(t, f) for an f that may not begin
// with Start's prologue.
func SynctestTestWrap(t *testing.T, f func(*testing.T), site uint32) {
	n := newTest(lookup(t))
	n.ret = 0
	synctest.Test(t, func(t *testing.T) {
		tests.Store(t, n)
		t.Cleanup(func() { n.done(t) })
		defer n.fnReturned(site)
		f(t)
		n.ok = true
	})
	afterAll(site)
}

// SynctestWait is synctest.Wait().
func SynctestWait(site uint32) {
	synctest.Wait()
	afterAll(site)
}

// afterAll orders the calling goroutine after every event recorded so far:
// a goroutine rt has not seen is born in untraced code, ordered after
// everything before its first event, which releases an object the caller
// then acquires.
func afterAll(site uint32) {
	obj := rt.NewObject()
	ch := make(chan struct{})
	go func() {
		rt.SyncRelease(obj, site)
		close(ch)
	}()
	<-ch
	rt.SyncAcquire(obj, site)
}
