package p

import "testing"

// A library that runs tests (testify's suite.Run): its t.Run is hooked as
// in a test file, through the wrapping variant (its functions have no
// prologue), so the caller's code after it is ordered after the subtest.
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
