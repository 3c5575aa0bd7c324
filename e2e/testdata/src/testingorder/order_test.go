package testingorder

import (
	"reflect"
	"sync"
	"testing"
)

// TestNoRaceGroupThenParent: t.Run of a group returns after the group's
// parallel subtests end, so the parent's code after it is ordered after
// them.
func TestNoRaceGroupThenParent(t *testing.T) {
	var slots [2]int
	t.Run("group", func(t *testing.T) {
		for i := range 2 {
			t.Run("p", func(t *testing.T) {
				t.Parallel()
				slots[i] = i + 1
			})
		}
	})
	_ = slots[0] + slots[1]
}

// TestNoRaceNestedGroups: parallel subtests of parallel subtests; each
// group's t.Run returns after all of its descendants, and a parallel test's
// own code before and after its t.Run calls precedes its parallel
// subtests' bodies.
func TestNoRaceNestedGroups(t *testing.T) {
	var leaves [2][2]int
	var inner [2]int
	t.Run("outer", func(t *testing.T) {
		for i := range 2 {
			t.Run("inner", func(t *testing.T) {
				t.Parallel()
				inner[i] = 1
				for j := range 2 {
					t.Run("leaf", func(t *testing.T) {
						t.Parallel()
						leaves[i][j] = inner[i]
					})
				}
				inner[i] = 2
			})
		}
	})
	_ = leaves[0][0] + leaves[0][1] + leaves[1][0] + leaves[1][1] + inner[0] + inner[1]
}

// TestNoRaceParallelThroughInterface: t.Parallel called through an
// interface (wrapper.go: testscript's T, whose value embeds the
// *testing.T; quicktest's interface{ Parallel() }) is t.Parallel: the
// subtest's body waits for its parent's function to return.
func TestNoRaceParallelThroughInterface(t *testing.T) {
	var x, y int
	RunParallelShim(t, func() { x++ })
	RunParallelAny(t, func() { y++ })
	x, y = x+2, y+2
}

// TestNoRaceParentAfterRunOfParallel: a parallel subtest's body after
// t.Parallel waits for its parent's function to return (close of the
// parent's barrier): the parent's code after t.Run, and its deferred
// calls, are ordered before it.
func TestNoRaceParentAfterRunOfParallel(t *testing.T) {
	var x, y int
	defer func() { y = 1 }()
	t.Run("p", func(t *testing.T) {
		t.Parallel()
		_ = x + y
	})
	x = 1
}

// TestNoRaceBeforeParallel: a subtest's code before t.Parallel is ordered
// before its parent's t.Run returns, and so before its later siblings.
func TestNoRaceBeforeParallel(t *testing.T) {
	var x int
	t.Run("a", func(t *testing.T) {
		x = 1
		t.Parallel()
	})
	x++
	t.Run("b", func(t *testing.T) {
		x++
		t.Parallel()
	})
	_ = x
}

var siblingsX int

// TestRaceSiblings: two parallel subtests of one parent run concurrently.
func TestRaceSiblings(t *testing.T) {
	x := &siblingsX
	var wg sync.WaitGroup
	wg.Add(2)
	t.Run("a", func(t *testing.T) {
		t.Parallel()
		wg.Done()
		wg.Wait()
		*x = 1 // race: siblings
	})
	t.Run("b", func(t *testing.T) {
		t.Parallel()
		wg.Done()
		wg.Wait()
		*x = 2 // race: siblings
	})
}

var cousinsX int

// TestRaceNestedCousins: parallel subtests of two parallel groups run
// concurrently too.
func TestRaceNestedCousins(t *testing.T) {
	x := &cousinsX
	var wg sync.WaitGroup
	wg.Add(2)
	for i := range 2 {
		t.Run("group", func(t *testing.T) {
			t.Parallel()
			t.Run("leaf", func(t *testing.T) {
				t.Parallel()
				wg.Done()
				wg.Wait()
				*x = i // race: cousins
			})
		})
	}
}

var cleanupX int

// TestRaceCleanupVsSibling: a parallel subtest's cleanup runs when it
// ends, concurrently with its siblings.
func TestRaceCleanupVsSibling(t *testing.T) {
	x := &cleanupX
	var wg sync.WaitGroup
	wg.Add(2)
	t.Run("a", func(t *testing.T) {
		t.Cleanup(func() {
			*x = 1 // race: cleanup
		})
		t.Parallel()
		wg.Done()
		wg.Wait() // a ends after b resumed (else the framework's semaphore may order them for -race)
	})
	t.Run("b", func(t *testing.T) {
		t.Parallel()
		wg.Done()
		wg.Wait()
		*x = 2 // race: cleanup
	})
}

