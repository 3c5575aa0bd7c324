package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/racekit/racekit/analyze"
	"github.com/racekit/racekit/detect/deadlock"
	"github.com/racekit/racekit/detect/leak"
	"github.com/racekit/racekit/report"
	"github.com/racekit/racekit/trace/tracefile"
)

// testOutput passes go test's standard output through, holding back the
// closing lines of each package (its "PASS" or "FAIL" and its "ok" or
// "FAIL" line; with -json, the package's final events) until its test
// binary's traces are analyzed: the binary has exited when go test prints
// them. A package with races then closes as go test -race closes it: each
// racy test's reports followed by
//
//	--- FAIL: TestX (racekit: 1 data race)
//	    racekit: race detected during execution of test
//
// then "FAIL" and "FAIL <pkg> <time> (racekit: N data race(s))". Every
// other line passes unchanged, as it comes. With -json each test's end
// (its "--- PASS" output event and its pass event; fail and skip too) is
// held back as well, so that a test ends once: a racy test then gets its
// reports as output events, then its "--- FAIL" and its fail event, and
// so do (without reports) the tests it is a subtest of, as go test -race
// fails them.
type testOutput struct {
	out      io.Writer
	json     bool
	chatty   bool // -v: testing prints a failed test's output before its "--- FAIL" line
	traceDir string
	algos    []string
	// leakIgnore: --leaks-ignore's functions (leak.Without).
	leakIgnore []string
	verbose    bool
	quiet      bool // no progress lines (test -q)
	errorf     func(format string, args ...any)

	analyzed map[string]bool // trace files done
	early    *earlyAnalyses  // analyses of traces begun while their binaries ran
	held     []string        // text: "PASS"/"FAIL" lines held back; -json: the package's closing events
	heldPkg  map[string][]string
	heldEnds map[string][]heldEnd // -json: per package, its tests' ends, in order
	failed   int                  // packages racekit failed
	lastFail bool                 // the last line was "FAIL" alone
	races    int
	err      bool // an analysis failed
}

// summaryLine is go test's last line for a package: "ok  \tp\t0.1s",
// "FAIL\tp\t0.1s", "FAIL\tp [build failed]", "?   \tp\t[no test files]".
var summaryLine = regexp.MustCompile(`^(ok  |FAIL|\?   )\t([^\t ]+)(.*)$`)

