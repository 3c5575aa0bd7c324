package conformance

import (
	"fmt"
	"io"
	"strings"
)

// Print writes a line per case (its expectation, go test -race's and
// racekit's verdicts, and racekit's report with Options.Verbose), then the
// share of TestRace* tests racekit reports, the TestNoRace* tests it
// reports a race in, the misses and false races and, with
// Options.Blocking, PrintBlocking's lines.
func Print(w io.Writer, res *Result) {
	var racePos, raceAll, goRacePos, falseRaces, noRaceAll int
	var misses, falses []string
	for _, k := range res.Cases {
		printCase(w, k)
		if k.Skipped {
			continue
		}
		if strings.HasPrefix(k.Name, "TestRace") {
			raceAll++
			if k.Race {
				racePos++
			} else {
				misses = append(misses, k.Name)
			}
			if k.GoRace {
				goRacePos++
			}
		} else if strings.HasPrefix(k.Name, "TestNoRace") {
			noRaceAll++
			if k.Race {
				falseRaces++
				falses = append(falses, k.Name)
			}
		}
	}
	fmt.Fprintf(w, "\nTestRace*:   racekit reports %d of %d (%.1f%%)", racePos, raceAll, pct(racePos, raceAll))
	if goRacePos > 0 {
		fmt.Fprintf(w, "; go test -race reports %d", goRacePos)
	}
	fmt.Fprintf(w, "\nTestNoRace*: racekit reports a race in %d of %d\n", falseRaces, noRaceAll)
	if len(misses) > 0 {
		fmt.Fprintf(w, "missed: %s\n", strings.Join(misses, " "))
	}
	if len(falses) > 0 {
		fmt.Fprintf(w, "false races: %s\n", strings.Join(falses, " "))
	}
	if res.Blocking {
		PrintBlocking(w, res.Cases)
	}
}

// printCase writes k's line of the table and its report.
func printCase(w io.Writer, k *Case) {
	want := "norace"
	if k.WantRace {
		want = "race"
	}
	verdict := "ok"
	switch {
	case k.Skipped:
		verdict = "SKIPPED (the test skips itself)"
	case k.Err != "":
		verdict = "ERROR " + k.Err
	case k.WantRace && !k.Race:
		verdict = "MISSED"
	case !k.WantRace && k.Race:
		verdict = "FALSE RACE"
	}
	if k.Failing && verdict != "ok" {
		verdict += " (Failing: Go's detector also expected wrong)"
	}
	goCol := ""
	if k.GoRan {
		goCol = "go:" + yesNo(true, k.GoRace)
	}
	fmt.Fprintf(w, "%-44s %-7s %-8s racekit:%-5s %s\n", k.Name, want, goCol, yesNo(k.Err == "", k.Race), verdict)
	if k.Report != "" {
		fmt.Fprint(w, k.Report)
	}
}

// PrintBlocking writes the tests the deadlock and leak detectors
// reported: those the suite does not leave blocked (false alarms) apart
// from those it does (SuiteLeaks).
func PrintBlocking(w io.Writer, cases []*Case) {
	var blocking, known []string
	ran := 0
	for _, k := range cases {
		if k.Ran && k.Err == "" {
			ran++
		}
		switch {
		case k.Blocking > 0 && SuiteLeaks[k.Name] != "":
			known = append(known, fmt.Sprintf("%s (%d: %s)", k.Name, k.Blocking, SuiteLeaks[k.Name]))
		case k.Blocking > 0:
			blocking = append(blocking, fmt.Sprintf("%s (%d)", k.Name, k.Blocking))
		}
	}
	fmt.Fprintf(w, "potential deadlocks or leaks not in the suite (false alarms): in %d of %d tests\n", len(blocking), ran)
	if len(blocking) > 0 {
		fmt.Fprintf(w, "reported: %s\n", strings.Join(blocking, " "))
	}
	if len(known) > 0 {
		fmt.Fprintf(w, "leaks the suite has, reported: %s\n", strings.Join(known, "; "))
	}
}

// SuiteLeaks are the tests of Go's race suite that leave a goroutine
// blocked forever (read in their source; go.uber.org/goleak would report
// them too), with what is left blocked. The suite has no deadlock.
var SuiteLeaks = map[string]string{
	"TestNoRaceSelect4": "its worker loops on a select receiving from queue, which no one sends to after the test",
}

func yesNo(ran, race bool) string {
	switch {
	case !ran:
		return "?"
	case race:
		return "race"
	}
	return "-"
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}
