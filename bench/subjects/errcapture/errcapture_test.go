package errcapture

import (
	"testing"

	"github.com/racekit/racekit/bench/subjects/internal/racy"
)

// The fix reports every failure (runs under -race).
func TestFixed(t *testing.T) {
	parts := []Source{{Name: "a", Fail: true}, {Name: "b"}, {Name: "c", Fail: true}}
	err := CheckAll(parts)
	if err == nil || err.Error() != "a: unavailable\nc: unavailable" {
		t.Fatalf("CheckAll = %v", err)
	}
	if CheckAll(parts[1:2]) != nil {
		t.Fatal("CheckAll of a good part failed")
	}
}

// The buggy versions: the fan-out still reports a failure (every writer
// writes a non-nil error); FetchBoth may lose a's error to b's nil.
func TestBuggy(t *testing.T) {
	racy.Skip(t)
	cfg := DefaultConfig()
	r := Run(cfg)
	if !r.BuggyErr || r.FixedErrs != cfg.Failures {
		t.Fatalf("got %+v", r)
	}
	if !r.BothErr {
		t.Log("FetchBoth lost the error of its goroutine")
	}
}
