package callers

import (
	"fmt"
	"runtime"
	"testing"
)

// The Example runs on the test binary's main goroutine, under m.Run: a
// TestMain of racekit's would show there.
func ExampleCallers() {
	for _, f := range Callers(0) {
		fmt.Println(f)
	}
	fmt.Println(testing.Testing())
	// Output:
	// racekit.test/e2e/callers.ExampleCallers
	// testing.runExample
	// testing.runExamples
	// testing.(*M).Run
	// main.main
	// runtime.main
	// runtime.goexit
	// true
}

func TestCaller(t *testing.T) {
	pc, _, _, ok := runtime.Caller(1)
	if !ok {
		t.Fatal("runtime.Caller(1) failed")
	}
	if got := runtime.FuncForPC(pc).Name(); got != "testing.tRunner" {
		t.Errorf("runtime.Caller(1) is %s, want testing.tRunner", got)
	}
	t.Log(Callers(0))
}

func TestTesting(t *testing.T) {
	if !testing.Testing() {
		t.Error("testing.Testing() is false")
	}
}

func TestSubtestCallers(t *testing.T) {
	t.Run("sub", func(t *testing.T) {
		got := Callers(0)
		t.Log(got)
		if len(got) < 2 || got[1] != "testing.tRunner" {
			t.Errorf("a subtest's caller is %v, want testing.tRunner", got)
		}
	})
}

func TestCleanupCallers(t *testing.T) {
	t.Cleanup(func() {
		t.Log(Callers(0))
	})
}

func TestPanicStack(t *testing.T) {
	t.Log(PanicStack())
}

func ExamplePanicStack() {
	for _, f := range PanicStack() {
		fmt.Println(f)
	}
	// Output:
	// racekit.test/e2e/callers.PanicStack.func1
	// panic
	// racekit.test/e2e/callers.PanicStack
	// racekit.test/e2e/callers.ExamplePanicStack
	// testing.runExample
	// testing.runExamples
	// testing.(*M).Run
	// main.main
}
