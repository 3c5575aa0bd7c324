package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/racekit/racekit/sched"
)

func TestFuzzClassify(t *testing.T) {
	s := &sched.Schedule{Notes: []sched.Note{{Kind: "deadlock", Text: "g0#3 lock a.go:9"}}}
	empty := &sched.Schedule{}
	for _, c := range []struct {
		timedOut      bool
		code          int
		out           string
		s             *sched.Schedule
		outcome, what string
	}{
		{false, 0, "PASS\n", empty, "none", ""},
		{false, 2, "ok\npanic: ERROR1\n\ngoroutine 7 [running]:\n", empty, "panic", "ERROR1"},
		{false, 2, "panic: boom [recovered]\n", empty, "panic", "boom"},
		{false, 1, "--- FAIL: TestA (0.00s)\n    a_test.go:3: bad\n--- FAIL: TestB (0.00s)\nFAIL\n", empty, "test failure", "TestA, TestB"},
		{false, 3, "racekit: deadlock\n", s, "deadlock", "g0#3 lock a.go:9"},
		{false, 2, "fatal error: all goroutines are asleep - deadlock!\n", empty, "deadlock", "fatal error: all goroutines are asleep"},
		{true, -1, "", empty, "timeout", ""},
		{false, 4, "", empty, "exit 4", ""},
	} {
		o, w := classify(c.timedOut, c.code, c.out, c.s)
		if o != c.outcome || w != c.what {
			t.Errorf("classify(%q, %d) = %q, %q; want %q, %q", c.out, c.code, o, w, c.outcome, c.what)
		}
	}
}

func TestFuzzResolution(t *testing.T) {
	note := sched.FormatRace(
		sched.Point{G: "g0.2", N: 0, Kind: sched.KindWrite, Site: "/x/fig1.go:28"},
		sched.Point{G: "g0.1", N: 4, Kind: sched.KindRead, Site: "/x/fig1.go:21"})
	if got, want := resolution(note), "/x/fig1.go:28 (write) before /x/fig1.go:21 (read)"; got != want {
		t.Errorf("resolution = %q, want %q", got, want)
	}
}

