package httpsvc

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/racekit/racekit/bench/subjects/internal/racy"
)

// The parts without concurrency, race-free (they run under -race).
func TestConfigPatch(t *testing.T) {
	c := DefaultServiceConfig()
	p, err := ParsePatch([]byte(`{"cache_ttl_ms": 20, "read_only": true}`))
	if err != nil {
		t.Fatal(err)
	}
	n, err := p.Apply(c)
	if err != nil || n.CacheTTL != 20*time.Millisecond || !n.ReadOnly || n.Version != 2 || c.ReadOnly {
		t.Fatalf("Apply = %+v, %v (original %+v)", n, err, c)
	}
	zero := 0
	if _, err := (&ConfigPatch{CacheCapacity: &zero}).Apply(c); err == nil || !strings.Contains(err.Error(), "cache_capacity") {
		t.Fatalf("capacity 0 accepted: %v", err)
	}
	if _, err := ParsePatch([]byte(`{"bogus": 1}`)); err == nil {
		t.Fatal("unknown field accepted")
	}
}

func TestCacheLRU(t *testing.T) {
	now := time.Unix(1000, 0)
	c := NewCache(2, time.Minute)
	a, b, d := &Item{ID: "a"}, &Item{ID: "b"}, &Item{ID: "d"}
	c.Set("a", a, now)
	c.Set("b", b, now.Add(time.Second))
	if it, ok := c.Get("a", now.Add(2*time.Second)); !ok || it != a {
		t.Fatal("a not cached")
	}
	c.Set("d", d, now.Add(3*time.Second)) // evicts b: a was accessed later
	if _, ok := c.Get("b", now.Add(4*time.Second)); ok {
		t.Fatal("b survived eviction")
	}
	if _, ok := c.Get("a", now.Add(2*time.Minute)); ok {
		t.Fatal("expired entry served")
	}
	if st := c.Stats(); st.Entries != 2 || st.Evicted != 1 || st.Hits != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestPoolSequential(t *testing.T) {
	p := NewPool(NewStore(2), 1)
	c1, err := p.Get()
	if err != nil {
		t.Fatal(err)
	}
	it, err := c1.Query("item-1", 0)
	if err != nil || it.Price != 125 {
		t.Fatalf("Query = %+v, %v", it, err)
	}
	p.Put(c1)
	c2, _ := p.Get()
	if c2 != c1 || p.Stats().Created != 1 {
		t.Fatal("idle connection not reused")
	}
	p.Put(c2)
	p.Close()
	if _, err := p.Get(); err != ErrPoolClosed {
		t.Fatalf("Get after Close = %v", err)
	}
}

// The whole service under load. The races (see doc.go) corrupt only
// statistics and bookkeeping: every response is well-formed, and the
// store's locked write count matches the updates the clients saw succeed.
func TestService(t *testing.T) {
	racy.Skip(t)
	cfg := DefaultConfig()
	r, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for code, n := range r.ByStatus {
		if code != http.StatusOK && code != http.StatusConflict {
			t.Errorf("%d responses with status %d", n, code)
		}
	}
	if r.BadItems != 0 || r.Gets == 0 || r.Stats.Writes != r.Updates || r.Stats.Reloads != 1 || r.Stats.Version != 2 {
		t.Fatalf("got %+v", r)
	}
	if r.Requests != cfg.Clients*cfg.Requests {
		t.Fatalf("%d requests sent, want %d", r.Requests, cfg.Clients*cfg.Requests)
	}
	for code := range r.Shutdown {
		if code != http.StatusOK && code != http.StatusServiceUnavailable {
			t.Errorf("status %d during shutdown", code)
		}
	}
}
