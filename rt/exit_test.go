package rt

import (
	"testing"
	"time"
)

// GORACE's atexit_sleep_ms as the race runtime reads it: options split at
// spaces, commas or colons; the last one given wins; 1000 ms otherwise.
func TestAtexitSleep(t *testing.T) {
	for _, c := range []struct {
		gorace string
		want   time.Duration
	}{
		{"", time.Second},
		{"halt_on_error=1", time.Second},
		{"atexit_sleep_ms=0", 0},
		{"log_path=/tmp/x atexit_sleep_ms=250", 250 * time.Millisecond},
		{"atexit_sleep_ms=10,halt_on_error=1", 10 * time.Millisecond},
		{"atexit_sleep_ms=10:atexit_sleep_ms=20", 20 * time.Millisecond},
		{"atexit_sleep_ms=x", time.Second},
		{"atexit_sleep_ms=-5", time.Second},
		{"xatexit_sleep_ms=5", time.Second},
	} {
		if got := atexitSleep(c.gorace); got != c.want {
			t.Errorf("atexitSleep(%q) = %v, want %v", c.gorace, got, c.want)
		}
	}
}
