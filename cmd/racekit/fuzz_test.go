package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/racekit/racekit/confirm"
)

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
// 66), and returns its result and its pairs by confirm.PairKey.
func fuzzRaces(t *testing.T, args ...string) (confirm.FuzzResult, map[string]confirm.FuzzPair) {
	t.Helper()
	out, stderr, code := racekit(t, append([]string{"fuzz", "--json"}, args...)...)
	var res confirm.FuzzResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("exit %d, bad JSON (%v)\n%s\nstderr:\n%s", code, err, out, stderr)
	}
	if code != exitRaces {
		t.Errorf("exit status %d, want %d", code, exitRaces)
	}
	byPair := map[string]confirm.FuzzPair{}
	for _, p := range res.Pairs {
		byPair[confirm.PairKey(p.Pair)] = p
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
		p, ok := byPair[confirm.PairKey(c.pair)]
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
	f, ok := byPair[confirm.PairKey(flag[0]+"~"+flag[1])]
	if !ok || !f.Real || f.Verdict != "confirmed" {
		t.Errorf("the flag's pair: %+v (present %v); want confirmed", f, ok)
	}
	d, ok := byPair[confirm.PairKey(data[0]+"~"+data[1])]
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
	if p, ok := byPair[confirm.PairKey(waits+"~"+waits)]; !ok || p.Verdict != "confirmed" {
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
	var res confirm.FuzzResult
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
		want = append(want, fmt.Sprintf("pair %d/%d %s~%s: 3/3 runs, %d created", i+1, len(res.Pairs), relToWD(t, a), relToWD(t, b), p.Created))
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
	var qres confirm.FuzzResult
	if err := json.Unmarshal([]byte(qout), &qres); err != nil || len(qres.Pairs) != len(res.Pairs) {
		t.Errorf("with -q: %d pairs (%v), want %d", len(qres.Pairs), err, len(res.Pairs))
	}
}

// relToWD is an absolute file name relative to the working directory, as
// fuzz's progress lines show it.
func relToWD(t *testing.T, name string) string {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(name, wd+string(filepath.Separator))
}

// A campaign run as 4 shards, one after another, and merged gives the
// unsharded campaign's verdicts: the same pairs in the same order, each
// with its runs, and each outcome compared with the same baseline runs.
// Phase 1 is a pairs file, the same in every shard.
func TestFuzzShards(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs instrumented test binaries")
	}
	z := markedLines(t, "testdata/fuzzvet/fuzzvet.go", "RACE")[0]
	counts := markedLines(t, "testdata/fuzzvet/fuzzvet.go", "FALSE")[0]
	y := markedLines(t, "testdata/fuzzvet/fuzzvet_test.go", "TESTRACE")
	dir := t.TempDir()
	pairs := filepath.Join(dir, "pairs")
	lines := []string{z + "~" + z, counts + "~" + counts, y[0] + "~" + y[1], z + "~" + counts, y[0] + "~" + y[0]}
	if err := os.WriteFile(pairs, []byte(strings.Join(lines, "\n")+"\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	args := []string{"fuzz", "--json", "-q", "--pairs", pairs, "--runs", "3", "-j", "2", "--baseline", "5"}
	run := func(extra ...string) (string, confirm.FuzzResult) {
		t.Helper()
		out, stderr, code := racekit(t, append(append(slices.Clone(args), extra...), "./testdata/fuzzvet")...)
		var res confirm.FuzzResult
		if err := json.Unmarshal([]byte(out), &res); err != nil || (code != exitRaces && code != exitOK) {
			t.Fatalf("fuzz %v: exit %d (%v)\n%s\nstderr:\n%s", extra, code, err, out, stderr)
		}
		return out, res
	}
	_, whole := run()
	if len(whole.Pairs) != len(lines) {
		t.Fatalf("unsharded: %d pairs, want %d", len(whole.Pairs), len(lines))
	}
	var files []string
	inShards, nonEmpty := 0, 0
	for k := 1; k <= 4; k++ {
		out, res := run("--shard", fmt.Sprintf("%d/4", k))
		inShards += len(res.Pairs)
		if len(res.Pairs) > 0 {
			nonEmpty++
		}
		f := filepath.Join(dir, fmt.Sprintf("shard%d.json", k))
		if err := os.WriteFile(f, []byte(out), 0o666); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if inShards != len(lines) || nonEmpty < 2 {
		t.Errorf("the shards ran %d pairs (%d shards not empty), want %d over 2 shards or more", inShards, nonEmpty, len(lines))
	}
	out, stderr, code := racekit(t, append([]string{"merge", "--json"}, files...)...)
	var merged confirm.FuzzResult
	if err := json.Unmarshal([]byte(out), &merged); err != nil {
		t.Fatalf("merge: exit %d (%v)\n%s\nstderr:\n%s", code, err, out, stderr)
	}
	if wantCode := map[bool]int{true: exitRaces, false: exitOK}[whole.Races()]; code != wantCode {
		t.Errorf("merge: exit %d, want %d", code, wantCode)
	}
	if merged.BaselineRuns != whole.BaselineRuns || len(merged.Pairs) != len(whole.Pairs) {
		t.Fatalf("merged: %d baseline runs, %d pairs; unsharded %d, %d", merged.BaselineRuns, len(merged.Pairs), whole.BaselineRuns, len(whole.Pairs))
	}
	for i, w := range whole.Pairs {
		m := merged.Pairs[i]
		if m.Index != w.Index || m.Pair != w.Pair || m.Verdict != w.Verdict || m.Runs != w.Runs {
			t.Errorf("pair %d: merged %d %s %s (%d runs), unsharded %d %s %s (%d runs)", i+1, m.Index, m.Pair, m.Verdict, m.Runs, w.Index, w.Pair, w.Verdict, w.Runs)
			continue
		}
		if m.Escapes > 0 || w.Escapes > 0 {
			continue // runs that left the scheduler's control need not repeat
		}
		if !reflect.DeepEqual(m.Outcomes, w.Outcomes) {
			t.Errorf("pair %d (%s): merged outcomes %+v, unsharded %+v", i+1, w.Pair, m.Outcomes, w.Outcomes)
		}
	}
	// A missing shard is an error that names it.
	if _, stderr, code := racekit(t, append([]string{"merge"}, files[:3]...)...); code != exitError || !strings.Contains(stderr, "shards missing: 4/4") {
		t.Errorf("merge of 3 of 4 shards: exit %d, stderr %q", code, stderr)
	}
}
