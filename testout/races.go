package testout

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/racekit/racekit/analyze"
	"github.com/racekit/racekit/confirm"
	"github.com/racekit/racekit/detect/deadlock"
	"github.com/racekit/racekit/detect/leak"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/progress"
	"github.com/racekit/racekit/report"
	"github.com/racekit/racekit/trace"
	"github.com/racekit/racekit/trace/tracefile"
)

// raceCount is what racekit adds to a package's FAIL line: the number
// of distinct races it found there, and of lock-order cycles
// (--deadlocks) if any.
func raceCount(byTest []*testRaces) string {
	races, cycles, leaks, stalls := 0, 0, 0, 0
	for _, tr := range byTest {
		if tr.binary() {
			cycles += len(tr.cycles)
			leaks += len(tr.leaks)
			if tr.stall {
				stalls++
			}
		} else {
			races += tr.n - len(tr.again) // a race once, in the test whose output holds its report
		}
	}
	return findingCount(races, cycles, leaks, stalls)
}

// findingCount is raceCount's text for races, cycles and leaks.
func findingCount(races, cycles, leaks, stalls int) string {
	s := fmt.Sprintf(" (racekit: %d data race(s)", races)
	if cycles > 0 {
		s += fmt.Sprintf(", %d potential deadlock(s)", cycles)
	}
	if leaks > 0 {
		s += fmt.Sprintf(", %d leaked goroutine(s)", leaks)
	}
	if stalls > 0 {
		s += ", deadlocked"
	}
	return s + ")"
}

// testRaces are the races of one test, or (test "", cycles or leaks set)
// the lock-order cycles (--deadlocks) and leaked goroutines (--leaks) of
// one test binary.
type testRaces struct {
	test    string // "": outside any test
	a       *analyze.Analysis
	results []report.Result
	n       int
	// again: races first reported in another test (named) that occurred
	// again in this one, or were reported while this one ran (running);
	// they fail it, as go test -race fails each test
	// during which a race is reported.
	again  []againRace
	cycles []deadlock.Cycle
	leaks  []leak.Leak
	stall  bool // the binary's run stalled: a.Stalled is its deadlock
}

// againRace is a race of an earlier test's report that occurred again, or
// another test's race reported while this test ran.
type againRace struct {
	first   string // the test whose output holds the report
	group   finding.Group
	running bool // not again: this test was running when it was reported
}

// binary reports whether tr holds the findings of a test binary (cycles,
// leaks), not races.
func (tr *testRaces) binary() bool { return len(tr.cycles) > 0 || len(tr.leaks) > 0 || tr.stall }

// packageRaces analyzes the traces of pkg's test binary not analyzed yet
// and returns their races by test, in order of first report.
func (o *Output) packageRaces(pkg string) ([]*testRaces, int) {
	prefix := traceFileName(pkg+".test") + "."
	var byTest, cycles []*testRaces
	total, races := 0, 0
	for _, path := range tracefile.List(o.TraceDir) {
		if o.analyzed[path] || !strings.HasPrefix(filepath.Base(path), prefix) {
			continue
		}
		o.analyzed[path] = true
		o.traces[pkg] = append(o.traces[pkg], path)
		a, ok := o.analyze(path)
		if !ok {
			continue
		}
		stall := a.StallTests != nil
		if a.Races == 0 && len(a.Cycles) == 0 && len(a.Leaks) == 0 && !stall {
			continue
		}
		if len(a.Cycles) > 0 || len(a.Leaks) > 0 || stall {
			// Potential deadlocks, leaks and a stall come after the
			// races, as findings of the binary: a cycle's goroutines may
			// belong to several tests, a leak shows at the binary's end.
			n := len(a.Cycles) + len(a.Leaks)
			if stall {
				n++
			}
			cycles = append(cycles, &testRaces{a: a, cycles: a.Cycles, leaks: a.Leaks, stall: stall, n: n})
			total += n
		}
		o.SARIF.note(pkg, a)
		index := map[string]*testRaces{}
		of := func(name string) *testRaces {
			tr := index[name]
			if tr == nil {
				tr = &testRaces{test: name, a: a, results: make([]report.Result, len(a.Results))}
				for i := range tr.results {
					r := a.Results[i]
					r.Groups = nil
					tr.results[i] = r
				}
				index[name] = tr
				byTest = append(byTest, tr)
			}
			return tr
		}
		for ri, res := range a.Results {
			for _, g := range res.Groups {
				name := res.Tests[g.Pair()]
				o.addGiven(pkg, name, res.Detector, a.Meta, g)
				tr := of(name)
				tr.results[ri].Groups = append(tr.results[ri].Groups, g)
				tr.n++
				total++
				races++
				for _, later := range res.Again[g.Pair()] {
					tr := of(later)
					tr.again = append(tr.again, againRace{first: name, group: g})
					tr.n++
				}
				for _, other := range res.Running[g.Pair()] {
					tr := of(other)
					tr.again = append(tr.again, againRace{first: name, group: g, running: true})
					tr.n++
				}
			}
		}
	}
	// The races outside any test last, as testing reports them after
	// the tests.
	sort.SliceStable(byTest, func(i, j int) bool { return byTest[i].test != "" && byTest[j].test == "" })
	o.races += races
	return append(byTest, cycles...), total
}

