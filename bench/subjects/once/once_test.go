package once

import (
	"sync"
	"testing"

	"github.com/racekit/racekit/bench/subjects/internal/racy"
)

// The correct accessor from many goroutines: race-free (runs under -race).
func TestGet(t *testing.T) {
	s := &Settings{keys: 3}
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if v := s.Get("k2"); v != "v2" {
				t.Errorf("Get(k2) = %q", v)
			}
		}()
	}
	wg.Wait()
}

// Both accessors: every lookup gets an answer; a stale one (possible on
// weakly ordered hardware) is logged, not failed.
func TestRun(t *testing.T) {
	racy.Skip(t)
	cfg := DefaultConfig()
	r := Run(cfg)
	if r.Lookups != 2*cfg.Readers*cfg.Keys || r.Correct > r.Lookups {
		t.Fatalf("got %+v", r)
	}
	if r.Correct != r.Lookups {
		t.Logf("fast path read stale configuration: %+v", r)
	}
}