// run copies r to the output, line by line.
func (o *testOutput) run(r io.Reader) {
	o.analyzed = map[string]bool{}
	o.heldPkg = map[string][]string{}
	o.heldEnds = map[string][]heldEnd{}
	o.early = startEarly(o.traceDir, o.algos)
	for line := range queuedLines(r) {
		if o.json {
			o.jsonLine(line)
		} else {
			o.textLine(line)
		}
	}
	o.flushHeld()
	pkgs := make([]string, 0, len(o.heldEnds))
	for p := range o.heldEnds {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, p := range pkgs { // packages go test did not close
		for _, h := range o.heldEnds[p] {
			o.print(h.line)
		}
	}
	if !o.json && o.failed > 0 && !o.lastFail {
		o.print("FAIL\n")
	}
}

// queuedLines returns r's lines, read as they come whatever the consumer
// does: racekit analyzes a package's trace while go test runs the next
// package, and go test's copy of that package's output must not wait for
// racekit (it gives up WaitDelay after the test binary exits: "Test I/O
// incomplete", and fails the package; go-chi/chi's middleware package
// after the minute its root package's trace took to analyze).
func queuedLines(r io.Reader) <-chan string {
	in, out := make(chan string), make(chan string)
	go func() {
		br := bufio.NewReaderSize(r, 64<<10)
		for {
			line, err := br.ReadString('\n')
			if line != "" {
				in <- line
			}
			if err != nil {
				close(in)
				return
			}
		}
	}()
	go func(in <-chan string) {
		var q []string
		for in != nil || len(q) > 0 {
			var send chan string
			var next string
			if len(q) > 0 {
				send, next = out, q[0]
			}
			select {
			case l, ok := <-in:
				if !ok {
					in = nil
					continue
				}
				q = append(q, l)
			case send <- next:
				q = q[1:]
			}
		}
		close(out)
	}(in)
	return out
}

func (o *testOutput) print(s string) {
	io.WriteString(o.out, s)
	o.lastFail = s == "FAIL\n"
}

func (o *testOutput) flushHeld() {
	for _, h := range o.held {
		o.print(h)
	}
	o.held = o.held[:0]
}

func (o *testOutput) textLine(line string) {
	body := strings.TrimRight(line, "\r\n")
	if body == "PASS" || body == "FAIL" {
		o.flushHeld()
		o.held = append(o.held, line)
		return
	}
	m := summaryLine.FindStringSubmatch(body)
	if m == nil {
		o.flushHeld()
		o.print(line)
		return
	}
	byTest, n := o.packageRaces(m[2])
	if n == 0 {
		o.flushHeld()
		o.print(line)
		return
	}
	o.held = o.held[:0] // its PASS or FAIL: FAIL follows the reports
	o.writeTests(byTest, o.chatty, func(test, s string) { o.print(s) })
	o.print("FAIL\n")
	o.print("FAIL\t" + m[2] + m[3] + raceCount(byTest) + "\n")
	o.failed++
}

// testEvent is go test -json's event (cmd/test2json).
type testEvent struct {
	Time    *time.Time `json:",omitempty"`
	Action  string
	Package string   `json:",omitempty"`
	Test    string   `json:",omitempty"`
	Elapsed *float64 `json:",omitempty"`
	Output  *string  `json:",omitempty"`
}

// heldEnd is an event of a test's end, held back with -json.
type heldEnd struct {
	line string
	e    testEvent
}

// endLine is a test's last line: "--- PASS: TestX (0.00s)", indented
// for a subtest.
var endLine = regexp.MustCompile(`^(\s*)--- (PASS|FAIL|SKIP): (\S+) (\(.*\))\n$`)

func (o *testOutput) jsonLine(line string) {
	var e testEvent
	if json.Unmarshal([]byte(line), &e) != nil || e.Package == "" {
		o.print(line)
		return
	}
	if e.Test != "" {
		if e.Action == "pass" || e.Action == "fail" || e.Action == "skip" || e.Action == "output" && e.Output != nil && endLine.MatchString(*e.Output) {
			o.heldEnds[e.Package] = append(o.heldEnds[e.Package], heldEnd{line, e})
		} else {
			o.print(line)
		}
		return
	}
	switch {
	case e.Action == "output" && e.Output != nil && (*e.Output == "PASS\n" || *e.Output == "FAIL\n" || summaryLine.MatchString(strings.TrimSuffix(*e.Output, "\n"))):
		o.heldPkg[e.Package] = append(o.heldPkg[e.Package], line)
		return
	case e.Action != "pass" && e.Action != "fail":
		o.print(line)
		return
	}
	held := o.heldPkg[e.Package]
	delete(o.heldPkg, e.Package)
	ends := o.heldEnds[e.Package]
	delete(o.heldEnds, e.Package)
	byTest, n := o.packageRaces(e.Package)
	if n == 0 {
		for _, h := range ends {
			o.print(h.line)
		}
		for _, h := range held {
			o.print(h)
		}
		o.print(line)
		return
	}
	emit := func(ev testEvent) {
		now := time.Now()
		ev.Time = &now
		ev.Package = e.Package
		data, _ := json.Marshal(ev)
		o.print(string(data) + "\n")
	}
	o.endTests(ends, byTest, emit)
	var elapsed string
	for _, h := range held {
		var he testEvent
		if json.Unmarshal([]byte(h), &he) == nil && he.Output != nil {
			if m := summaryLine.FindStringSubmatch(strings.TrimRight(*he.Output, "\n")); m != nil {
				elapsed = m[3]
			}
		}
	}
	fail, sum := "FAIL\n", "FAIL\t"+e.Package+elapsed+raceCount(byTest)+"\n"
	emit(testEvent{Action: "output", Output: &fail})
	emit(testEvent{Action: "output", Output: &sum})
	e.Action = "fail"
	data, _ := json.Marshal(e)
	o.print(string(data) + "\n")
	o.failed++
}

// endTests writes the held-back ends of the tests of a package with races
// (-json): a racy test's end becomes its reports, its message and its
// "--- FAIL" line as output events, then its fail event (with the
// elapsed time of the event it replaces); the end of every test it is a
// subtest of fails too. The reports of races of no test, or of a test
// whose end was not seen, come after them.
func (o *testOutput) endTests(ends []heldEnd, byTest []*testRaces, emit func(testEvent)) {
	racy := map[string]*testRaces{}
	failing := map[string]bool{}
	for _, tr := range byTest {
		if tr.test == "" {
			continue
		}
		racy[tr.test] = tr
		for name := tr.test; name != ""; {
			failing[name] = true
			i := strings.LastIndexByte(name, '/')
			if i < 0 {
				break
			}
			name = name[:i]
		}
	}
	output := func(test, s string) { emit(testEvent{Action: "output", Test: test, Output: &s}) }
	reported := map[string]bool{}
	for _, h := range ends {
		test := h.e.Test
		switch {
		case !failing[test]:
			o.print(h.line)
		case h.e.Action == "output":
			if tr := racy[test]; tr != nil && !reported[test] {
				reported[test] = true
				o.writeTests([]*testRaces{tr}, true, output)
				continue
			}
			m := endLine.FindStringSubmatch(*h.e.Output)
			output(test, m[1]+"--- FAIL: "+test+" "+m[4]+"\n")
		default:
			e := h.e
			e.Action = "fail"
			data, _ := json.Marshal(e)
			o.print(string(data) + "\n")
		}
	}
	var rest []*testRaces
	for _, tr := range byTest {
		if !reported[tr.test] {
			rest = append(rest, tr)
		}
	}
	o.writeTests(rest, true, func(test, s string) {
		output(test, s)
		if strings.HasPrefix(s, "--- FAIL: ") && test != "" {
			emit(testEvent{Action: "fail", Test: test})
		}
	})
	// The tests a stall stopped never ended: they fail, subtests first,
	// as the -timeout alarm's panic would have them fail.
	ended := map[string]bool{}
	for _, h := range ends {
		if h.e.Action != "output" {
			ended[h.e.Test] = true
		}
	}
	for _, tr := range byTest {
		if !tr.stall {
			continue
		}
		names := slices.Clone(tr.a.StallTests)
		sort.SliceStable(names, func(i, j int) bool { return strings.Count(names[i], "/") > strings.Count(names[j], "/") })
		for _, name := range names {
			if !ended[name] {
				output(name, "--- FAIL: "+name+" (racekit: deadlocked)\n")
				emit(testEvent{Action: "fail", Test: name})
			}
		}
	}
}

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
			races += tr.n
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
	cycles  []deadlock.Cycle
	leaks   []leak.Leak
	stall   bool // the binary's run stalled: a.Stalled is its deadlock
}