// addGiven notes a race of pkg's test name that detector reported, for
// --confirm: observed when the detector is precise (its run had it),
// predicted when it predicts, potential otherwise.
func (o *Output) addGiven(pkg, test, detector string, m *trace.Meta, g finding.Group) {
	pair, ok := confirm.RacePair(m, g.Prev, g.Cur)
	if !ok {
		return
	}
	source := "potential"
	switch detector {
	case "hb", "fasttrack":
		source = "observed"
	case "rdit", "mcm", "wcp":
		source = "predicted"
	}
	top, _, _ := strings.Cut(test, "/")
	o.given = append(o.given, confirm.Given{Package: pkg, Pair: pair, Source: source, Test: top})
}

// writeTests writes each test's reports and its failure, line by line:
// the failure's message before its "--- FAIL" line when chatty (-v, and
// -json), after it otherwise, as package testing orders them.
func (o *Output) writeTests(byTest []*testRaces, chatty bool, line func(test, s string)) {
	for _, tr := range byTest {
		var b strings.Builder
		if err := report.Races(&b, tr.a.Meta, tr.results); err != nil {
			o.Errorf("%v", err)
		}
		if tr.binary() {
			if err := report.Deadlocks(&b, tr.a.Meta, tr.cycles, tr.a.Created); err != nil {
				o.Errorf("%v", err)
			}
			if err := report.Leaks(&b, tr.a.Meta, tr.leaks, tr.a.Created); err != nil {
				o.Errorf("%v", err)
			}
			if tr.stall {
				if err := report.Stall(&b, tr.a.Meta, tr.a.StallTests, tr.a.Stalled, tr.a.Created); err != nil {
					o.Errorf("%v", err)
				}
			}
			for _, s := range strings.SplitAfter(b.String(), "\n") {
				if s != "" {
					line("", s)
				}
			}
			if len(tr.cycles) > 0 {
				line("", fmt.Sprintf("racekit: %d potential deadlock(s) (lock-order cycles, --deadlocks)\n", len(tr.cycles)))
			}
			if len(tr.leaks) > 0 {
				line("", fmt.Sprintf("racekit: %d leaked goroutine(s) (blocked on channel, lock, WaitGroup or Cond operations when the tests ended, --leaks)\n", len(tr.leaks)))
			}
			continue
		}
		for _, ag := range tr.again {
			how := "again"
			if ag.running {
				how = "while this test ran"
			}
			fmt.Fprintf(&b, "==================\nWARNING: DATA RACE (%s: %s)\n==================\n", how, againText(tr.a.Meta, ag))
		}
		for _, s := range strings.SplitAfter(b.String(), "\n") {
			if s != "" {
				line(tr.test, s)
			}
		}
		races := "1 data race"
		if tr.n > 1 {
			races = fmt.Sprintf("%d data races", tr.n)
		}
		if tr.test == "" {
			line("", fmt.Sprintf("racekit: %s outside of test execution\n", races))
			continue
		}
		head := fmt.Sprintf("--- FAIL: %s (racekit: %s)\n", tr.test, races)
		msg := "    racekit: race detected during execution of test\n"
		if chatty {
			head, msg = msg, head
		}
		line(tr.test, head)
		line(tr.test, msg)
	}
}

