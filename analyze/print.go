package analyze

import (
	"fmt"
	"io"

	"github.com/racekit/racekit/report"
)

// Print writes the races of the analysis like Go's race detector, then
// its lock-order cycles, leaked goroutines and a stalled run's deadlock,
// as racekit run and racekit test print them.
func (a *Analysis) Print(w io.Writer) error {
	if a.Races > 0 {
		if err := report.Text(w, a.Meta, a.Results); err != nil {
			return err
		}
	}
	if len(a.Cycles) > 0 {
		if err := report.Deadlocks(w, a.Meta, a.Cycles, a.Created); err != nil {
			return err
		}
		fmt.Fprintf(w, "Found %d potential deadlock(s)\n", len(a.Cycles))
	}
	if len(a.Leaks) > 0 {
		if err := report.Leaks(w, a.Meta, a.Leaks, a.Created); err != nil {
			return err
		}
		fmt.Fprintf(w, "Found %d leaked goroutine(s)\n", len(a.Leaks))
	}
	if a.StallTests != nil {
		if err := report.Stall(w, a.Meta, a.StallTests, a.Stalled, a.Created); err != nil {
			return err
		}
	}
	return nil
}