// TestRaceGoroutineVsParallelSub: a goroutine the parent starts is not
// ordered with the parent's parallel subtests (the parent's cleanup joins
// it).
func TestRaceGoroutineVsParallelSub(t *testing.T) {
	var x int
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		x = 1 // race: leaked
	}()
	t.Cleanup(wg.Wait)
	t.Run("p", func(t *testing.T) {
		t.Parallel()
		_ = x // race: leaked
	})
}

// TestNoRaceCleanupAfterParallel: a test's cleanups run after its parallel
// subtests (and their cleanups) end.
func TestNoRaceCleanupAfterParallel(t *testing.T) {
	var slots [2]int
	t.Cleanup(func() {
		_ = slots[0] + slots[1]
	})
	for i := range 2 {
		t.Run("p", func(t *testing.T) {
			t.Parallel()
			t.Cleanup(func() { slots[i]++ })
			slots[i] = 1
		})
	}
}

// TestNoRaceCleanupLIFO: cleanups run last registered first, one after
// the other, after the test's function.
func TestNoRaceCleanupLIFO(t *testing.T) {
	var x int
	t.Cleanup(func() { _ = x })
	t.Cleanup(func() { x = 2 })
	x = 1
}

// TestNoRaceCleanupRegisteredByGoroutine: registering a cleanup is ordered
// before it runs (both take the test's mutex).
func TestNoRaceCleanupRegisteredByGoroutine(t *testing.T) {
	var x int
	done := make(chan bool)
	go func() {
		x = 1
		t.Cleanup(func() { _ = x })
		done <- true
	}()
	<-done
}

// TestNoRaceSubtestCleanupThenGrandparent: a parallel subtest's cleanup
// ends before its group's t.Run returns.
func TestNoRaceSubtestCleanupThenGrandparent(t *testing.T) {
	var x int
	t.Run("group", func(t *testing.T) {
		t.Run("p", func(t *testing.T) {
			t.Parallel()
			t.Cleanup(func() { x = 1 })
		})
	})
	_ = x
}

var seqGroup [2]int

// TestNoRaceParallelAfterSequentialGroup: top-level parallel tests resume
// after every sequential top-level test has ended, including its groups of
// parallel subtests (declared after it: the order does not matter).
func TestNoRaceParallelAfterSequentialGroup(t *testing.T) {
	t.Parallel()
	_ = seqGroup[0] + seqGroup[1]
}

func TestNoRaceSequentialGroup(t *testing.T) {
	for i := range 2 {
		t.Run("p", func(t *testing.T) {
			t.Parallel()
			seqGroup[i] = 1
		})
	}
}

// TestNoRaceContextCancelled: t.Context() is cancelled after the test's
// function returns, before its cleanups.
func TestNoRaceContextCancelled(t *testing.T) {
	var x int
	ctx := t.Context()
	done := make(chan bool)
	go func() {
		<-ctx.Done()
		_ = x
		done <- true
	}()
	t.Cleanup(func() { <-done })
	x = 1
}

// TestNoRaceNestedRunTests: a test that runs tests of its own through
// testing.RunTests (testify's TestSuiteWithStats runs a suite so): their
// goroutines are the framework's, and RunTests returns after they end, so
// the test's code after it is ordered after theirs, subtests included.
func TestNoRaceNestedRunTests(t *testing.T) {
	stats := map[string]bool{}
	ok := testing.RunTests(func(pat, str string) (bool, error) { return true, nil }, []testing.InternalTest{
		{Name: "inner", F: func(t *testing.T) {
			stats["inner"] = true
			for _, n := range []string{"a", "b"} {
				t.Run(n, func(t *testing.T) { stats[n] = true })
			}
		}},
	})
	if !ok || len(stats) != 3 {
		t.Fatalf("ran %v", stats)
	}
}

// t.Run called by reflection, as go-testdeep's td.T.Run calls the Run
// method it finds on its TB (jarcoal/httpmock's tests, corpus session 54):
// the subtest still ends before its Run returns.
func TestNoRaceRunByReflection(t *testing.T) {
	var stack string
	run, _ := reflect.TypeOf(t).MethodByName("Run")
	sub := reflect.MakeFunc(run.Type.In(2), func([]reflect.Value) []reflect.Value {
		stack += "A"
		return nil
	})
	for range 2 {
		run.Func.Call([]reflect.Value{reflect.ValueOf(t), reflect.ValueOf("sub"), sub})
		stack = ""
	}
}
