package philosophers

import "testing"

// Race-free (runs under -race): every meal uses two forks and one bowl.
func TestRun(t *testing.T) {
	cfg := DefaultConfig()
	r := Run(cfg)
	meals := cfg.Philosophers * cfg.Meals
	if r != (Result{Uses: 2 * meals, Bowls: meals}) {
		t.Fatalf("got %+v, want %d uses, %d bowls", r, 2*meals, meals)
	}
}
