package verdictdiff

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// Print writes a line per package (its plain and instrumented verdicts
// and races, marked when the behaviour changed) and the share of the
// packages passing plainly that pass instrumented.
func Print(w io.Writer, res *Result) {
	fmt.Fprintf(w, "%-60s %-9s %-9s %s\n", "package", "plain", "racekit", "races")
	for _, p := range res.Packages {
		mark := ""
		if p.Plain == "ok" && p.Racekit != "ok" {
			mark = "  BEHAVIOUR CHANGED"
		}
		fmt.Fprintf(w, "%-60s %-9s %-9s %d%s\n", p.Package, p.Plain, p.Racekit, p.Races, mark)
	}
	share := 0.0
	if res.Passing > 0 {
		share = 100 * float64(res.Kept) / float64(res.Passing)
	}
	fmt.Fprintf(w, "\n%d of %d packages whose tests pass plainly pass instrumented (%.1f%%)\n", res.Kept, res.Passing, share)
}

// WriteJSON writes res as indented JSON to the file path.
func WriteJSON(path string, res *Result) error {
	b, _ := json.MarshalIndent(res, "", "  ")
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