// againText names a race that occurred again by its two sites and the
// test whose output shows its report.
func againText(m *trace.Meta, ag againRace) string {
	where := "outside of test execution"
	if ag.first != "" {
		where = "in " + ag.first
	}
	site := func(id trace.SiteID) string {
		st := m.Site(id)
		return fmt.Sprintf("%s:%d", filepath.Base(st.File), st.Line)
	}
	return fmt.Sprintf("the race between %s and %s, reported %s", site(ag.group.Cur.Site), site(ag.group.Prev.Site), where)
}

// analyze runs the detectors over one trace and prints its warnings.
func (o *Output) analyze(path string) (*analyze.Analysis, bool) {
	var a *analyze.Analysis
	var err error
	if ea := o.early.take(path); ea != nil {
		stop := progress.New("test", o.Quiet).AnalysisOf(path, &ea.events, ea.start)
		<-ea.done
		stop()
		a, err = ea.a, ea.err
	} else {
		progress, stop := progress.New("test", o.Quiet).Analysis(path)
		a, err = analyze.Trace(path, o.Options(progress))
		stop()
	}
	if err != nil {
		if fi, serr := os.Stat(path); serr == nil && fi.Size() == 0 {
			// A process killed before rt wrote the trace's header (a
			// child a test starts and kills: fasthttp's prefork) recorded
			// nothing: there is nothing to report, and no error.
			if o.Verbose {
				fmt.Fprintf(os.Stderr, "racekit test: %s: empty, its process ended before it recorded anything\n", filepath.Base(path))
			}
			return nil, false
		}
		o.Errorf("%v", err)
		o.err = true
		return nil, false
	}
	a.Leaks = leak.Without(a.Leaks, a.Meta, o.LeakIgnore)
	for _, w := range a.Warns {
		fmt.Fprintf(os.Stderr, "racekit test: warning: %s\n", w)
	}
	if o.Verbose {
		fmt.Fprintf(os.Stderr, "racekit test: %s: %d events analyzed in %v (%d goroutines on %d clock IDs)\n", a.Program, a.Events, a.Elapsed, a.Goroutines, a.ClockIDs)
		if a.Suppressed > 0 {
			fmt.Fprintf(os.Stderr, "racekit test: %s: %d race occurrence(s) not reported, as go test -race leaves them out: with an access made on the address before a race reported there (its race detector forgets them), or with the stacks of a race reported (GORACE=suppress_equal_stacks=0 reports these)\n", a.Program, a.Suppressed)
		}
	}
	return a, true
}

// Rest reports the races of the traces no package line claimed (a test
// binary run by other means than go test's packages), the way racekit
// run does, each followed by one FAIL line.
func (o *Output) Rest(w io.Writer) {
	defer o.early.close()
	for _, path := range tracefile.List(o.TraceDir) {
		if o.analyzed[path] {
			continue
		}
		o.analyzed[path] = true
		a, ok := o.analyze(path)
		if !ok || a.Races == 0 && len(a.Cycles) == 0 && len(a.Leaks) == 0 && a.StallTests == nil {
			continue
		}
		o.SARIF.note("", a)
		if err := a.Print(w); err != nil {
			o.Errorf("%v", err)
			o.err = true
		}
		fmt.Fprintf(w, "FAIL\t%s\t%s\n", strings.TrimSuffix(a.Program, ".test"), strings.TrimPrefix(findingCount(a.Races, len(a.Cycles), len(a.Leaks), min(1, len(a.Stalled))), " "))
		o.failed++
		o.races += a.Races
	}
}

// traceFileName is rt's name of the trace of a binary whose main package
// is path (rt.traceName): the trace is <name>.<pid>.rkt.
func traceFileName(path string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			return r
		}
		return '_'
	}, path)
}
