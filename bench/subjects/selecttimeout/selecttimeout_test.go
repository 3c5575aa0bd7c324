package selecttimeout

import (
	"testing"
	"time"

	"github.com/racekit/racekit/bench/subjects/internal/racy"
)

// With all the time in the world every query is answered through the done
// branch: race-free (runs under -race) and exact.
func TestAnswered(t *testing.T) {
	c := &Client{}
	defer c.Close()
	for q := 0; q < 3; q++ {
		v, ok := c.Query(q, 100, time.Minute)
		if !ok || v != backend(100, q) {
			t.Fatalf("query %d = %d, %v; want %d, true", q, v, ok, backend(100, q))
		}
	}
}

// Short timeouts: every query ends one way or the other, and all
// abandoned calls finish before Close returns.
func TestTimeouts(t *testing.T) {
	racy.Skip(t)
	cfg := DefaultConfig()
	r := Run(cfg)
	if r.Answered+r.TimedOut != cfg.Queries || r.Partial > r.TimedOut {
		t.Fatalf("got %+v", r)
	}
	t.Logf("%+v", r)
}
