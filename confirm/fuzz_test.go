package confirm

import (
	"os"
	"path/filepath"
	"reflect"
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
		got, err := Phase1Sources(c.spec, c.pairs, c.trace)
		if c.want == nil {
			if err == nil {
				t.Errorf("Phase1Sources(%q, %q, %q) = %q, want an error", c.spec, c.pairs, c.trace, got)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("Phase1Sources(%q, %q, %q) = %q, %v; want %q", c.spec, c.pairs, c.trace, got, err, c.want)
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
	a := &Target{Pkg: "m/a", Dir: filepath.Join(wd, "a")}
	b := &Target{Pkg: "m/b", Dir: filepath.Join(wd, "b")}
	c := &candidates{targets: []*Target{a, b}, index: map[*Target]map[string][]int{}}
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
	PrintFuzz(&b, res)
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
		tg := &Target{Pkg: "m/a", Dir: dir, Bin: bin}
		c := &Campaign{Timeout: time.Minute}
		_, err := c.pairRun(tg, "a.go:1~a.go:2", "", 1, filepath.Join(dir, "run.sched"))
		if err == nil || !strings.Contains(err.Error(), "m/a") || !strings.Contains(err.Error(), bin+" did not start") {
			t.Errorf("%s: phase 2 run: error %v, want one naming m/a and the binary", filepath.Base(bin), err)
		}
		err = recordTests(tg, nil, nil, filepath.Join(dir, "run.rkt"), time.Minute)
		if err == nil || !strings.Contains(err.Error(), bin+" did not start") {
			t.Errorf("%s: recorded run: error %v, want one naming the binary", filepath.Base(bin), err)
		}
	}
}

// A pair's verdict: confirmed when a run created it, else the evidence of
// what found it: observed (a race of a recorded run), predicted (another
// interleaving has it), potential; "not created" for a candidate of
// phase 1 alone. Runs past the time budget are counted apart.
func TestVerdicts(t *testing.T) {
	tg := &Target{Pkg: "m"}
	made := []Run{{Seed: 1, Outcome: "none", Created: true, Resolution: "a before b"}, {}}
	notMade := []Run{{Seed: 1, Outcome: "none"}, {Seed: 2, Outcome: "test failure", Detail: "TestX"}}
	for _, tc := range []struct {
		runs     []Run
		sources  []string
		observed bool
		want     string
	}{
		{made, []string{"predicted"}, false, "confirmed"},
		{notMade, []string{"observed"}, true, "observed"},
		{notMade, []string{"predicted"}, false, "predicted"},
		{notMade, []string{"potential"}, false, "potential"},
		{notMade, []string{"hybrid"}, false, "not created"},
	} {
		fp := summarize("a.go:1~a.go:2", tg, tc.runs, nil)
		fp.Sources, fp.Observed = tc.sources, tc.observed
		fp.setVerdict()
		if fp.Verdict != tc.want {
			t.Errorf("%v: verdict %q, want %q", tc.sources, fp.Verdict, tc.want)
		}
	}
	fp := summarize("a.go:1~a.go:2", tg, made, nil)
	if fp.Runs != 1 || fp.Skipped != 1 || fp.Probability != 1 {
		t.Errorf("one run made, one left out: %d runs, %d skipped, probability %v", fp.Runs, fp.Skipped, fp.Probability)
	}
}
