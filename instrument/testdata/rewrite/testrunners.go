package p

import "testing"

var ran int

// A suite run inside a test (testify's TestSuiteWithStats): testing.RunTests
// runs F in a goroutine of its own and waits for it; the call acquires what
// that goroutine released when it returned (rt.IORead).
func nestedRun(t *testing.T) bool {
	ok := testing.RunTests(func(pat, str string) (bool, error) { return true, nil }, []testing.InternalTest{
		{Name: "inner", F: func(t *testing.T) { ran++ }},
	})
	return ok && ran == 1
}
