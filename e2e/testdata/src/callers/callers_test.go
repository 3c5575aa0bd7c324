package callers

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
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

// TestLibrarySubtestCallers: a subtest a library's function literal runs.
func TestLibrarySubtestCallers(t *testing.T) {
	Walk(t, []string{"a", "b"}, func(t *testing.T, name string) {
		got := Callers(0)
		t.Log(name, got)
		if len(got) < 3 || got[2] != "testing.tRunner" {
			t.Errorf("a library's subtest's callers are %v, want testing.tRunner third", got)
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

// TestCallersCount: the number of frames runtime.Callers sees, in a
// test and in a subtest.
func TestCallersCount(t *testing.T) {
	pcs := make([]uintptr, 64)
	t.Log(runtime.Callers(0, pcs))
	t.Run("sub", func(t *testing.T) { t.Log(runtime.Callers(0, pcs)) })
}

// A goroutine started with a function literal runs the literal itself.
func TestGoCallers(t *testing.T) {
	ch := make(chan []string)
	go func() { ch <- Callers(0) }()
	t.Log(<-ch)
	go func(n int) { ch <- PanicStack()[n:] }(0)
	t.Log(<-ch)
}

// Its seed inputs run as subtests, through reflect.
func FuzzCallers(f *testing.F) {
	f.Add(1)
	f.Fuzz(func(t *testing.T, n int) {
		t.Log(Callers(0))
	})
}

type table struct{ name string }

func (tc table) run(t *testing.T) { t.Log(tc.name, Callers(0)) }

// t.Run of a method value and of a function literal a function returns.
func TestTableCallers(t *testing.T) {
	for _, tc := range []table{{"a"}, {"b c"}} {
		t.Run(tc.name, tc.run)
	}
	t.Run("made", made())
	t.Run(named("spread"))
}

// A name and a test, for t.Run's two arguments at once (held-out
// typeid's b.Run(benchUntypedString(8)) did not build under racekit).
//
//go:noinline
func named(name string) (string, func(*testing.T)) {
	return name, func(t *testing.T) { t.Log(name, Callers(0)) }
}

//go:noinline
func benchNamed(n int) (string, func(*testing.B)) {
	return fmt.Sprint(n), func(b *testing.B) {
		for range b.N {
			_ = Callers(0)
		}
	}
}

// Built, not run (go test runs no benchmark without -bench).
func BenchmarkSpread(b *testing.B) {
	b.Run(benchNamed(1))
	if !b.Run(benchNamed(2)) {
		b.Fail()
	}
}

// Not inlined: under racekit it is not (its Enter and Leave), and a
// literal declared in a function inlined into another is named after both.
//
//go:noinline
func made() func(*testing.T) {
	return func(t *testing.T) { t.Log(Callers(0)) }
}

// A panic in a subtest, recovered in the subtest.
func TestSubtestPanicStack(t *testing.T) {
	t.Run("sub", func(t *testing.T) { t.Log(PanicStack()) })
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

// A goroutine blocked in a receive statement (<-ch, v := <-ch) has its
// own function on top of its stack, where goleak's IgnoreTopFunction and
// other leak checks look (runtime.Stack of all goroutines).
func TestBlockedTop(t *testing.T) {
	ch := make(chan int)
	go blockedRecv(ch)
	go blockedRecvValue(ch)
	for _, fn := range []string{"blockedRecv", "blockedRecvValue"} {
		top := ""
		for i := 0; i < 2000 && top == ""; i++ {
			top = blockedTop(fn)
			if top == "" {
				time.Sleep(time.Millisecond)
			}
		}
		t.Log("top of the goroutine blocked in", fn+":", top)
		if want := "racekit.test/e2e/callers." + fn; top != want {
			t.Errorf("the goroutine blocked in %s has %q on top, want %s", fn, top, want)
		}
	}
	close(ch)
}

func blockedRecv(ch chan int) {
	<-ch
}

func blockedRecvValue(ch chan int) {
	v, ok := <-ch
	_, _ = v, ok
}

// blockedTop returns the top function of the goroutine blocked in a
// receive inside fn, or "".
func blockedTop(fn string) string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for _, g := range strings.Split(string(buf), "\n\n") {
		lines := strings.Split(g, "\n")
		if len(lines) < 2 || !strings.Contains(lines[0], "[chan receive") || !strings.Contains(g, "callers."+fn+"(") {
			continue
		}
		top, _, _ := strings.Cut(lines[1], "(")
		return top
	}
	return ""
}
