package treefig51

import "testing"

// Race-free (runs under -race): no increment is lost.
func TestRun(t *testing.T) {
	for _, cfg := range []Config{DefaultConfig(), {Threads: 2, Iters: 10, Locks: 1}, {Threads: 3, Iters: 5, Locks: 8}} {
		if got, want := Run(cfg), cfg.Threads*cfg.Iters; got != want {
			t.Errorf("%+v: x = %d, want %d", cfg, got, want)
		}
	}
}
