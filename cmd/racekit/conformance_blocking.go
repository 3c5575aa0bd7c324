package main

import (
	"fmt"
	"io"
	"strings"
)

// printBlocking prints the tests the deadlock and leak detectors reported:
// those the suite does not leave blocked (false alarms) apart from those
// it does (suiteLeaks).
func printBlocking(w io.Writer, cases []*confCase) {
	var blocking, known []string
	ran := 0
	for _, k := range cases {
		if k.rkRanned && k.rkErr == "" {
			ran++
		}
		switch {
		case k.rkBlocking > 0 && suiteLeaks[k.name] != "":
			known = append(known, fmt.Sprintf("%s (%d: %s)", k.name, k.rkBlocking, suiteLeaks[k.name]))
		case k.rkBlocking > 0:
			blocking = append(blocking, fmt.Sprintf("%s (%d)", k.name, k.rkBlocking))
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

// suiteLeaks are the tests of Go's race suite that leave a goroutine
// blocked forever (read in their source; go.uber.org/goleak would report
// them too), with what is left blocked. The suite has no deadlock.
var suiteLeaks = map[string]string{
	"TestNoRaceSelect4": "its worker loops on a select receiving from queue, which no one sends to after the test",
}