func TestFuzzReadPairs(t *testing.T) {
	p := filepath.Join(t.TempDir(), "pairs")
	data := "# candidates\na.go:5~a.go:7\n{\"a\":\"/m/b.go:3:4\",\"b\":\"/m/b.go:9:2\",\"object\":\"x\"}\na.go:5~a.go:7\na.go:5:3:w~a.go:7:9:r\n"
	if err := os.WriteFile(p, []byte(data), 0o666); err != nil {
		t.Fatal(err)
	}
	got, unplaced, err := readPairs(p)
	if err != nil {
		t.Fatal(err)
	}
	// A text line keeps its accesses (columns and kinds, as fuzz prints
	// hybrid's pairs); vet's JSON columns are static positions: lines.
	if want := []string{"a.go:5~a.go:7", "/m/b.go:3~/m/b.go:9", "a.go:5:3:w~a.go:7:9:r"}; !reflect.DeepEqual(got, want) || unplaced != 0 {
		t.Errorf("readPairs = %q, %d unplaced; want %q, 0", got, unplaced, want)
	}
	// vet writes "?" for an access it could not place: skipped, counted.
	data = "{\"a\":\"?\",\"b\":\"/m/b.go:9:2\"}\n{\"a\":\"/m/b.go:3:4\",\"b\":\"/m/b.go:9:2\"}\n"
	if err := os.WriteFile(p, []byte(data), 0o666); err != nil {
		t.Fatal(err)
	}
	got, unplaced, err = readPairs(p)
	if err != nil || unplaced != 1 || !reflect.DeepEqual(got, []string{"/m/b.go:3~/m/b.go:9"}) {
		t.Errorf("readPairs with an unplaced access = %q, %d unplaced, %v; want the placed pair, 1", got, unplaced, err)
	}
	if err := os.WriteFile(p, []byte("a.go:5\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	if _, _, err := readPairs(p); err == nil {
		t.Error("a line without a pair was accepted")
	}
}

func TestFuzzPhase1Sources(t *testing.T) {
	for _, c := range []struct {
		spec, pairs, trace string
		want               []string // nil: an error
	}{
		{"", "", "", []string{"hybrid"}},
		{"", "f", "", []string{"pairs"}}, // --pairs alone: just the file
		{"", "", "t.rkt", []string{"hybrid"}},
		{"", "f", "t.rkt", []string{"hybrid", "pairs"}},
		{"vet", "", "", []string{"vet"}},
		{"vet,hybrid", "", "", []string{"hybrid", "vet"}},
		{" hybrid , vet ", "f", "", []string{"hybrid", "vet", "pairs"}},
		{"vet", "", "t.rkt", []string{"hybrid", "vet"}},
		{"pairs", "", "", nil}, // pairs without a file
		{"hybrid,relay", "", "", nil},
	} {
		got, err := phase1Sources(c.spec, c.pairs, c.trace)
		if c.want == nil {
			if err == nil {
				t.Errorf("phase1Sources(%q, %q, %q) = %q, want an error", c.spec, c.pairs, c.trace, got)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("phase1Sources(%q, %q, %q) = %q, %v; want %q", c.spec, c.pairs, c.trace, got, err, c.want)
		}
	}
}

// The union: a pair found again, by another source, with its statements
// the other way round, a column or a relative file name, is one pair with
// both sources; a pair that names no package goes to the packages holding
// its files, or to all when none does.
func TestFuzzCandidates(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	a := &fuzzTarget{Pkg: "m/a", dir: filepath.Join(wd, "a")}
	b := &fuzzTarget{Pkg: "m/b", dir: filepath.Join(wd, "b")}
	c := &candidates{targets: []*fuzzTarget{a, b}, index: map[*fuzzTarget]map[string][]int{}}
	ax := filepath.Join(wd, "a", "x.go")
	c.add(a, ax+":3~"+ax+":9", "hybrid")
	c.add(a, ax+":3~"+ax+":3", "hybrid")
	c.addAnywhere("a/x.go:9:2~"+ax+":3:14", "vet") // the first pair: relative, reversed, columns
	c.addAnywhere(ax+":5:1~"+ax+":5:1", "vet")     // a's only
	c.addAnywhere("/elsewhere/y.go:1~/elsewhere/y.go:2", "pairs")
	c.add(b, ax+":3~"+ax+":9", "hybrid") // b's run saw a's pair: b's own candidate
	// Exact pairs (hybrid's: column and kind) of other accesses on lines
	// already a candidate's are their own; a line-only pair joins the
	// first it can name, and a pair that names an access exactly takes
	// the place of a line-only one.
	c.add(a, ax+":7:2:w~"+ax+":8:5:r", "hybrid")
	c.add(a, ax+":7:9:w~"+ax+":8:5:r", "hybrid")
	c.addAnywhere(ax+":8~"+ax+":7", "vet")
	c.add(a, ax+":3:14:r~"+ax+":3:14:w", "hybrid")
	type row struct {
		pkg, pair string
		sources   []string
	}
	var got []row
	for _, j := range c.jobs {
		got = append(got, row{j.t.Pkg, j.pair, j.sources})
	}
	want := []row{
		{"m/a", "a/x.go:9:2~" + ax + ":3:14", []string{"hybrid", "vet"}}, // the more exact
		{"m/a", ax + ":3:14:r~" + ax + ":3:14:w", []string{"hybrid"}},
		{"m/a", ax + ":5:1~" + ax + ":5:1", []string{"vet"}},
		{"m/a", "/elsewhere/y.go:1~/elsewhere/y.go:2", []string{"pairs"}},
		{"m/b", "/elsewhere/y.go:1~/elsewhere/y.go:2", []string{"pairs"}},
		{"m/b", ax + ":3~" + ax + ":9", []string{"hybrid"}},
		{"m/a", ax + ":7:2:w~" + ax + ":8:5:r", []string{"hybrid", "vet"}},
		{"m/a", ax + ":7:9:w~" + ax + ":8:5:r", []string{"hybrid"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("candidates:\n got %v\nwant %v", got, want)
	}
	counts := map[string]int{}
	d := phase1Description([]string{"hybrid", "vet", "pairs"}, []string{"hybrid over 3 recorded runs", "vet", "pairs from f"}, c.jobs, counts)
	if want := "hybrid over 3 recorded runs: 5, vet: 3, pairs from f: 2; 2 found by more than one"; d != want {
		t.Errorf("description %q, want %q", d, want)
	}
	if d := phase1Description([]string{"hybrid"}, []string{"hybrid"}, c.jobs[:2], map[string]int{}); d != "hybrid" {
		t.Errorf("one source: description %q, want %q", d, "hybrid")
	}
}

// The report says where each pair came from.
func TestFuzzPrintSources(t *testing.T) {
	res := FuzzResult{Phase1: "hybrid: 1, vet: 2; 1 found by both", Pairs: []FuzzPair{
		{Pair: "/m/a.go:3~/m/a.go:9", Package: "m", Real: true, Runs: 2, Created: 2, Probability: 1, Sources: []string{"hybrid", "vet"},
			Outcomes: []FuzzOutcome{
				{Resolution: "/m/a.go:3 (write) before /m/a.go:9 (read)", Outcome: "none", Runs: 2, Seeds: []uint64{1, 2}, Replayed: 10, Identical: 10},
				{Resolution: "/m/a.go:9 (read) before /m/a.go:3 (write)", Outcome: "panic", Detail: "boom", Runs: 1, Seeds: []uint64{3}, Replayed: 10, Identical: 9, ReplayDiff: "replay 4: 12 steps, the original 11; outcome none"},
			}},
		{Pair: "/m/a.go:5~/m/a.go:5", Package: "m", Runs: 2, Sources: []string{"vet"},
			Outcomes: []FuzzOutcome{{Outcome: "none", Runs: 2, Seeds: []uint64{1, 2}}}},
		{Pair: "/m/a.go:7~/m/a.go:8", Package: "m", Runs: 2, Sources: []string{"hybrid"}, Observed: true,
			Outcomes: []FuzzOutcome{{Outcome: "none", Runs: 2, Seeds: []uint64{1, 2}}}},
	}}
	var b strings.Builder
	printFuzz(&b, res)
	out := b.String()
	for _, want := range []string{
		"  in package m\n  candidate from hybrid, vet\n",
		"/m/a.go:5 and /m/a.go:5 (m, from vet): not created in 2 runs\n",
		"racekit fuzz: 3 candidate pairs (hybrid: 1, vet: 2; 1 found by both), 1 real races confirmed, 1 more observed but not created\n",
		"WARNING: DATA RACE (observed: unordered by happens-before in a recorded run; racekit fuzz did not create it in 2 runs)\n  between /m/a.go:7\n      and /m/a.go:8\n",
		"      seed 1 replayed 10 times: the same schedule each time\n",
		"      seed 3 replayed 10 times: 9 with the same schedule (replay 4: 12 steps, the original 11; outcome none)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// markedLines returns file:line (absolute) of the lines of file whose
// comment starts with "// mark:".
func markedLines(t *testing.T, file, mark string) []string {
	t.Helper()
	abs, err := filepath.Abs(file)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, "// "+mark+":") {
			out = append(out, fmt.Sprintf("%s:%d", abs, i+1))
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s: no line marked %s", file, mark)
	}
	return out
}

// fuzzRaces runs racekit fuzz --json with args, expecting races (exit
// 66), and returns its result and its pairs by pairKey.
func fuzzRaces(t *testing.T, args ...string) (FuzzResult, map[string]FuzzPair) {
	t.Helper()
	out, stderr, code := racekit(t, append([]string{"fuzz", "--json"}, args...)...)
	var res FuzzResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("exit %d, bad JSON (%v)\n%s\nstderr:\n%s", code, err, out, stderr)
	}
	if code != exitRaces {
		t.Errorf("exit status %d, want %d", code, exitRaces)
	}
	byPair := map[string]FuzzPair{}
	for _, p := range res.Pairs {
		byPair[pairKey(p.Pair)] = p
	}
	return res, byPair
}

// racekit fuzz --phase1 hybrid,vet on testdata/fuzzvet, for real: the
// race on Z is found by both sources and created; the race in the test
// file (which vet does not analyze) by hybrid only, and created; vet's
// false pair on counts[i] (each worker its own element) is never created.
// With --replay, every outcome that created a race is replayed from its
// first seed and has the original run's schedule each time.
func TestFuzzPhase1HybridVet(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs an instrumented test binary")
	}
	const runs = 6
	z := markedLines(t, "testdata/fuzzvet/fuzzvet.go", "RACE")[0]
	counts := markedLines(t, "testdata/fuzzvet/fuzzvet.go", "FALSE")[0]
	y := markedLines(t, "testdata/fuzzvet/fuzzvet_test.go", "TESTRACE")
	res, byPair := fuzzRaces(t, "--phase1", "hybrid,vet", "--runs", fmt.Sprint(runs), "-j", "2", "--baseline", "2", "--replay", "3", "./testdata/fuzzvet")
	for _, c := range []struct {
		name, pair string
		sources    []string
		real       bool
		verdict    string
	}{
		{"Z (both)", z + "~" + z, []string{"hybrid", "vet"}, true, "confirmed"},
		{"y in the test (hybrid)", y[0] + "~" + y[1], []string{"hybrid"}, true, "confirmed"},
		{"counts[i] (vet, false)", counts + "~" + counts, []string{"vet"}, false, "not created"},
	} {
		p, ok := byPair[pairKey(c.pair)]
		if !ok {
			t.Errorf("%s: pair %s not a candidate; got %v", c.name, c.pair, res.Pairs)
			continue
		}
		if !reflect.DeepEqual(p.Sources, c.sources) {
			t.Errorf("%s: sources %q, want %q", c.name, p.Sources, c.sources)
		}
		if p.Real != c.real || p.Runs != runs || (!c.real && p.Created != 0) {
			t.Errorf("%s: real %v, created %d of %d runs; want real %v", c.name, p.Real, p.Created, p.Runs, c.real)
		}
		if p.Verdict != c.verdict {
			t.Errorf("%s: verdict %q, want %q", c.name, p.Verdict, c.verdict)
		}
		for _, o := range p.Outcomes {
			want := 0
			if o.Resolution != "" {
				want = 3
			}
			if o.Replayed != want || o.Identical != want {
				t.Errorf("%s: outcome %q/%s: %d replays, %d identical (%s); want %d, all identical", c.name, o.Resolution, o.Outcome, o.Replayed, o.Identical, o.ReplayDiff, want)
			}
		}
	}
	if len(res.Pairs) != 3 {
		t.Errorf("%d candidate pairs, want 3: %v", len(res.Pairs), res.Pairs)
	}
	if res.Phase1Pairs["hybrid"] != 2 || res.Phase1Pairs["vet"] != 2 {
		t.Errorf("pairs per source %v, want hybrid 2, vet 2", res.Phase1Pairs)
	}
	if !strings.Contains(res.Phase1, "1 found by both") {
		t.Errorf("phase 1 %q does not say 1 pair was found by both", res.Phase1)
	}
}

// racekit fuzz on testdata/fuzzobs, for real: double-checked locking with
// a plain flag. The race on the flag is created; the race on the value it
// publishes never is (its read follows the flag's read, which follows the
// write), but hb reports it on the recorded runs, so its verdict is
// observed, not confirmed, and fuzz exits 66 for it.
func TestFuzzObservedVerdict(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs an instrumented test binary")
	}
	flag := markedLines(t, "testdata/fuzzobs/fuzzobs.go", "FLAG")
	data := markedLines(t, "testdata/fuzzobs/fuzzobs.go", "DATA")
	_, byPair := fuzzRaces(t, "--record", "3", "--runs", "10", "-j", "2", "--baseline", "1", "./testdata/fuzzobs")
	f, ok := byPair[pairKey(flag[0]+"~"+flag[1])]
	if !ok || !f.Real || f.Verdict != "confirmed" {
		t.Errorf("the flag's pair: %+v (present %v); want confirmed", f, ok)
	}
	d, ok := byPair[pairKey(data[0]+"~"+data[1])]
	if !ok || d.Created != 0 || !d.Observed || d.Verdict != "observed" {
		t.Errorf("the value's pair: %+v (present %v); want observed, never created", d, ok)
	}
}

// racekit fuzz --record-random on testdata/fuzzrand, for real: the race on
// Waits exists only in a run where Get had to wait; phase 1's runs under
// the controlled random scheduler (seeds 1 to 6, of which 4 and 5 make two
// goroutines want the token at once) find it, and phase 2 creates it.
func TestFuzzRecordRandom(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs an instrumented test binary")
	}
	waits := markedLines(t, "testdata/fuzzrand/fuzzrand.go", "WAITS")[0]
	res, byPair := fuzzRaces(t, "--phase1", "hybrid", "--record", "1", "--record-random", "6", "--runs", "10", "-j", "2", "--baseline", "1", "./testdata/fuzzrand")
	if want := "hybrid over 1 recorded run and 6 under the random scheduler"; res.Phase1 != want {
		t.Errorf("phase 1 %q, want %q", res.Phase1, want)
	}
	if p, ok := byPair[pairKey(waits+"~"+waits)]; !ok || p.Verdict != "confirmed" {
		t.Errorf("the pair on Waits: %+v (present %v); want confirmed", p, ok)
	}
}

// racekit test --schedule=random: the tests of testdata/fuzzrand run under
// the controlled random scheduler with seed 4, which makes two goroutines
// wait for the token, and the race on Waits is reported (exit 1, as go
// test -race).
func TestTestScheduleRandom(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs an instrumented test binary")
	}
	waits := markedLines(t, "testdata/fuzzrand/fuzzrand.go", "WAITS")[0]
	out, stderr, code := racekit(t, "test", "--schedule=random", "--seed", "4", "./testdata/fuzzrand")
	if code != 1 || !strings.Contains(out, "(racekit: 1 data race(s))") || !strings.Contains(out, "fuzzrand.go:"+waits[strings.LastIndexByte(waits, ':')+1:]) {
		t.Errorf("exit %d, want 1 and the race at %s\n%s\nstderr:\n%s", code, waits, out, stderr)
	}
}

