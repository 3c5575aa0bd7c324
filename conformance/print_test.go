package conformance

import (
	"strings"
	"testing"
)

// PrintBlocking counts a report on a test the suite leaves blocked
// (TestNoRaceSelect4) apart from the false alarms, and the tests that ran.
func TestPrintBlocking(t *testing.T) {
	cases := []*Case{
		{Name: "TestNoRaceSelect4", Ran: true, Blocking: 1},
		{Name: "TestRaceSelect1", Ran: true, Blocking: 2},
		{Name: "TestRaceQuiet", Ran: true},
		{Name: "TestBroken", Ran: true, Err: "no trace"},
	}
	var b strings.Builder
	PrintBlocking(&b, cases)
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
	PrintBlocking(&none, cases[2:3])
	if s := none.String(); s != "potential deadlocks or leaks not in the suite (false alarms): in 0 of 1 tests\n" {
		t.Errorf("no reports: got %q", s)
	}
}

// Print's table gives each case's verdict, and the summary counts the
// TestRace* and TestNoRace* tests that did not skip themselves.
func TestPrint(t *testing.T) {
	res := &Result{Cases: []*Case{
		{Name: "TestNoRaceOnce", Ran: true, GoRan: true, Race: true},
		{Name: "TestNoRaceQuiet", Ran: true, GoRan: true},
		{Name: "TestRaceFailingX", WantRace: true, Failing: true, Ran: true, GoRan: true},
		{Name: "TestRaceInt", WantRace: true, Ran: true, GoRan: true, GoRace: true, Race: true, Report: "REPORT\n"},
		{Name: "TestRaceBroken", WantRace: true, Ran: true, Err: "no trace"},
		{Name: "TestRaceSkip", WantRace: true, Ran: true, Skipped: true},
	}}
	var b strings.Builder
	Print(&b, res)
	want := `TestNoRaceOnce                               norace  go:-     racekit:race  FALSE RACE
TestNoRaceQuiet                              norace  go:-     racekit:-     ok
TestRaceFailingX                             race    go:-     racekit:-     MISSED (Failing: Go's detector also expected wrong)
TestRaceInt                                  race    go:race  racekit:race  ok
REPORT
TestRaceBroken                               race             racekit:?     ERROR no trace
TestRaceSkip                                 race             racekit:-     SKIPPED (the test skips itself)

TestRace*:   racekit reports 1 of 3 (33.3%); go test -race reports 1
TestNoRace*: racekit reports a race in 1 of 2
missed: TestRaceFailingX TestRaceBroken
false races: TestNoRaceOnce
`
	if got := b.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	res.Blocking = true
	b.Reset()
	Print(&b, res)
	if !strings.HasSuffix(b.String(), "(false alarms): in 0 of 5 tests\n") {
		t.Errorf("with Blocking, no PrintBlocking lines at the end:\n%s", b.String())
	}
}
