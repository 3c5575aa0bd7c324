package cache4j

import (
	"testing"
	"time"

	"github.com/racekit/racekit/bench/subjects/internal/racy"
)

// Without the cleaner running: put, get, expire, evict.
func TestCacheSequential(t *testing.T) {
	c := New(2, time.Hour, time.Hour)
	c.Put("a", "1")
	c.Put("b", "2")
	if v, ok := c.Get("a"); !ok || v != "1" {
		t.Fatalf("Get(a) = %q, %v", v, ok)
	}
	c.Get("a")
	c.Put("c", "3") // over capacity: the least-hit live entry goes
	c.clean()
	if _, ok := c.Get("a"); !ok || len(c.data) != 2 || c.evicted != 1 {
		t.Fatalf("after clean: %d entries, %d evicted, a present %v", len(c.data), c.evicted, ok)
	}
}

// The whole cache with its cleaner: every operation is a hit or a miss.
func TestRun(t *testing.T) {
	racy.Skip(t)
	cfg := DefaultConfig()
	r := Run(cfg)
	puts := 0
	for i := 0; i < cfg.Ops; i++ {
		if i%3 == 0 {
			puts++
		}
	}
	if r.Hits+r.Misses != cfg.Clients*(cfg.Ops-puts) || r.Rounds < 1 {
		t.Fatalf("got %+v", r)
	}
}
