package p

import "testing"

// A library that runs tests (testify's suite.Run): its t.Run is hooked as
// in a test file, so the caller's code after it is ordered after the
// subtest, and its function literals with a *testing.T get the prologue; a
// function value it runs (tc.run) may have none, so the wrapping variant
// runs it.
type test struct {
	name string
	run  func(*testing.T)
}

func runTests(t *testing.T, tests []test) {
	for _, tc := range tests {
		t.Run(tc.name, tc.run)
	}
}

func suiteRun(t *testing.T, counts map[string]int) {
	runTests(t, []test{{"a", func(t *testing.T) { counts["a"]++ }}})
	t.Cleanup(func() { counts["cleanup"]++ })
}
