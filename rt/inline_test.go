package rt

import (
	"os"
	"os/exec"
	"regexp"
	"testing"
)

// instantiateHooks instantiates every per-access hook for the compiler's
// report in TestAccessHooksInline (never called).
func instantiateHooks() {
	var x int
	m := map[int]int{}
	_ = *R(&x, 0, true) + *W(&x, 0, true) + *R1(&x, 0, true) + *W1(&x, 0, true) + *RW(&x, 0, true) + *RW1(&x, 0, true)
	_, _, _ = MR(m, 0, true), MW(m, 0, true), MRW(m, 0, true)
}

var _ = instantiateHooks

// The per-access hooks must stay within the inliner's budget: their test
// is all that instrumented code runs at an access when tracing is off or
// the invocation is not sampled (accessHook). A line added to a hook can
// push it over the budget, which no other test would notice.
func TestAccessHooksInline(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the package")
	}
	out, err := exec.Command("go", "test", "-c", "-o", os.DevNull, "-gcflags=-m", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go test -c -gcflags=-m: %v\n%s", err, out)
	}
	for _, h := range []string{"R", "W", "R1", "W1", "RW", "RW1", "MR", "MW", "MRW"} {
		if !regexp.MustCompile(`can inline ` + h + `\[go\.shape\.`).Match(out) {
			t.Errorf("the compiler does not inline %s (go test -c -gcflags=-m ./rt)", h)
		}
	}
}
