package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/racekit/racekit/sched"
)

// RaceFuzzer's two examples (Sen, PLDI'08, Figures 1 and 2) as Go tests
// (testdata/src/rffig1, rffig2), run end to end by racekit fuzz, and every
// confirmed outcome replayed from its seed.

// fuzzPair mirrors racekit fuzz's JSON (cmd/racekit.FuzzPair).
type fuzzPair struct {
	Pair        string
	Real        bool
	Runs        int
	Created     int
	Probability float64
	Escapes     int
	Outcomes    []struct {
		Resolution string
		Outcome    string
		Detail     string
		Runs       int
		Seeds      []uint64
	}
}

// markedLine returns the line of file (under testdata/src) whose comment
// is exactly "// N" (the paper's statement number).
func markedLine(t *testing.T, file string, n int) string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata/src", file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		if strings.HasSuffix(strings.TrimSpace(sc.Text()), "// "+strconv.Itoa(n)) {
			return fmt.Sprintf("%s:%d", file, line)
		}
	}
	t.Fatalf("%s: no statement marked %d", file, n)
	return ""
}

// fuzz runs racekit fuzz --json with the given pairs and returns its
// result by pair; kept schedules go to keep (an absolute path).
func fuzz(t *testing.T, pkg string, pairs []string, runs int, keep string, testFlags ...string) []fuzzPair {
	t.Helper()
	pf := filepath.Join(t.TempDir(), "pairs")
	if err := os.WriteFile(pf, []byte(strings.Join(pairs, "\n")+"\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	args := []string{"fuzz", "--json", "--runs", strconv.Itoa(runs), "-j", "2", "--seed", "1", "--pairs", pf, "--keep", keep, pkg}
	if len(testFlags) > 0 {
		args = append(append(args, "--"), testFlags...)
	}
	code, out := runRacekit(t, args...)
	var res struct{ Pairs []fuzzPair }
	i := strings.Index(out, "{")
	if i < 0 || json.Unmarshal([]byte(out[i:]), &res) != nil {
		t.Fatalf("racekit fuzz: exit %d, output:\n%s", code, out)
	}
	real := false
	for _, p := range res.Pairs {
		real = real || p.Real
	}
	if want := map[bool]int{true: 66, false: 0}[real]; code != want {
		t.Errorf("exit status %d, want %d", code, want)
	}
	return res.Pairs
}

// outcomeRuns counts the runs whose outcome is a panic with detail.
func outcomeRuns(p fuzzPair, detail string) int {
	n := 0
	for _, o := range p.Outcomes {
		if o.Outcome == "panic" && o.Detail == detail {
			n += o.Runs
		}
	}
	return n
}

// checkReplays replays the first seed of every outcome of a created race
// ten times and compares each schedule with the one racekit fuzz recorded.
func checkReplays(t *testing.T, pkg string, pairIndex int, p fuzzPair, keep string, testFlags ...string) {
	t.Helper()
	for _, o := range p.Outcomes {
		if o.Resolution == "" {
			continue
		}
		seed := o.Seeds[0]
		schedFile := filepath.Join(t.TempDir(), "replay.sched")
		args := []string{"replay", "--seed", strconv.FormatUint(seed, 10), "--pair", p.Pair, "--times", "10", "--schedule", schedFile, pkg}
		if len(testFlags) > 0 {
			args = append(append(args, "--"), testFlags...)
		}
		_, out := runRacekit(t, args...)
		if !strings.Contains(out, "10 runs, identical schedules") || !strings.Contains(out, "race created: "+o.Resolution) {
			t.Errorf("replay of seed %d (%s): output:\n%s", seed, o.Resolution, out)
			continue
		}
		rec := readSched(t, filepath.Join(keep, fmt.Sprintf("%d-%d.sched", pairIndex, seed)))
		got := readSched(t, schedFile)
		if len(rec.Steps) == 0 || sched.DiffSteps(rec.Steps, got.Steps) != "" {
			t.Errorf("seed %d: replayed schedule (%d steps) differs from the fuzz run's (%d steps)", seed, len(got.Steps), len(rec.Steps))
		}
	}
}

func readSched(t *testing.T, path string) *sched.Schedule {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := sched.ReadSchedule(f, path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestFuzzFigure1: the pair on z (5, 7) is real and reaches ERROR1 in about
// half of the runs (when 7 runs first); the pair on x (1, 10) is never
// created.
func TestFuzzFigure1(t *testing.T) {
	const runs = 40
	file := "rffig1/fig1.go"
	p57 := markedLine(t, file, 5) + "~" + markedLine(t, file, 7)
	p110 := markedLine(t, file, 1) + "~" + markedLine(t, file, 10)
	keep := t.TempDir()
	ps := fuzz(t, "./rffig1", []string{p57, p110}, runs, keep)
	if len(ps) != 2 {
		t.Fatalf("%d pairs", len(ps))
	}
	z, x := ps[0], ps[1]
	if !z.Real || z.Created != runs || z.Escapes != 0 {
		t.Errorf("pair (5,7): real %v, created %d of %d, escapes %d", z.Real, z.Created, runs, z.Escapes)
	}
	e1 := outcomeRuns(z, "ERROR1")
	if e1 < runs/4 || e1 > runs*3/4 {
		t.Errorf("ERROR1 in %d of %d runs, want about half", e1, runs)
	}
	for _, o := range z.Outcomes {
		if o.Detail == "ERROR1" && !strings.HasPrefix(o.Resolution, markedLine(t, file, 7)) {
			t.Errorf("ERROR1 after resolution %q, want 7 first", o.Resolution)
		}
	}
	if x.Real || x.Created != 0 || outcomeRuns(x, "ERROR2") != 0 {
		t.Errorf("pair (1,10) on x: real %v, created %d; want never", x.Real, x.Created)
	}
	checkReplays(t, "./rffig1", 1, z, keep)

	// Phase 1 by hybrid detection on a recorded run finds (5,7) too.
	code, out := runRacekit(t, "fuzz", "--runs", "4", "-j", "2", "./rffig1")
	if code != 66 || !strings.Contains(out, "WARNING: DATA RACE (confirmed") || !strings.Contains(out, "(hybrid)") {
		t.Errorf("fuzz with hybrid phase 1: exit %d\n%s", code, out)
	}
}

// TestFuzzFigure2: the race between statements 8 and 10 is created in
// every run and ERROR is reached in about half of them, whatever the number
// of statements before 8.
func TestFuzzFigure2(t *testing.T) {
	const runs = 40
	file := "rffig2/fig2.go"
	pair := markedLine(t, file, 8) + "~" + markedLine(t, file, 10)
	for _, n := range []string{"5", "50", "500"} {
		t.Run("len"+n, func(t *testing.T) {
			flag := "-run=^TestFigure2Len" + n + "$"
			keep := t.TempDir()
			ps := fuzz(t, "./rffig2", []string{pair}, runs, keep, flag)
			if len(ps) != 1 {
				t.Fatalf("%d pairs", len(ps))
			}
			p := ps[0]
			if !p.Real || p.Created != runs || p.Probability != 1 || p.Escapes != 0 {
				t.Errorf("created %d of %d runs (probability %v), escapes %d", p.Created, runs, p.Probability, p.Escapes)
			}
			if e := outcomeRuns(p, "ERROR"); e < runs/4 || e > runs*3/4 {
				t.Errorf("ERROR in %d of %d runs, want about half", e, runs)
			}
			checkReplays(t, "./rffig2", 1, p, keep, flag)
		})
	}
}

// TestFuzzTimeout: a race that only a timeout shows (testdata/src/
// rftimeout) is created, with no goroutine leaving control, and every
// outcome replays exactly: timers, sleeps and the clock run on rt's
// virtual clock, whose timers fire when the seed says. (Before, a select
// waiting for a real timer left control, and its runs did not replay.)
func TestFuzzTimeout(t *testing.T) {
	const runs = 10
	file := "rftimeout/timeout.go"
	pair := markedLine(t, file, 1) + "~" + markedLine(t, file, 2)
	keep := t.TempDir()
	ps := fuzz(t, "./rftimeout", []string{pair}, runs, keep)
	if len(ps) != 1 {
		t.Fatalf("%d pairs", len(ps))
	}
	p := ps[0]
	if !p.Real || p.Escapes != 0 {
		t.Errorf("real %v (created %d of %d runs), escapes %d; want real, none", p.Real, p.Created, runs, p.Escapes)
	}
	checkReplays(t, "./rftimeout", 1, p, keep)
}

// markedAt returns file:line of the line of file (under testdata/src)
// whose comment is exactly "// mark".
func markedAt(t *testing.T, file, mark string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata/src", file))
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(data), "\n") {
		if strings.HasSuffix(strings.TrimSpace(l), "// "+mark) {
			return fmt.Sprintf("%s:%d", file, i+1)
		}
	}
	t.Fatalf("%s: no line marked %s", file, mark)
	return ""
}

// TestFuzzFigure2Guarded is Example 2 (§3.2) with a harmless read on
// statement 8's line (rffig2.RunGuarded: `if ready && x == 0`). Phase 1,
// hybrid over one recorded run, names the pair by its two accesses, 8's
// read of x and 10's write (file:line:col:r and :w), and phase 2 creates
// the race with probability 1: in every run of seeds 1 to 100, and ERROR
// in about half. The same pair by lines (a pairs file's older form) still
// works, at a lower probability: the read of ready is a point of it.
// Each outcome's kept schedule, followed by racekit replay -follow (its
// pair read from the file), makes the race happen again and says so.
func TestFuzzFigure2Guarded(t *testing.T) {
	const runs = 100
	file := "rffig2/fig2.go"
	l8, l10 := markedAt(t, file, "8g"), markedAt(t, file, "10g")
	flag := "-run=^TestFigure2GuardedLen50$"
	keep := t.TempDir()
	// Three plain recordings and two under the controlled random
	// scheduler: a plain run of Figure 2 reaches ERROR (the read of x
	// before thread2's write, which then never happens: no pair) in
	// about 1 run of 20 on a loaded machine, as in 2 of 4 CI runs of
	// session 23 with one recording, and in all three of one CI run of
	// session 47 (thread2 started late); a controlled run is the same
	// on every machine, its seed deciding.
	code, out := runRacekit(t, "fuzz", "--json", "--record", "3", "--record-random", "2", "--runs", strconv.Itoa(runs), "-j", "2", "--seed", "1", "--baseline", "1", "--keep", keep, "./rffig2", "--", flag)
	var res struct{ Pairs []fuzzPair }
	i := strings.Index(out, "{")
	if i < 0 || json.Unmarshal([]byte(out[i:]), &res) != nil || code != 66 {
		t.Fatalf("racekit fuzz: exit %d, output:\n%s", code, out)
	}
	var p *fuzzPair
	for k := range res.Pairs {
		if a, b, _ := strings.Cut(res.Pairs[k].Pair, "~"); strings.Contains(a+b, l8+":") && strings.Contains(a+b, l10+":") {
			p = &res.Pairs[k]
		}
	}
	if p == nil {
		t.Fatalf("no candidate pair between %s and %s: %+v", l8, l10, res.Pairs)
	}
	if !strings.HasSuffix(p.Pair, ":r") && !strings.HasSuffix(p.Pair, ":w") {
		t.Errorf("pair %s does not name its accesses", p.Pair)
	}
	t.Logf("pair %s: created in %d of %d runs, ERROR in %d", p.Pair, p.Created, p.Runs, outcomeRuns(*p, "ERROR"))
	if p.Created != runs || p.Probability != 1 || p.Escapes != 0 {
		t.Errorf("created in %d of seeds 1..%d (probability %v, escapes %d), want all", p.Created, runs, p.Probability, p.Escapes)
	}
	if e := outcomeRuns(*p, "ERROR"); e < runs/4 || e > runs*3/4 {
		t.Errorf("ERROR in %d of %d runs, want about half", e, runs)
	}

	// Follow each outcome's first run: the race it created is reported.
	for _, o := range p.Outcomes {
		if o.Resolution == "" {
			continue
		}
		path := filepath.Join(keep, fmt.Sprintf("1-%d.sched", o.Seeds[0]))
		_, out := runRacekit(t, "replay", "--follow", path, "./rffig2", "--", flag)
		if !strings.Contains(out, "race created: "+o.Resolution) || strings.Contains(out, "left the schedule") {
			t.Errorf("replay -follow %s (%s): output:\n%s", filepath.Base(path), o.Resolution, out)
		}
	}

	// By lines: still a pair, created in some runs but not all.
	lines := fuzz(t, "./rffig2", []string{l8 + "~" + l10}, 20, t.TempDir(), flag)
	if len(lines) != 1 || !lines[0].Real {
		t.Fatalf("line-only pair: %+v", lines)
	}
	t.Logf("line-only pair: created in %d of 20 runs", lines[0].Created)
}
