package jobsys

import (
	"strings"
	"testing"
	"time"

	"github.com/racekit/racekit/bench/subjects/internal/racy"
)

// The computations, sequentially (race-free; runs under -race).
func TestHandlers(t *testing.T) {
	tests := []struct {
		spec Spec
		want string
		err  string
	}{
		{Spec{Kind: KindWordCount, Input: "b a b. A", Attempts: 1}, "a=2 b=2", ""},
		{Spec{Kind: KindSort, Input: "c a b", Attempts: 1}, "a b c", ""},
		{Spec{Kind: KindChecksum, Input: "", Attempts: 1}, "00000000", ""},
		{Spec{Kind: KindPrimes, Input: "30", Attempts: 1}, "10", ""},
		{Spec{Kind: KindFlaky, Input: "2", Attempts: 3}, "ok after 2", ""},
		{Spec{Kind: KindFlaky, Input: "3", Attempts: 2}, "", "transient"},
	}
	for _, tt := range tests {
		got, err := Expected(tt.spec)
		if got != tt.want || (tt.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("%v: got %q, %v; want %q, %q", tt.spec, got, err, tt.want, tt.err)
		}
	}
	if (&Spec{Kind: "nope", Attempts: 1}).Validate() == nil || (&Spec{Kind: KindSort}).Validate() == nil {
		t.Error("invalid specs accepted")
	}
	if d := (Backoff{Base: time.Millisecond, Max: 5 * time.Millisecond}).Delay(4); d != 5*time.Millisecond {
		t.Errorf("Delay(4) = %v", d)
	}
}

// A priority queue in one goroutine.
func TestQueueOrder(t *testing.T) {
	q := NewQueue()
	for i, p := range []int{0, 2, 1, 2} {
		q.Push(&Job{id: i + 1, spec: Spec{Priority: p}})
	}
	q.Close()
	var got []int
	for j, ok := q.Pop(); ok; j, ok = q.Pop() {
		got = append(got, j.id)
	}
	if want := []int{2, 4, 3, 1}; len(got) != 4 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[3] != want[3] {
		t.Fatalf("pop order %v, want %v", got, want)
	}
}

// The whole system. The races touch only status reads, statistics and the
// aggregator's list: every job ends, every done job's result is right,
// the slow jobs fail by timeout (or, for the last one, are cancelled), the
// locked tag table counts every pipeline result, and every worker exits.
func TestSystem(t *testing.T) {
	racy.Skip(t)
	cfg := DefaultConfig()
	r, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	slow := 0
	for _, sp := range Specs(cfg.Jobs) {
		if sp.Kind == KindSlow {
			slow++
		}
	}
	// The cancelled job is the last, a slow one: it fails or is cancelled.
	if r.Wrong != 0 || r.Done+r.Failed+r.Cancelled != cfg.Jobs || r.Failed+r.Cancelled != slow || r.Cancelled > 1 {
		t.Fatalf("%s", r.Summary())
	}
	if r.Tagged != r.Done+r.Late || r.Aggregated > r.Tagged || r.Workers != 0 {
		t.Fatalf("%s (workers left %d, tagged %d)", r.Summary(), r.Workers, r.Tagged)
	}
}
