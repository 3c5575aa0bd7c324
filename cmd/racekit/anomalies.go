package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/racekit/racekit/confirm"
	"github.com/racekit/racekit/detect/anomaly"
	"github.com/racekit/racekit/report"
)

var cmdAnomalies = register(&command{
	name:      "anomalies",
	usageLine: "anomalies [-patterns FILE] [-html DIR] [-kinds race,atomicity,asv] [-atomic-funcs NAMES] [-keep-infeasible] [-prefix-cap N] TRACE",
	short:     "predict access anomalies (PECAN) and generate a schedule clip for each",
	long: `
Anomalies reads a trace and searches it for access anomalies with PECAN's
pattern-directed search (Huang and Zhang, ISSTA'11): data races, atomicity
violations and the eleven atomic-set serializability violations, in the
recorded run or in any reordering the hybrid model allows (no common lock,
no order through fork/join, messages or atomics). Each anomaly, one per
pattern and source-site combination, comes with a clip: the ordered events
of a schedule that makes it happen, which a controlled scheduler can follow.
Anomalies are potential until a re-execution confirms them.

The result is printed as JSON: {"anomalies": [...], "stats": {...}}.

-kinds selects built-in families (race, atomicity, asv; default all).
-patterns adds user patterns from FILE, one per line in the paper's notation:

	NAME T=t1-t2-t1 SV=s1-s1-s1 AR=u1-u2-u1 AT=r-w-r [consecutive]

Atomic regions are critical sections and the invocations of functions
marked //racekit:atomic (a line of their doc comment; RegionBegin/End in
the trace); -atomic-funcs makes invocations of the named functions (comma-separated,
package-qualified as in the trace, or "all") atomic regions too.

-html DIR writes one self-contained HTML page per clip and an index.html.

Exit status: 0 none found, 66 anomalies found, 1 bad input, 2 usage.
`,
})

func init() { cmdAnomalies.run = runAnomalies }

var (
	anomPatterns = cmdAnomalies.flags.String("patterns", "", "file of user patterns")
	anomHTML     = cmdAnomalies.flags.String("html", "", "write HTML clip pages and an index to this directory")
	anomKinds    = cmdAnomalies.flags.String("kinds", "race,atomicity,asv", "built-in pattern families: race, atomicity, asv (empty: none)")
	anomFuncs    = cmdAnomalies.flags.String("atomic-funcs", "", "functions whose invocations are atomic regions: comma-separated names, or all")
	anomKeep     = cmdAnomalies.flags.Bool("keep-infeasible", false, "also report anomalies whose generated schedule is infeasible (likely false)")
	anomCap      = cmdAnomalies.flags.Int("prefix-cap", 0, "stop expanding a pattern prefix after this many candidates: faster on long traces, misses anomalies (0: no cap)")
)

func runAnomalies(c *command, args []string) int {
	if len(args) != 1 {
		c.errorf("expected exactly one trace file, got %d arguments", len(args))
		return exitUsage
	}
	patterns, code := anomalyPatterns(c, *anomKinds, *anomPatterns)
	if code != exitOK {
		return code
	}
	opt := anomaly.Options{KeepInfeasible: *anomKeep, PrefixCap: *anomCap, AtomicFunc: atomicFuncs(*anomFuncs)}
	tr, err := confirm.ReadTrace(args[0], c.warn)
	if err != nil {
		c.errorf("%v", err)
		return exitError
	}
	res := anomaly.Find(tr, patterns, opt)
	if res.Anomalies == nil {
		res.Anomalies = []anomaly.Anomaly{}
	}
	if err := writeJSON(os.Stdout, struct {
		Trace     string            `json:"trace"`
		Anomalies []anomaly.Anomaly `json:"anomalies"`
		Stats     map[string]int64  `json:"stats"`
	}{args[0], res.Anomalies, res.Stats}); err != nil {
		c.errorf("%v", err)
		return exitError
	}
	if *anomHTML != "" {
		if err := writeClipPages(*anomHTML, args[0], res.Anomalies); err != nil {
			c.errorf("%v", err)
			return exitError
		}
	}
	if len(res.Anomalies) > 0 {
		return exitRaces
	}
	return exitOK
}

// anomalyPatterns returns the built-in patterns of the families in kinds
// and the user patterns of file (if not ""), or an exit code.
func anomalyPatterns(c *command, kinds, file string) ([]*anomaly.Pattern, int) {
	ks, ok := parseAnomalyKinds(c, kinds)
	if !ok {
		return nil, exitUsage
	}
	patterns := anomaly.Kinds(anomaly.Builtin(), ks...)
	if file != "" {
		ps, err := anomaly.LoadPatterns(file)
		if err != nil {
			c.errorf("%v", err)
			return nil, exitError
		}
		patterns = append(patterns, ps...)
	}
	if len(patterns) == 0 {
		c.errorf("no patterns: give -kinds or -patterns")
		return nil, exitUsage
	}
	return patterns, exitOK
}

// atomicFuncs is Options.AtomicFunc for an -atomic-funcs list: the named
// functions (comma-separated, package-qualified as in the trace, or
// "all"), nil for none.
func atomicFuncs(list string) func(string) bool {
	list = strings.TrimSpace(list)
	if list == "" {
		return nil
	}
	names := map[string]bool{}
	for _, n := range strings.Split(list, ",") {
		names[strings.TrimSpace(n)] = true
	}
	return func(name string) bool { return names["all"] || names[name] }
}

func writeClipPages(dir, traceName string, as []anomaly.Anomaly) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var entries []report.IndexEntry
	for i := range as {
		name := fmt.Sprintf("clip-%03d-%s.html", i+1, as[i].Pattern)
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		err = report.ClipHTML(f, &as[i])
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		entries = append(entries, report.IndexEntry{Anomaly: &as[i], Href: name})
	}
	f, err := os.Create(filepath.Join(dir, "index.html"))
	if err != nil {
		return err
	}
	err = report.ClipIndexHTML(f, "racekit anomalies: "+traceName, entries)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// parseAnomalyKinds is the pattern families a -kinds list names, comma-separated.
func parseAnomalyKinds(c *command, s string) ([]anomaly.Kind, bool) {
	var kinds []anomaly.Kind
	for _, k := range strings.Split(s, ",") {
		switch k = strings.TrimSpace(k); k {
		case "":
		case "race", "atomicity", "asv":
			kinds = append(kinds, anomaly.Kind(k))
		default:
			c.errorf("unknown kind %q (want race, atomicity, asv)", k)
			return nil, false
		}
	}
	return kinds, true
}
