package testout

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/racekit/racekit/analyze"
)

// A package's traces that cannot be analyzed: an empty one (a child
// process a test started and killed before rt wrote its header:
// fasthttp's prefork) is no finding and no error; a damaged one is an
// error, said once. Neither stops the output (a damaged trace crashed
// racekit test, in a corpus run, on a nil analysis).
func TestUnreadableTraces(t *testing.T) {
	t.Setenv("RACEKIT_TEST_FOLLOW", "0")
	for _, c := range []struct {
		name    string
		content string
		errors  int
	}{{"empty", "", 0}, {"damaged", "\x89RKT\r\n\x1a\n\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", 1}} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, traceFileName("example.com/p.test")+".4242.rkt")
			if err := os.WriteFile(path, []byte(c.content), 0o666); err != nil {
				t.Fatal(err)
			}
			var out strings.Builder
			var errs []string
			o := &Output{
				Out: &out, TraceDir: dir, Quiet: true,
				Options: func(func(int64)) analyze.Options { return analyze.Options{} },
				Errorf:  func(f string, args ...any) { errs = append(errs, fmt.Sprintf(f, args...)) },
			}
			o.Run(strings.NewReader("ok  \texample.com/p\t0.010s\n"))
			if len(errs) != c.errors || o.Err() != (c.errors > 0) {
				t.Errorf("errors %q (Err %v), want %d", errs, o.Err(), c.errors)
			}
			if !strings.Contains(out.String(), "ok  \texample.com/p\t0.010s") || o.Failed() != 0 {
				t.Errorf("output %q, %d packages failed; want the package's ok line", out.String(), o.Failed())
			}
		})
	}
}
