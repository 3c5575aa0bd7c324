package wcp_test

import (
	"slices"
	"testing"

	"github.com/racekit/racekit/gen"
	"github.com/racekit/racekit/trace"
)

// TestWCPContainsHBOnGeneratedTraces runs wcp and hb on thousands of
// generated traces of every shape and checks WCP ⊇ HB: every site pair hb
// reports, wcp reports (P_t ⊑ H_t), and so every planted race (the
// generator's ground truth, exactly hb's pairs).
func TestWCPContainsHBOnGeneratedTraces(t *testing.T) {
	count := 2000
	if testing.Short() {
		count = 400
	}
	var extra, hbTotal int
	for i := range count {
		cfg := gen.DefaultConfig()
		cfg.Seed = uint64(i + 1)
		cfg.Events = 300 + int64(i%7)*100
		cfg.Goroutines = 2 + i%5
		cfg.Shape = gen.Shapes()[i%len(gen.Shapes())]
		cfg.Vars = 8 + i%9
		cfg.Locks = 1 + i%3
		cfg.HandoffFraction = float64(i%3) * 0.1
		cfg.LockFraction = 0.15
		tr := trace.NewTrace()
		truth, err := gen.Generate(cfg, tr)
		if err != nil {
			t.Fatal(err)
		}
		w, h := runWCP(t, tr), runHB(t, tr)
		wp, hp := w.c.Pairs(), h.c.Pairs()
		for _, p := range hp {
			if !slices.Contains(wp, p) {
				t.Fatalf("config %+v: hb race %v missing from wcp", cfg, p)
			}
		}
		for _, p := range truth.Pairs() {
			if !slices.Contains(wp, p) {
				t.Fatalf("config %+v: planted race %v missing from wcp", cfg, p)
			}
		}
		if w.stats["illformed"] != 0 {
			t.Fatalf("config %+v: %d ill-formed events in a generated trace", cfg, w.stats["illformed"])
		}
		hbTotal += len(hp)
		extra += len(wp) - len(hp)
	}
	t.Logf("%d traces: %d hb site pairs, %d more from wcp", count, hbTotal, extra)
}
