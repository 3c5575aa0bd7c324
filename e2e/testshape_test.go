package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// goTestRace runs go test -race in testdata/src and returns its exit code
// and combined output.
func goTestRace(t *testing.T, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command("go", append([]string{"test", "-race", "-count=1"}, args...)...)
	cmd.Dir = "testdata/src"
	cmd.Env = append(cmd.Environ(), "GOFLAGS=")
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, string(out)
}

var (
	accessLine = regexp.MustCompile(`^(Previous )?(read|write|Read|Write) at `)
	frameLine  = regexp.MustCompile(`^  \S+\(\)$`)
	failLine   = regexp.MustCompile(`^--- FAIL: (\S+) \(`)
	pkgLine    = regexp.MustCompile(`^(ok  |FAIL)\t(\S+)`)
)

// reportShape reduces go test's output to its shape: the lines that say
// where a report starts and ends, which access or goroutine a stack is
// of (with its number of frames), which test failed, with what message,
// and how the package ended. Addresses, goroutine numbers, times, columns
// and racekit's evidence labels are left out.
func reportShape(out string) []string {
	var shape []string
	frames := 0
	flush := func() {
		if frames > 0 {
			n := "1 frame"
			if frames > 1 {
				n = ">1 frames"
			}
			shape = append(shape, "  "+n)
			frames = 0
		}
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	location := false // in racekit's "Location is heap block" lines, which go test -race does not print
	for sc.Scan() {
		line := sc.Text()
		if frameLine.MatchString(line) {
			if !location {
				frames++
			}
			continue
		}
		if strings.HasPrefix(line, "      ") {
			continue
		}
		location = strings.HasPrefix(line, "Location is ")
		if location {
			continue
		}
		if strings.HasPrefix(line, "      ") || line == "" {
			continue
		}
		flush()
		switch {
		case line == "==================":
			shape = append(shape, line)
		case strings.HasPrefix(line, "WARNING: DATA RACE"):
			shape = append(shape, "WARNING: DATA RACE")
		case accessLine.MatchString(line):
			if strings.HasPrefix(line, "Previous") {
				shape = append(shape, "previous access")
			} else {
				shape = append(shape, "access")
			}
		case strings.HasPrefix(line, "Goroutine "):
			shape = append(shape, "goroutine")
		case failLine.MatchString(line):
			shape = append(shape, "--- FAIL: "+failLine.FindStringSubmatch(line)[1])
		case strings.HasSuffix(line, "race detected during execution of test"):
			shape = append(shape, "    race detected during execution of test")
		case line == "FAIL" || line == "PASS":
			shape = append(shape, line)
		case pkgLine.MatchString(line):
			m := pkgLine.FindStringSubmatch(line)
			shape = append(shape, m[1]+"\t"+m[2])
		}
	}
	flush()
	return shape
}

// TestTestReportShape: racekit test reports the race of
// testdata/src/racytest the way go test -race does: the report inside the
// racy test's output, that test failed with a message saying why, the
// package FAIL; each access with its whole stack (add, Add and their
// caller), the created goroutine with its creation stack (start, TestRacy).
// What remains different is in docs/frontend.md ("racekit test's
// output").
func TestTestReportShape(t *testing.T) {
	_, goOut := goTestRace(t, "./racytest")
	code, rkOut := runRacekit(t, "test", "./racytest")
	if code != 1 {
		t.Errorf("racekit test: exit status %d, want 1", code)
	}
	// Both accesses name the package-level variable they are in (rt.Globals).
	if n := strings.Count(rkOut, " (global racekit.test/e2e/racytest.counter) by goroutine "); n != 2 {
		t.Errorf("racekit test: %d accesses name the variable counter, want 2\n%s", n, rkOut)
	}
	want := []string{
		"==================", "WARNING: DATA RACE",
		"access", "  >1 frames",
		"previous access", "  >1 frames",
		"goroutine", "  >1 frames",
		"goroutine",
	}
	end := []string{
		"==================",
		"--- FAIL: TestRacy", "    race detected during execution of test",
		"FAIL", "FAIL\tracekit.test/e2e/racytest", "FAIL",
	}
	for _, side := range []struct{ name, out string }{{"go test -race", goOut}, {"racekit test", rkOut}} {
		got := reportShape(side.out)
		// The goroutine of the test itself: go test -race shows the
		// framework's stack, racekit has none (created outside the trace).
		i := len(want)
		if len(got) > i && got[i] == "  >1 frames" {
			got = append(got[:i:i], got[i+1:]...)
		}
		if strings.Join(got, "\n") != strings.Join(append(want, end...), "\n") {
			t.Errorf("%s: output's shape\n%s\nwant\n%s\noutput:\n%s", side.name, strings.Join(got, "\n"), strings.Join(append(want, end...), "\n"), side.out)
		}
	}
	for _, frame := range []string{"racytest.add()", "racytest.Add()", "racytest.start.func1()", "racytest.TestRacy()", "racytest.start()"} {
		if !strings.Contains(rkOut, "\n  racekit.test/e2e/"+frame+"\n") {
			t.Errorf("racekit test: no frame %s\n%s", frame, rkOut)
		}
	}
	// Each frame at go test -race's line: an outer frame at its call,
	// not at its function's last access (racytest.TestRacy calls start
	// on line 9, then Add on line 10).
	if got, want := stackLines(rkOut, "racytest"), stackLines(goOut, "racytest"); !slices.Equal(got, want) || len(want) != 3 {
		t.Errorf("stacks' frames in racytest:\nracekit test   %q\ngo test -race  %q", got, want)
	}
}

var posLine = regexp.MustCompile(`^      (\S+?):(\d+)(:\d+)?( \+0x[0-9a-f]+)?$`)

// stackLines returns the stacks of the race reports in out, each as its
// frames in files of directory dir (function@file:line, the file's base
// name), sorted: which access's stack is which depends on the run's
// interleaving.
func stackLines(out, dir string) []string {
	var stacks []string
	var cur []string
	fn := ""
	end := func() {
		if len(cur) > 0 {
			stacks = append(stacks, strings.Join(cur, " "))
		}
		cur, fn = nil, ""
	}
	for _, line := range strings.Split(out, "\n") {
		if frameLine.MatchString(line) {
			fn = strings.TrimSuffix(strings.TrimSpace(line), "()")
			continue
		}
		if m := posLine.FindStringSubmatch(line); m != nil && fn != "" {
			if strings.Contains(m[1], "/"+dir+"/") {
				cur = append(cur, fn+"@"+filepath.Base(m[1])+":"+m[2])
			}
			fn = ""
			continue
		}
		end()
	}
	end()
	slices.Sort(stacks)
	return stacks
}

// TestTestReportJSON: with -json the race is in the racy test's events:
// its report among its output events, then one end, a fail event, as
// under go test -race -json; every test and the package end once, with
// go test -race's action (testdata/src/racytest; racysubtest: a racy
// subtest fails, and so does its parent; a skipped test is skipped;
// racyagain: a race that two tests make fails both; racyrunning: a race
// fails the tests running beside it).
func TestTestReportJSON(t *testing.T) {
	for _, tc := range []struct {
		pkg, racy string
		frame     string
		want      map[string][]string
	}{
		{"racytest", "TestRacy", "racytest.TestRacy()", map[string][]string{"": {"fail"}, "TestRacy": {"fail"}, "TestBefore": {"pass"}, "TestAfter": {"pass"}}},
		{"racysubtest", "TestParent/racy", "racysubtest.Twice()", map[string][]string{"": {"fail"}, "TestParent": {"fail"}, "TestParent/racy": {"fail"}, "TestParent/calm": {"pass"}, "TestParent/after": {"pass"}, "TestSkip": {"skip"}}},
		// The same race again in a later test fails that test too.
		{"racyagain", "TestRacyA", "racyagain.Race()", map[string][]string{"": {"fail"}, "TestRacyA": {"fail"}, "TestCalm": {"pass"}, "TestRacyB": {"fail"}}},
		// A race reported while another test runs fails that one too
		// (two parallel tests: -parallel 2 on any machine).
		{"racyrunning", "TestRacy", "racyrunning.TestRacy()", map[string][]string{"": {"fail"}, "TestCalm": {"pass"}, "TestRacy": {"fail"}, "TestBystander": {"fail"}}},
		// A goroutine a test left running races while the next test
		// runs: the race is the next test's, the first one passed
		// (analyze's reportedIn).
		{"leakverdict", "TestVictim", "leakverdict.Write()", map[string][]string{"": {"fail"}, "TestLeaker": {"pass"}, "TestVictim": {"fail"}, "TestAfter": {"pass"}}},
	} {
		_, goOut := goTestRace(t, "-json", "-parallel=2", "./"+tc.pkg)
		code, out := runRacekit(t, "test", "-json", "-parallel=2", "./"+tc.pkg)
		if code != 1 {
			t.Errorf("%s: exit status %d, want 1", tc.pkg, code)
		}
		goActs, _ := jsonEnds(t, goOut, tc.racy)
		acts, report := jsonEnds(t, out, tc.racy)
		for _, want := range []string{"WARNING: DATA RACE", tc.frame, "--- FAIL: " + tc.racy + " (racekit: 1 data race)\n"} {
			if !strings.Contains(report, want) {
				t.Errorf("%s: %s's output events lack %q:\n%s", tc.pkg, tc.racy, want, report)
			}
		}
		if fmt.Sprint(goActs) != fmt.Sprint(tc.want) {
			t.Errorf("%s: go test -race -json's ends %v, want %v", tc.pkg, goActs, tc.want)
		}
		if fmt.Sprint(acts) != fmt.Sprint(tc.want) {
			t.Errorf("%s: racekit test -json's ends %v, want %v\n%s", tc.pkg, acts, tc.want, out)
		}
	}
}

// jsonEnds returns each test's end actions in go test -json's output out
// ("" for the package) and the output events of test racy.
func jsonEnds(t *testing.T, out, racy string) (map[string][]string, string) {
	t.Helper()
	acts := map[string][]string{}
	last := map[string]time.Time{}
	var report strings.Builder
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var e struct {
			Action, Package, Test, Output string
			Time                          time.Time
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		// A fail event is not older than the events above it, the race
		// reports it follows. (go test's own events are not always in
		// time order: a test's "--- PASS" output can follow the next
		// test's "=== RUN" with an earlier time.)
		if prev := last[e.Package]; e.Action == "fail" && e.Time.Before(prev) {
			t.Errorf("fail event of %s %s at %v, before an event above it (%v)", e.Package, e.Test, e.Time, prev)
		}
		if e.Time.After(last[e.Package]) {
			last[e.Package] = e.Time
		}
		switch e.Action {
		case "output":
			if e.Test == racy {
				report.WriteString(e.Output)
			}
		case "pass", "fail", "skip":
			acts[e.Test] = append(acts[e.Test], e.Action)
		}
	}
	return acts, report.String()
}

// TestExampleExitWait: testdata/src/exampleexit has an example, so its test
// binary exits through testing's os.Exit, with no TestMain of racekit's; a
// goroutine its test left running races after the tests, in the second a
// -race binary waits at exit (GORACE's atexit_sleep_ms). go test -race
// reports it and fails the package, no test; so does racekit (the patched
// runtime's exit hook waits and finishes the trace; analyze's reportedIn
// leaves the race to no test).
func TestExampleExitWait(t *testing.T) {
	t.Setenv("GORACE", "atexit_sleep_ms=1000")
	want := map[string][]string{"": {"fail"}, "TestLate": {"pass"}, "ExampleLate": {"pass"}}
	_, goOut := goTestRace(t, "-json", "./exampleexit")
	code, out := runRacekit(t, "test", "-json", "./exampleexit")
	if code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	goActs, _ := jsonEnds(t, goOut, "")
	acts, report := jsonEnds(t, out, "")
	if fmt.Sprint(goActs) != fmt.Sprint(want) {
		t.Errorf("go test -race -json's ends %v, want %v", goActs, want)
	}
	if fmt.Sprint(acts) != fmt.Sprint(want) {
		t.Errorf("racekit test -json's ends %v, want %v\n%s", acts, want, out)
	}
	if !strings.Contains(report, "exampleexit.Late.func1()") {
		t.Errorf("the package's output events lack the race's report:\n%s", report)
	}
}

// TestTestUnchanged: the tests, fuzz seeds and examples of
// testdata/src/callers and callersmain print what their code sees of its
// callers (runtime.Callers, runtime.Caller, how many frames, a recovered
// panic's stack; in tests, subtests of function literals, method values
// and returned literals, cleanups, fuzz inputs, goroutines of function
// literals, examples, a TestMain of the user's) and testing.Testing();
// under racekit test their output is go test's, example outputs included
// (an example fails on any other frame).
func TestTestUnchanged(t *testing.T) {
	_, goOut := goTestRace(t, "-v", "./callers", "./callersmain")
	code, rkOut := runRacekit(t, "test", "-v", "./callers", "./callersmain")
	if code != 0 {
		t.Errorf("racekit test: exit status %d, want 0\n%s", code, rkOut)
	}
	if g, r := testLines(goOut), testLines(rkOut); g != r {
		t.Errorf("racekit test's output\n%s\ndiffers from go test's\n%s", r, g)
	}
}

var elapsed = regexp.MustCompile(`\(\d+\.\d+s\)|\t\d+\.\d+s`)

// testLines is go test -v's output without times.
func testLines(out string) string {
	return elapsed.ReplaceAllString(out, "")
}

// TestReportsAfterReport: go test -race forgets the accesses made on an
// address before a race it reports there, not the address: a race between
// later accesses is reported again, in the same test and in a later one
// (testdata/src/racytwice), but not through a copy of a struct (a range
// access, unchecked on a word left marked by a report). racekit test fails
// the same tests, with as many reports (a race already reported in an
// earlier test gets an "again" line in the later one).
func TestReportsAfterReport(t *testing.T) {
	_, goOut := goTestRace(t, "-v", "./racytwice")
	_, rkOut := runRacekit(t, "test", "-v", "./racytwice")
	shape := func(out string) (failed []string, reports int) {
		for _, line := range strings.Split(out, "\n") {
			if m := failLine.FindStringSubmatch(line); m != nil {
				failed = append(failed, m[1])
			}
			if strings.HasPrefix(line, "WARNING: DATA RACE") {
				reports++
			}
		}
		slices.Sort(failed)
		return failed, reports
	}
	goFailed, goReports := shape(goOut)
	rkFailed, rkReports := shape(rkOut)
	if want := []string{"TestFirst", "TestRangeFirst", "TestSecond", "TestTwice"}; !slices.Equal(goFailed, want) || goReports != 5 {
		t.Fatalf("go test -race: failed %q with %d reports, want %q with 5\n%s", goFailed, goReports, want, goOut)
	}
	if !slices.Equal(rkFailed, goFailed) || rkReports != goReports {
		t.Errorf("racekit test: failed %q with %d reports, want %q with %d\n%s", rkFailed, rkReports, goFailed, goReports, rkOut)
	}
	// The package's FAIL line counts distinct races: the race TestSecond
	// has again is TestFirst's.
	if !strings.Contains(rkOut, "racytwice\t") || !regexp.MustCompile(`FAIL\t\S+/racytwice\t\S+ \(racekit: 4 data race\(s\)\)`).MatchString(rkOut) {
		t.Errorf("racekit test: the package's FAIL line does not count 4 distinct races\n%s", rkOut)
	}
}

// TestInlineFrames: testdata/src/inlinestack races inside a method reached
// through small wrappers (Reset, resetTo), which racekit leaves without a
// frame so that they stay inlinable (instrument/inline.go); each access's
// stack, function by function within the package, must be go test
// -race's, the wrappers' frames put back from the static calls
// (analyze's inlinePath).
func TestInlineFrames(t *testing.T) {
	_, goOut := goTestRace(t, "./inlinestack")
	_, rkOut := runRacekit(t, "test", "-count=1", "./inlinestack")
	const pkg = "racekit.test/e2e/inlinestack."
	g, r := accessStacks(goOut, pkg), accessStacks(rkOut, pkg)
	if len(g) == 0 || !slices.Contains(g, "(*Counter).store < (*Counter).resetTo < (*Counter).Reset < TestRaceThroughWrappers.func1") {
		t.Fatalf("go test -race's stacks %q lack the race through both wrappers\n%s", g, goOut)
	}
	if !slices.Equal(g, r) {
		t.Errorf("racekit's access stacks\n%q\ndiffer from go test -race's\n%q\n%s", r, g, rkOut)
	}
}

// TestInterfaceCallLines: a function that calls two interface methods
// (testdata/src/ifacecalls, in the shape of urfave/cli's flagSet) is shown
// at the call its callee was entered from, the second one, as go test
// -race shows it: each access's stack of file:line frames in the package
// must be -race's (racekit showed the first interface call's line, the
// first call not known statically after the caller's last event).
func TestInterfaceCallLines(t *testing.T) {
	_, goOut := goTestRace(t, "./ifacecalls")
	_, rkOut := runRacekit(t, "test", "-count=1", "./ifacecalls")
	g, r := accessLines(goOut, "ifacecalls.go:"), accessLines(rkOut, "ifacecalls.go:")
	if !slices.Contains(g, "ifacecalls.go:17 < ifacecalls.go:34 < ifacecalls.go:40") {
		t.Fatalf("go test -race's stacks %q lack the race in Apply, entered at line 34\n%s", g, goOut)
	}
	if !slices.Equal(g, r) {
		t.Errorf("racekit's access stacks\n%q\ndiffer from go test -race's\n%q\n%s", r, g, rkOut)
	}
}

// accessLines returns the stacks of the accesses of the race reports in
// out, each the frames in files whose name ends in file (file:line, no
// column), innermost first, joined by " < "; sorted, without repeats.
func accessLines(out, file string) []string {
	return accessFrames(out, func(line string) (string, bool) {
		f := strings.Fields(line)
		if len(f) == 0 {
			return "", false
		}
		i := strings.LastIndex(f[0], file)
		if i < 0 {
			return "", false
		}
		at := f[0][i:]
		if parts := strings.Split(at, ":"); len(parts) > 2 {
			at = parts[0] + ":" + parts[1] // racekit's column
		}
		return at, true
	})
}

// accessStacks returns the stacks of the accesses of the race reports in
// out, each the functions of package pkg (its prefix cut), innermost
// first, joined by " < "; sorted, without repeats.
func accessStacks(out, pkg string) []string {
	return accessFrames(out, func(line string) (string, bool) {
		l := strings.TrimSpace(line)
		if !strings.HasPrefix(l, pkg) || !strings.HasSuffix(l, "()") {
			return "", false
		}
		return strings.TrimSuffix(strings.TrimPrefix(l, pkg), "()"), true
	})
}

// accessFrames returns the stacks of the accesses of the race reports in
// out (a Read at or Write at block, or its Previous one), each the frames
// frame picks from the block's lines, joined by " < "; sorted, without
// repeats.
func accessFrames(out string, frame func(line string) (string, bool)) []string {
	var stacks []string
	var cur []string
	in := false
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "Read at") || strings.HasPrefix(line, "Write at") ||
			strings.HasPrefix(line, "Previous read at") || strings.HasPrefix(line, "Previous write at"):
			in, cur = true, nil
		case in && !strings.HasPrefix(line, " "):
			in = false
			stacks = append(stacks, strings.Join(cur, " < "))
		case in:
			if f, ok := frame(line); ok {
				cur = append(cur, f)
			}
		}
	}
	slices.Sort(stacks)
	return slices.Compact(stacks)
}
