package main

import (
	"strings"
	"testing"
)

// printBlocking counts a report on a test the suite leaves blocked
// (TestNoRaceSelect4) apart from the false alarms, and the tests that ran.
func TestPrintBlocking(t *testing.T) {
	cases := []*confCase{
		{name: "TestNoRaceSelect4", rkRanned: true, rkBlocking: 1},
		{name: "TestRaceSelect1", rkRanned: true, rkBlocking: 2},
		{name: "TestRaceQuiet", rkRanned: true},
		{name: "TestBroken", rkRanned: true, rkErr: "no trace"},
	}
	var b strings.Builder
	printBlocking(&b, cases)
	got := b.String()
	for _, want := range []string{
		"(false alarms): in 1 of 3 tests\n",
		"reported: TestRaceSelect1 (2)\n",
		"leaks the suite has, reported: TestNoRaceSelect4 (1: its worker loops",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	var none strings.Builder
	printBlocking(&none, cases[2:3])
	if s := none.String(); s != "potential deadlocks or leaks not in the suite (false alarms): in 0 of 1 tests\n" {
		t.Errorf("no reports: got %q", s)
	}
}
