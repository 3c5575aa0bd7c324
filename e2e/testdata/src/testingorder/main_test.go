package testingorder

import (
	"os"
	"testing"
)

// beforeRun is written by TestMain before m.Run and read by the tests;
// afterRun is written by tests, parallel ones too, and read by TestMain
// after m.Run returns.
var beforeRun, afterRun, exampleOut, fuzzSum int

func TestMain(m *testing.M) {
	beforeRun = 1
	code := m.Run()
	afterRun += exampleOut + fuzzSum // NoRace: m.Run returns after every test, example and fuzz input
	os.Exit(code)
}

// TestNoRaceMainBeforeRun: TestMain's code before m.Run is ordered before
// every test.
func TestNoRaceMainBeforeRun(t *testing.T) {
	t.Parallel()
	_ = beforeRun
}

// TestNoRaceMainAfterRun: a parallel test's write is ordered before m.Run
// returns.
func TestNoRaceMainAfterRun(t *testing.T) {
	t.Parallel()
	afterRun = 2
}

// Example_noRaceMainAfterRun: examples run in m.Run, before it returns.
func Example_noRaceMainAfterRun() {
	exampleOut = 3
	// Output:
}

// Example_noRaceAfterTests: m.Run runs the examples after every test
// ended, parallel ones too, and after the fuzz targets (go.uber.org/fx's
// ExampleError reads what a test wrote).
func Example_noRaceAfterTests() {
	exampleOut += afterRun + fuzzSum
	// Output:
}

// FuzzNoRaceSeeds: the seed inputs run one after the other, each on a
// goroutine of its own, all before f.Fuzz returns and before the fuzz
// target's cleanups.
func FuzzNoRaceSeeds(f *testing.F) {
	f.Add(1)
	f.Add(2)
	_ = afterRun // NoRace: the fuzz targets run after the tests
	f.Cleanup(func() {
		_ = fuzzSum
	})
	f.Fuzz(func(t *testing.T, n int) {
		fuzzSum += n
	})
}
