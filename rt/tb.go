package rt

// Package testing's methods of a test (Log, Error, Helper, Fail, Failed,
// ...) lock the test's mutex (testing.common.mu), and with -test.v the
// one printer's, which orders what two goroutines did before and after
// such calls on one test (a goroutine logs through t.Log, the test calls
// t.Helper in an assertion, then reads what the goroutine wrote): the Go
// race detector sees those locks, as package testing is instrumented under
// -race. The rewriter brackets each such call with TBSync, and rttest,
// which knows package testing, records the locks (rt cannot import
// testing: it is linked into programs that are not tests).

// What a method of a test locks: TBLock (c.mu) or TBRead (c.mu in read
// mode), TBAncestors (the mutexes of its parents, as Fail does), TBPrint
// (the printer's, as a log line does with -test.v).
const (
	TBLock = 1 << iota
	TBRead
	TBAncestors
	TBPrint
)

// tbSync is rttest's model of those locks; nil in a program that does not
// link rttest (not a test). Set once, by rttest's initialization.
var tbSync func(tb any, kind int, site uint32)

// SetTBSync is called by rttest's initialization.
func SetTBSync(f func(tb any, kind int, site uint32)) { tbSync = f }

// TBSync records the locks that a method of kind on tb takes, for a call
// at site: the rewriter calls it right before and right after the call
// (see rttest.tbSync for why both). tb is a *testing.T, *testing.B,
// *testing.F or the value of an interface the method was called on, which
// rttest checks; any other value is ignored.
func TBSync(tb any, kind int, site uint32) {
	if on && tbSync != nil {
		tbSync(tb, kind, site)
	}
}

// TBSyncFalse is TBSync before a call with a result, in the expression
// TBBool(tb, kind, site, TBSyncFalse(tb, kind, site) || tb.Failed()):
// it returns false, so that the call runs after it.
func TBSyncFalse(tb any, kind int, site uint32) bool {
	TBSync(tb, kind, site)
	return false
}

// TBBool is TBSync after a call with a result: it returns the result.
func TBBool(tb any, kind int, site uint32, result bool) bool {
	TBSync(tb, kind, site)
	return result
}
