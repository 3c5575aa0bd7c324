package rttest

import (
	"flag"
	"testing"
	"unsafe"

	"github.com/racekit/racekit/rt"
)

// The locks of package testing that its methods of a test take (see
// rt.TBSync): c.mu, a sync.RWMutex in each test's testing.common, locked
// by Log, Error, Fatal, Skip, Helper and Fail (Fail and Error also lock
// the parents' c.mu, through c.parent.Fail), read-locked by Failed and
// Skipped, locked at the test's end to write its output to the parent's;
// and the printer's lastNameMu, one for the whole binary, which with
// -test.v every log line, "=== RUN", "=== PAUSE", "=== CONT" and a
// top-level test's "--- PASS" takes.
//
// Each mutex is two sync objects, as the Go race detector annotates a
// sync.RWMutex: w, released by a write section and acquired by every
// section (the writer's Unlock, readerSem in sync/rwmutex.go), and r,
// released by a read section and acquired by a write section (RUnlock's
// ReleaseMerge on writerSem). Two readers are not ordered.
//
// The locks are taken inside package testing, which is not traced, so
// their order is not known; the rewriter brackets each call with the
// section before and after it. A goroutine that wrote, then called t.Log,
// is then ordered before one that called t.Helper after that Log locked
// c.mu, then read: the writer's section before its call precedes the
// reader's after its call. When two calls overlap in time this orders
// them either way (an over-approximation: it may hide a race, never
// invents one).

type tbMutex struct{ w, r uint64 }

// tbMutexes maps a test's testing.common (the address of its *testing.T,
// *testing.B or *testing.F, whose first field it is) to its c.mu.
var tbMutexes rt.OwnMap

// printer is the -test.v printer's lastNameMu.
var printer = rt.NewObject()

func init() { rt.SetTBSync(tbSync) }

func mutexOf(p unsafe.Pointer) *tbMutex {
	if m, ok := tbMutexes.Load(p); ok {
		return m.(*tbMutex)
	}
	m, _ := tbMutexes.LoadOrStore(p, &tbMutex{w: rt.NewObject(), r: rt.NewObject()})
	return m.(*tbMutex)
}

// lockSection records a section of m: read mode or write mode.
func lockSection(m *tbMutex, read bool, site uint32) {
	rt.SyncAcquire(m.w, site)
	if read {
		rt.SyncRelease(m.r, site)
		return
	}
	rt.SyncAcquire(m.r, site)
	rt.SyncRelease(m.w, site)
}

// printSection records a section of the printer's lock, with -test.v.
func printSection(site uint32) {
	if verbose() {
		rt.SyncAcquire(printer, site)
		rt.SyncRelease(printer, site)
	}
}

var flagV = rt.OwnOnceValue(func() string {
	if f := flag.Lookup("test.v"); f != nil {
		return f.Value.String()
	}
	return ""
})

// verbose reports whether the printer is on (-test.v, or test2json's
// -test.v=test2json); asked only once tests run (flags parsed).
func verbose() bool {
	v := flagV()
	return v != "" && v != "false"
}

// jsonOutput reports -test.v=test2json (go test -json), where the end of
// each test and t.Run's return print through the printer too.
func jsonOutput() bool { return flagV() == "test2json" }

// tbSync is rt.TBSync: see the comment at the top.
func tbSync(tb any, kind int, site uint32) {
	var p unsafe.Pointer
	bench := false
	switch v := tb.(type) {
	case *testing.T:
		p = unsafe.Pointer(v)
	case *testing.B:
		p, bench = unsafe.Pointer(v), true
	case *testing.F:
		p = unsafe.Pointer(v)
	}
	if p == nil {
		return
	}
	if kind&rt.TBAncestors != 0 {
		for q := parentOf(p); q != nil; q = parentOf(q) {
			lockSection(mutexOf(q), false, site)
		}
	}
	lockSection(mutexOf(p), kind&rt.TBRead != 0, site)
	if kind&rt.TBPrint != 0 && !bench { // a benchmark's log lines go to fmt.Printf
		printSection(site)
	}
}

// testEnded records the locks the end of the test at t takes (its
// tRunner's flushToParent, after the cleanups): its parent's c.mu and
// its own, and the printer's for a top-level test or with -json.
func testEnded(t *testing.T, n *Test, site uint32) {
	p := unsafe.Pointer(t)
	if q := parentOf(p); q != nil {
		lockSection(mutexOf(q), false, site)
	}
	lockSection(mutexOf(p), false, site)
	if n.parent == root || jsonOutput() {
		printSection(site)
	}
}

// runReturned records the printer's lock that t.Run takes before it
// returns with -json ("=== NAME" of the parent).
func runReturned(site uint32) {
	if jsonOutput() {
		printSection(site)
	}
}
