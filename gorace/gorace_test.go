package gorace

import "testing"

func TestOptions(t *testing.T) {
	cases := []struct {
		gorace  string
		stacks  bool
		sleepMS int
	}{
		{"", true, 1000},
		{"atexit_sleep_ms=0", true, 0},
		{"suppress_equal_stacks=0 atexit_sleep_ms=250", false, 250},
		{"suppress_equal_stacks=false,atexit_sleep_ms=5", false, 5},
		{"halt_on_error=1:suppress_equal_stacks=no", false, 1000},
		{"suppress_equal_stacks=0 suppress_equal_stacks=1", true, 1000},
		{"suppress_equal_stacks=maybe atexit_sleep_ms=-3", true, 1000},
		{"atexit_sleep_ms=12x\tsuppress_equal_stacks", true, 1000},
		{"atexit_sleep_ms=99999999999", true, 1000},
		{"=1 atexit_sleep_ms=", true, 1000},
	}
	for _, c := range cases {
		o := Options(c.gorace)
		if got := Bool(o, "suppress_equal_stacks", true); got != c.stacks {
			t.Errorf("%q: suppress_equal_stacks %v, want %v", c.gorace, got, c.stacks)
		}
		if got := Int(o, "atexit_sleep_ms", 1000); got != c.sleepMS {
			t.Errorf("%q: atexit_sleep_ms %d, want %d", c.gorace, got, c.sleepMS)
		}
	}
}

func FuzzOptions(f *testing.F) {
	f.Add("suppress_equal_stacks=0,atexit_sleep_ms=5")
	f.Fuzz(func(t *testing.T, s string) {
		o := Options(s)
		for name := range o {
			if name == "" {
				t.Fatalf("%q: empty name", s)
			}
		}
		if n := Int(o, "atexit_sleep_ms", 7); n < 0 {
			t.Fatalf("%q: negative %d", s, n)
		}
	})
}
