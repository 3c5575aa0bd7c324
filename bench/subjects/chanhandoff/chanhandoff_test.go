package chanhandoff

import (
	"testing"

	"github.com/racekit/racekit/bench/subjects/internal/racy"
)

// The recycling pipeline is race-free and exact (runs under -race).
func TestPipeline(t *testing.T) {
	for _, nbuf := range []int{1, 2, 5} {
		if got, want := Pipeline(30, nbuf), PipelineSum(30, 16); got != want {
			t.Fatalf("%d buffers: sum %d, want %d", nbuf, got, want)
		}
	}
}

// The reusing logger: the receiver may see a record being refilled.
func TestLog(t *testing.T) {
	racy.Skip(t)
	cfg := DefaultConfig()
	r := Run(cfg)
	want := 0
	for i := 0; i < cfg.Batches; i++ {
		want += i*10 + i%3
	}
	if r.Pipeline != PipelineSum(cfg.Batches, 16) {
		t.Fatalf("pipeline sum %d", r.Pipeline)
	}
	if r.Log != want {
		t.Logf("logger checksum %d, want %d: records were overwritten", r.Log, want)
	}
}