// binary reports whether tr holds the findings of a test binary (cycles,
// leaks), not races.
func (tr *testRaces) binary() bool { return len(tr.cycles) > 0 || len(tr.leaks) > 0 || tr.stall }

// packageRaces analyzes the traces of pkg's test binary not analyzed yet
// and returns their races by test, in order of first report.
func (o *testOutput) packageRaces(pkg string) ([]*testRaces, int) {
	prefix := traceFileName(pkg+".test") + "."
	var byTest, cycles []*testRaces
	total, races := 0, 0
	for _, path := range tracefile.List(o.traceDir) {
		if o.analyzed[path] || !strings.HasPrefix(filepath.Base(path), prefix) {
			continue
		}
		o.analyzed[path] = true
		a, ok := o.analyze(path)
		stall := a.StallTests != nil
		if !ok || a.Races == 0 && len(a.Cycles) == 0 && len(a.Leaks) == 0 && !stall {
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
		index := map[string]*testRaces{}
		for ri, res := range a.Results {
			for _, g := range res.Groups {
				name := res.Tests[g.Pair()]
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
				tr.results[ri].Groups = append(tr.results[ri].Groups, g)
				tr.n++
				total++
				races++
			}
		}
	}
	// The races outside any test last, as testing reports them after
	// the tests.
	sort.SliceStable(byTest, func(i, j int) bool { return byTest[i].test != "" && byTest[j].test == "" })
	o.races += races
	return append(byTest, cycles...), total
}

// writeTests writes each test's reports and its failure, line by line:
// the failure's message before its "--- FAIL" line when chatty (-v, and
// -json), after it otherwise, as package testing orders them.
func (o *testOutput) writeTests(byTest []*testRaces, chatty bool, line func(test, s string)) {
	for _, tr := range byTest {
		var b strings.Builder
		if err := report.Races(&b, tr.a.Meta, tr.results); err != nil {
			o.errorf("%v", err)
		}
		if tr.binary() {
			if err := report.Deadlocks(&b, tr.a.Meta, tr.cycles, tr.a.Created); err != nil {
				o.errorf("%v", err)
			}
			if err := report.Leaks(&b, tr.a.Meta, tr.leaks, tr.a.Created); err != nil {
				o.errorf("%v", err)
			}
			if tr.stall {
				if err := report.Stall(&b, tr.a.Meta, tr.a.StallTests, tr.a.Stalled, tr.a.Created); err != nil {
					o.errorf("%v", err)
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

// analyze runs the detectors over one trace and prints its warnings.
func (o *testOutput) analyze(path string) (*analyze.Analysis, bool) {
	var a *analyze.Analysis
	var err error
	if ea := o.early.take(path); ea != nil {
		stop := newProgressLines("test", o.quiet).analysisOf(path, &ea.events, ea.start)
		<-ea.done
		stop()
		a, err = ea.a, ea.err
	} else {
		progress, stop := newProgressLines("test", o.quiet).analysis(path)
		a, err = analyze.Trace(path, analyzeOptions(o.algos, "", progress))
		stop()
	}
	if err != nil {
		o.errorf("%v", err)
		o.err = true
		return nil, false
	}
	a.Leaks = leak.Without(a.Leaks, a.Meta, o.leakIgnore)
	for _, w := range a.Warns {
		fmt.Fprintf(os.Stderr, "racekit test: warning: %s\n", w)
	}
	if o.verbose {
		fmt.Fprintf(os.Stderr, "racekit test: %s: %d events analyzed in %v (%d goroutines on %d clock IDs)\n", a.Program, a.Events, a.Elapsed, a.Goroutines, a.ClockIDs)
	}
	return a, true
}

// rest reports the races of the traces no package line claimed (a test
// binary run by other means than go test's packages), the way racekit
// run does, each followed by one FAIL line.
func (o *testOutput) rest(w io.Writer) {
	defer o.early.close()
	for _, path := range tracefile.List(o.traceDir) {
		if o.analyzed[path] {
			continue
		}
		o.analyzed[path] = true
		a, ok := o.analyze(path)
		if !ok || a.Races == 0 && len(a.Cycles) == 0 && len(a.Leaks) == 0 && a.StallTests == nil {
			continue
		}
		if err := a.Print(w); err != nil {
			o.errorf("%v", err)
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

// chatty reports whether go test runs the tests with -v (the last -v
// given, as the flag package takes it).
func (l *goTestLine) chatty() bool {
	v := false
	for _, f := range l.flags {
		if f.name == "v" {
			v = !f.hasValue || f.value == "true" || f.value == "test2json"
		}
	}
	return v
}
