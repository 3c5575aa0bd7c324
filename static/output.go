package static

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/racekit/racekit/report/sarif"
)

// RelSite rewrites a "file:line:col" site relative to dir when the file is
// below it, as go vet prints positions.
func RelSite(site, dir string) string {
	if dir == "" {
		return site
	}
	file, rest := splitSite(site)
	if rel, err := filepath.Rel(dir, file); err == nil && !strings.HasPrefix(rel, "..") {
		return "./" + filepath.ToSlash(rel) + rest
	}
	return site
}

// splitSite splits "file:line:col" into "file" and ":line:col".
func splitSite(site string) (string, string) {
	i := strings.LastIndexByte(site, ':')
	if i < 0 {
		return site, ""
	}
	j := strings.LastIndexByte(site[:i], ':')
	if j < 0 {
		return site, ""
	}
	return site[:j], site[j:]
}

// WriteText prints the kept warnings like go vet: the first access's
// position, then the message naming both accesses, their threads and
// locks.
func WriteText(w io.Writer, ws []Warning, dir string) error {
	bw := bufio.NewWriter(w)
	for _, x := range ws {
		fmt.Fprintf(bw, "%s: potential race on %s: %s%s in %s holding %s; conflicts with %s at %s%s in %s holding %s\n",
			RelSite(x.A.Site, dir), x.Object, x.A.Kind, viaText(x.A.Via), x.A.Thread, lockList(x.A.Locks),
			x.B.Kind, RelSite(x.B.Site, dir), viaText(x.B.Via), x.B.Thread, lockList(x.B.Locks))
	}
	return bw.Flush()
}

// JSONReport is the --json output.
type JSONReport struct {
	Evidence string         `json:"evidence"` // always "potential"
	Warnings []Warning      `json:"warnings"`
	Filtered int            `json:"filtered"` // warnings removed by filters
	Removed  map[string]int `json:"removed"`  // by filter
	// DoubleLocks: locks taken while surely held (doublelock.go).
	DoubleLocks []DoubleLock `json:"double_locks"`
	Stats       *Stats       `json:"stats,omitempty"`
}

// WriteDoubleLocks prints each double lock like go vet: where the
// goroutine takes the lock again, then the message.
func WriteDoubleLocks(w io.Writer, ds []DoubleLock, dir string) error {
	bw := bufio.NewWriter(w)
	for i := range ds {
		d := ds[i]
		d.Lock2 = RelSite(d.Lock2, dir)
		fmt.Fprintf(bw, "%s: %s\n", RelSite(d.At, dir), d.Message())
	}
	return bw.Flush()
}

// WriteJSON writes the kept warnings and the filter counts as JSON.
func WriteJSON(w io.Writer, rep *Report, withStats bool) error {
	out := JSONReport{Evidence: "potential", Warnings: rep.Kept(), Removed: rep.Stats.Removed, DoubleLocks: rep.DoubleLocks}
	if out.Warnings == nil {
		out.Warnings = []Warning{}
	}
	if out.DoubleLocks == nil {
		out.DoubleLocks = []DoubleLock{}
	}
	out.Filtered = len(rep.Warnings) - len(out.Warnings)
	if withStats {
		out.Stats = &rep.Stats
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// Pair is one line of the --pairs output: a candidate site pair for a
// race-directed fuzzer to confirm.
type Pair struct {
	A      string `json:"a"`
	B      string `json:"b"`
	Object string `json:"object"`
}

// WritePairs writes one JSON object per line per kept warning.
func WritePairs(w io.Writer, ws []Warning) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for _, x := range ws {
		if err := enc.Encode(Pair{A: x.A.Site, B: x.B.Site, Object: x.Object}); err != nil {
			return err
		}
	}
	return bw.Flush()
}

func sarifLoc(site, dir string, id int, msg string) sarif.Location {
	file, rest := splitSite(site)
	if dir != "" {
		if rel, err := filepath.Rel(dir, file); err == nil && !strings.HasPrefix(rel, "..") {
			file = rel
		}
	}
	var line, col int
	parts := strings.Split(strings.TrimPrefix(rest, ":"), ":")
	if len(parts) == 2 {
		line, _ = strconv.Atoi(parts[0])
		col, _ = strconv.Atoi(parts[1])
	}
	loc := sarif.Location{ID: id, PhysicalLocation: &sarif.PhysicalLocation{
		ArtifactLocation: sarif.ArtifactLocation{URI: filepath.ToSlash(file)},
		Region:           &sarif.Region{StartLine: line, StartColumn: col},
	}}
	if msg != "" {
		loc.Message = &sarif.Message{Text: msg}
	}
	return loc
}

// WriteSARIF writes the kept warnings as a SARIF 2.1.0 log: one result per
// warning, located at the first access, with the second as a related
// location; rule RELAY-WW for write/write and RELAY-RW for read/write;
// then one per double lock (RELAY-DOUBLE-LOCK), located where the
// goroutine takes the lock again, with the Lock call as a related location.
func WriteSARIF(w io.Writer, ws []Warning, ds []DoubleLock, dir string) error {
	run := sarif.Run{Tool: sarif.Tool{Driver: sarif.Driver{
		Name:           "racekit-relay",
		InformationURI: "https://github.com/racekit/racekit",
		Rules: []sarif.Rule{
			{ID: "RELAY-RW", Name: "PotentialReadWriteRace", ShortDescription: sarif.Message{Text: "a read and a write from goroutines that may run in parallel, with no common lock"}},
			{ID: "RELAY-WW", Name: "PotentialWriteWriteRace", ShortDescription: sarif.Message{Text: "two writes from goroutines that may run in parallel, with no common lock"}},
			{ID: DoubleLockRule, Name: "PotentialDoubleLock", ShortDescription: sarif.Message{Text: "a lock taken while its goroutine surely holds it: the goroutine waits for itself"}},
		},
	}}}
	run.Results = []sarif.Result{}
	for _, x := range ws {
		run.Results = append(run.Results, sarif.Result{
			RuleID:    x.Rule(),
			Level:     "warning",
			Message:   sarif.Message{Text: fmt.Sprintf("potential race on %s: %s%s in %s holding %s; conflicts with the [%s](1)%s in %s holding %s", x.Object, x.A.Kind, viaText(x.A.Via), x.A.Thread, lockList(x.A.Locks), x.B.Kind, viaText(x.B.Via), x.B.Thread, lockList(x.B.Locks))},
			Locations: []sarif.Location{sarifLoc(x.A.Site, dir, 0, "")},
			RelatedLocations: []sarif.Location{
				sarifLoc(x.B.Site, dir, 1, x.B.Kind+" of "+x.Object),
			},
		})
	}
	for _, d := range ds {
		run.Results = append(run.Results, sarif.Result{
			RuleID:           DoubleLockRule,
			Level:            "warning",
			Message:          sarif.Message{Text: d.Message()},
			Locations:        []sarif.Location{sarifLoc(d.At, dir, 0, "")},
			RelatedLocations: []sarif.Location{sarifLoc(d.Lock2, dir, 1, "the Lock of "+d.Lock)},
		})
	}
	log := sarif.Log{
		Schema:  sarif.Schema,
		Version: sarif.Version,
		Runs:    []sarif.Run{run},
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(log)
}
