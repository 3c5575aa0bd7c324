package confirm

import "testing"

// A deadlock is named by its blocked operations, not by which goroutine
// (its name, its point index) waits in each: two runs whose goroutines
// were created in another order are one deadlock.
func TestBlockedKey(t *testing.T) {
	a := blockedKey([]string{"g0#5 wait x/a_test.go:30", "g0.2#1 send x/a_test.go:26 (parked)", "g0.3#1 send x/a_test.go:26 (parked)"})
	b := blockedKey([]string{"g0.3#2 send x/a_test.go:26 (parked)", "g0#7 wait x/a_test.go:30", "g0.1#1 send x/a_test.go:26 (parked)"})
	if a != b {
		t.Errorf("one deadlock, two keys:\n%s\n%s", a, b)
	}
	if c := blockedKey([]string{"g0#5 wait x/a_test.go:30", "g0.2#1 send x/a_test.go:27 (parked)"}); c == a {
		t.Errorf("two deadlocks, one key %s", c)
	}
	if want := "send x/a_test.go:26 (parked); send x/a_test.go:26 (parked); wait x/a_test.go:30"; a != want {
		t.Errorf("key %q, want %q", a, want)
	}
}

// The replay command of an exploration run has a flag without an argument.
func TestReplayCommandBoolFlag(t *testing.T) {
	if got, want := replayCommand(7, "-delays", "", "./p", []string{"-run", "TestX"}), "racekit replay -seed 7 -delays ./p -- -run TestX"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := replayCommand(7, "-cycle", "a.go:1>a.go:2", "./p", nil), "racekit replay -seed 7 -cycle 'a.go:1>a.go:2' ./p"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
