package callersmain

import (
	"fmt"
	"os"
	"testing"

	"racekit.test/e2e/callers"
)

func TestMain(m *testing.M) {
	code := m.Run()
	os.Exit(code)
}

func ExampleTestMain() {
	for _, f := range callers.Callers(0) {
		fmt.Println(f)
	}
	// Output:
	// racekit.test/e2e/callersmain.ExampleTestMain
	// testing.runExample
	// testing.runExamples
	// testing.(*M).Run
	// racekit.test/e2e/callersmain.TestMain
	// main.main
	// runtime.main
	// runtime.goexit
}

func TestCallers(t *testing.T) {
	t.Log(callers.Callers(0))
	t.Run("sub", func(t *testing.T) { t.Log(callers.Callers(0)) })
}
