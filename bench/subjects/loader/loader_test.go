package loader

import (
	"testing"

	"github.com/racekit/racekit/bench/subjects/internal/racy"
)

// One loader, and the consumer waits for everything: nothing is lost.
func TestOneLoader(t *testing.T) {
	racy.Skip(t) // the consumer polls the count while the loader runs
	r := Run(Config{Loaders: 1, Items: 25, Need: 25})
	if r != (Result{Seen: 25, Count: 25, Loaded: 25}) {
		t.Fatalf("got %+v", r)
	}
}

// Two loaders: the store has every item; the count may fall short.
func TestTwoLoaders(t *testing.T) {
	racy.Skip(t)
	cfg := DefaultConfig()
	r := Run(cfg)
	if r.Loaded != cfg.Loaders*cfg.Items || r.Count > r.Loaded || r.Seen > cfg.Need {
		t.Fatalf("got %+v", r)
	}
}
