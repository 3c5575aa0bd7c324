package sor

import (
	"math"
	"testing"
)

// Race-free (runs under -race): red-black ordering makes the result
// independent of the number of threads, bit for bit.
func TestThreadsAgree(t *testing.T) {
	cfg := DefaultConfig()
	seq := cfg
	seq.Threads = 1
	want := Run(seq)
	if got := Run(cfg); got != want {
		t.Fatalf("%d threads: %v, 1 thread: %v", cfg.Threads, got, want)
	}
	if math.IsNaN(want) || want <= 0 {
		t.Fatalf("implausible total %v", want)
	}
}
