package testout

import (
	"bufio"
	"io"
	"regexp"
	"sort"
	"strings"

	"github.com/racekit/racekit/analyze"
	"github.com/racekit/racekit/confirm"
	"github.com/racekit/racekit/progress"
)

// Output passes go test's standard output through, holding back the
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
type Output struct {
	Out      io.Writer
	JSON     bool
	Chatty   bool // -v: testing prints a failed test's output before its "--- FAIL" line
	TraceDir string
	// Options are the options of an analysis of a trace (package
	// analyze) reporting its progress to progress: racekit's -algo
	// detectors.
	Options func(progress func(n int64)) analyze.Options
	// LeakIgnore: --leaks-ignore's functions (leak.Without).
	LeakIgnore []string
	Verbose    bool
	Quiet      bool // no progress lines (test -q)
	Errorf     func(format string, args ...any)
	SARIF      *SARIF // -sarif: each race reported, with its stacks; nil without

	analyzed map[string]bool // trace files done
	early    *earlyAnalyses  // analyses of traces begun while their binaries ran
	held     []string        // text: "PASS"/"FAIL" lines held back; -json: the package's closing events
	heldPkg  map[string][]string
	heldEnds map[string][]heldEnd // -json: per package, its tests' ends, in order
	failed   int                  // packages racekit failed
	lastFail bool                 // the last line was "FAIL" alone
	races    int
	err      bool                // an analysis failed
	given    []confirm.Given     // --confirm: each race reported, for confirmation
	traces   map[string][]string // --confirm: each package's trace files, for more candidates

	activity activity // go test's start and last line, for Progress
}

// Failed is the number of packages racekit failed (a race, a potential
// deadlock, a leak or a stall), the traces Rest reported included.
func (o *Output) Failed() int { return o.failed }

// Err reports whether an analysis failed.
func (o *Output) Err() bool { return o.err }

// Traces are each package's trace files, for -confirm's candidates.
func (o *Output) Traces() map[string][]string { return o.traces }

// Given are the races reported, each as -confirm's candidate.
func (o *Output) Given() []confirm.Given { return o.given }

// summaryLine is go test's last line for a package: "ok  \tp\t0.1s",
// "FAIL\tp\t0.1s", "FAIL\tp [build failed]", "?   \tp\t[no test files]".
var summaryLine = regexp.MustCompile(`^(ok  |FAIL|\?   )\t([^\t ]+)(.*)$`)

// Run copies r to the output, line by line.
func (o *Output) Run(r io.Reader) {
	o.analyzed = map[string]bool{}
	o.traces = map[string][]string{}
	o.heldPkg = map[string][]string{}
	o.heldEnds = map[string][]heldEnd{}
	o.early = startEarly(o.TraceDir, o.Options)
	o.activity.start()
	// Between go test's lines (a cold build of instrumented packages, a
	// long test binary), a progress line says what it is doing.
	defer progress.New("test", o.Quiet).Every(func() string { return o.progressLine(progress.Interval) })()
	for line := range queuedLines(r, &o.activity) {
		if o.JSON {
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
	if !o.JSON && o.failed > 0 && !o.lastFail {
		o.print("FAIL\n")
	}
}

// queuedLines returns r's lines, read as they come whatever the consumer
// does: racekit analyzes a package's trace while go test runs the next
// package, and go test's copy of that package's output must not wait for
// racekit (it gives up WaitDelay after the test binary exits: "Test I/O
// incomplete", and fails the package; go-chi/chi's middleware package
// after the minute its root package's trace took to analyze).
func queuedLines(r io.Reader, act *activity) <-chan string {
	in, out := make(chan string), make(chan string)
	go func() {
		br := bufio.NewReaderSize(r, 64<<10)
		for {
			line, err := br.ReadString('\n')
			if line != "" {
				act.saw()
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

func (o *Output) print(s string) {
	io.WriteString(o.Out, s)
	o.lastFail = s == "FAIL\n"
}

func (o *Output) flushHeld() {
	for _, h := range o.held {
		o.print(h)
	}
	o.held = o.held[:0]
}

func (o *Output) textLine(line string) {
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
	o.writeTests(byTest, o.Chatty, func(test, s string) { o.print(s) })
	o.print("FAIL\n")
	o.print("FAIL\t" + m[2] + m[3] + raceCount(byTest) + "\n")
	o.failed++
}