// A test binary that does not start (missing, not executable) is an
// error that names the package, the binary and why, for phase 1's
// recorded runs and phase 2's alike; before, phase 2 dereferenced the
// schedule such a run never had and racekit panicked (issue 29).
func TestFuzzStartFailure(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "p1.test")
	if err := os.WriteFile(notExec, []byte("not a program"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, bin := range []string{filepath.Join(dir, "p0.test"), notExec} {
		tg := &fuzzTarget{Pkg: "m/a", dir: dir, bin: bin}
		_, err := pairRun(tg, nil, "a.go:1~a.go:2", 1, filepath.Join(dir, "run.sched"))
		if err == nil || !strings.Contains(err.Error(), "m/a") || !strings.Contains(err.Error(), bin+" did not start") {
			t.Errorf("%s: phase 2 run: error %v, want one naming m/a and the binary", filepath.Base(bin), err)
		}
		err = recordTests(tg, nil, nil, filepath.Join(dir, "run.rkt"), time.Minute)
		if err == nil || !strings.Contains(err.Error(), bin+" did not start") {
			t.Errorf("%s: recorded run: error %v, want one naming the binary", filepath.Base(bin), err)
		}
	}
}

// racekit fuzz reports its progress on stderr as it goes, for real: a line
// per recorded run of phase 1, one for phase 2, one for the baseline and
// one per candidate pair with its runs done and the races it created, each
// with the time since the start; with -q, none, and the same result on
// stdout.
func TestFuzzProgress(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs an instrumented test binary")
	}
	args := []string{"fuzz", "--json", "--record", "1", "--runs", "3", "-j", "2", "--baseline", "1", "./testdata/fuzzobs"}
	out, stderr, code := racekit(t, args...)
	var res FuzzResult
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != exitRaces || len(res.Pairs) == 0 {
		t.Fatalf("exit %d, %d pairs (%v)\n%s\nstderr:\n%s", code, len(res.Pairs), err, out, stderr)
	}
	line := regexp.MustCompile(`(?m)^racekit fuzz: \[[0-9.]+m?s\] `)
	want := []string{
		"phase 1: github.com/racekit/racekit/cmd/racekit/testdata/fuzzobs: recorded run 1/1, ",
		"phase 2: " + fmt.Sprint(len(res.Pairs)) + " candidate pairs, 3 runs each",
		"baseline github.com/racekit/racekit/cmd/racekit/testdata/fuzzobs: 1/1 runs",
	}
	for i, p := range res.Pairs {
		a, b, _ := strings.Cut(p.Pair, "~")
		want = append(want, fmt.Sprintf("pair %d/%d %s~%s: 3/3 runs, %d created", i+1, len(res.Pairs), relSite(a), relSite(b), p.Created))
	}
	for _, w := range want {
		if !regexp.MustCompile(`(?m)^racekit fuzz: \[[0-9.]+m?s\] ` + regexp.QuoteMeta(w)).MatchString(stderr) {
			t.Errorf("stderr lacks the progress line %q:\n%s", w, stderr)
		}
	}
	qout, qerr, qcode := racekit(t, append([]string{"fuzz", "-q"}, args[1:]...)...)
	if line.MatchString(qerr) || qcode != code {
		t.Errorf("with -q: exit %d (want %d), stderr:\n%s", qcode, code, qerr)
	}
	var qres FuzzResult
	if err := json.Unmarshal([]byte(qout), &qres); err != nil || len(qres.Pairs) != len(res.Pairs) {
		t.Errorf("with -q: %d pairs (%v), want %d", len(qres.Pairs), err, len(res.Pairs))
	}
}
