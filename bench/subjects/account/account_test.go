package account

import (
	"testing"

	"github.com/racekit/racekit/bench/subjects/internal/racy"
)

// One teller: nothing runs concurrently with a transfer, so the total is
// exactly the initial deposits plus deposits minus withdrawals. This test
// is race-free and runs under -race too.
func TestSequentialTotal(t *testing.T) {
	r := Run(Config{Accounts: 3, Goroutines: 1, Iterations: 30})
	if r.Total != r.Expected || r.Expected != 3000+10*10-5*10 {
		t.Fatalf("total %d, expected %d (want both 3050)", r.Total, r.Expected)
	}
}

// Several tellers: transfers race with the target's locked updates. The
// total may lose credits; the run must still finish and audit everything.
func TestConcurrent(t *testing.T) {
	racy.Skip(t)
	cfg := DefaultConfig()
	r := Run(cfg)
	if r.Audits != cfg.Accounts*cfg.Iterations {
		t.Errorf("audits = %d, want %d", r.Audits, cfg.Accounts*cfg.Iterations)
	}
	if r.Total != r.Expected {
		t.Logf("lost update: total %d, expected %d", r.Total, r.Expected)
	}
}
