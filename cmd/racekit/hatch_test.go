package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/racekit/racekit/confirm"
	"github.com/racekit/racekit/sched"
)

// racekit hatch --record-seed on testdata/fuzzrand, for real: recorded
// under the controlled random scheduler with seed 4, two goroutines wait
// for the token and bump Waits without the lock; PECAN predicts that race
// and the clip run confirms it (exit 66).
func TestHatchRecordSeed(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs an instrumented test binary")
	}
	waits := markedLines(t, "testdata/fuzzrand/fuzzrand.go", "WAITS")[0]
	out, stderr, code := racekit(t, "hatch", "--json", "--record-seed", "4", "-j", "2", "./testdata/fuzzrand")
	var res confirm.HatchResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("exit %d, bad JSON (%v)\n%s\nstderr:\n%s", code, err, out, stderr)
	}
	if code != exitRaces {
		t.Errorf("exit status %d, want %d", code, exitRaces)
	}
	found := false
	for _, a := range res.Anomalies {
		if a.Kind == "race" && len(a.Sites) == 2 && sched.LineSite(a.Sites[0]) == waits && sched.LineSite(a.Sites[1]) == waits {
			found = true
			if a.Verdict != "confirmed" {
				t.Errorf("the race on Waits: verdict %q, want confirmed", a.Verdict)
			}
		}
	}
	if !found {
		t.Errorf("no race on Waits (%s) predicted: %+v", waits, res.Anomalies)
	}
}

// --recordings: testdata/fuzzrand recorded under the controlled random
// scheduler with seeds 1, 2 and 3 never lets two goroutines bump Waits
// without the lock, so nothing is predicted; the fourth recording (seed 4)
// does, and its clip confirms the race. Each recording is reported, and
// the run names the recording whose clip it followed.
func TestHatchRecordings(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs instrumented test binaries")
	}
	waits := markedLines(t, "testdata/fuzzrand/fuzzrand.go", "WAITS")[0]
	hatch := func(n int) (confirm.HatchResult, int) {
		out, stderr, code := racekit(t, "hatch", "--json", "--record-seed", "1", "--recordings", strconv.Itoa(n), "-j", "2", "./testdata/fuzzrand")
		var res confirm.HatchResult
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("exit %d, bad JSON (%v)\n%s\nstderr:\n%s", code, err, out, stderr)
		}
		if len(res.Recordings) != n {
			t.Fatalf("%d recordings reported, want %d", len(res.Recordings), n)
		}
		return res, code
	}
	if res, code := hatch(3); res.Predicted != 0 || code != exitOK {
		t.Fatalf("seeds 1-3: %d predictions (exit %d), want none: the test no longer shows what --recordings adds", res.Predicted, code)
	}
	res, code := hatch(4)
	if code != exitRaces || res.Predicted != 1 || res.Confirmed != 1 {
		t.Fatalf("seeds 1-4: exit %d, %d predicted, %d confirmed; want 66, 1, 1", code, res.Predicted, res.Confirmed)
	}
	if r := res.Recordings[3]; r.Predicted != 1 || r.New != 1 || r.Events == 0 {
		t.Errorf("fourth recording %+v: want 1 prediction, new", r)
	}
	a := res.Anomalies[0]
	if a.Kind != "race" || sched.LineSite(a.Sites[0]) != waits || len(a.Runs) != 1 || a.Runs[0].Recording != 4 {
		t.Errorf("anomaly %+v: want the race on Waits (%s), one run along the fourth recording's clip", a, waits)
	}
	// A list of seeds: one recording each, in its order.
	out, stderr, code := racekit(t, "hatch", "--json", "--record-seed", "2,4", "-j", "2", "./testdata/fuzzrand")
	var two confirm.HatchResult
	if err := json.Unmarshal([]byte(out), &two); err != nil {
		t.Fatalf("--record-seed 2,4: exit %d, bad JSON (%v)\n%s\nstderr:\n%s", code, err, out, stderr)
	}
	if len(two.Recordings) != 2 || two.Recordings[0].Seed != 2 || two.Recordings[1].Seed != 4 || two.Confirmed != 1 || two.Anomalies[0].Runs[0].Recording != 2 {
		t.Errorf("--record-seed 2,4: exit %d, recordings %+v, %d confirmed; want seeds 2 and 4, the race confirmed along the second's clip", code, two.Recordings, two.Confirmed)
	}
	for _, args := range [][]string{
		{"--recordings", "2", "-use-trace", "x.rkt"},
		{"--record-seed", "1,2", "--recordings", "3"},
		{"--record-seed", "1,x"},
		{"--record-preempt", "1.5"},
		{"--record-preempt", "0.5"}, // Go's scheduler: nothing to preempt
	} {
		if _, _, code := racekit(t, append(append([]string{"hatch"}, args...), "./testdata/fuzzrand")...); code != exitUsage {
			t.Errorf("hatch %v: exit %d, want %d", args, code, exitUsage)
		}
	}
}

// TestHatchPreempt: testdata/lazyinit's two workers both store the table
// only when one is interrupted between its check and its store. Recorded
// under the random scheduler alone no recording has the two stores (there
// is no scheduling point between them), so the write/write race is not
// predicted, over 30 seeds; with each access a scheduling point with
// probability 0.5, some of the same 30 seeds' recordings have them (3 in
// 30 when written; which ones moves with every change of what is
// recorded) and the clip confirms the race.
func TestHatchPreempt(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs instrumented test binaries")
	}
	store := markedLines(t, "testdata/lazyinit/lazyinit.go", "STORE")[0]
	ww := func(args ...string) (string, bool) {
		out, stderr, code := racekit(t, append(append([]string{"hatch", "--json", "--kinds", "race", "-j", "2"}, args...), "./testdata/lazyinit")...)
		var res confirm.HatchResult
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("hatch %v: exit %d, bad JSON (%v)\n%s\nstderr:\n%s", args, code, err, out, stderr)
		}
		for _, a := range res.Anomalies {
			if a.Pattern == "race-w-w" && sched.LineSite(a.Sites[0]) == store && sched.LineSite(a.Sites[1]) == store {
				return a.Verdict, true
			}
		}
		return "", false
	}
	seeds := make([]string, 30)
	for i := range seeds {
		seeds[i] = strconv.Itoa(i + 1)
	}
	all := strings.Join(seeds, ",")
	if v, ok := ww("--record-seed", all); ok {
		t.Fatalf("without preemption: the write/write race was predicted (%s); the test no longer shows what --record-preempt adds", v)
	}
	if v, ok := ww("--record-seed", all, "--record-preempt", "0.5"); v != "confirmed" {
		t.Errorf("--record-seed 1-30 --record-preempt 0.5: write/write race predicted %v, verdict %q; want confirmed", ok, v)
	}
}

// TestHatchVirtualClock: testdata/ttlcache's race needs both Gets to hit
// an entry whose TTL (1ms) is shorter than the work before the lookup. The
// recording, on the random scheduler's virtual clock, hits; so must the
// clip, which therefore runs on the virtual clock too. (On the real clock
// the clip run found the entry expired and departed: "g0.2 ran done for
// its position 3, the clip has r ttlcache.go:45".)
func TestHatchVirtualClock(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs instrumented test binaries")
	}
	hits := markedLines(t, "testdata/ttlcache/ttlcache.go", "HITS")[0]
	out, stderr, code := racekit(t, "hatch", "--json", "--kinds", "race", "--record-seed", "1", "-j", "2", "./testdata/ttlcache")
	var res confirm.HatchResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("exit %d, bad JSON (%v)\n%s\nstderr:\n%s", code, err, out, stderr)
	}
	if code != exitRaces || len(res.Anomalies) != 1 {
		t.Fatalf("exit %d, anomalies %+v; want one race on hits", code, res.Anomalies)
	}
	a := res.Anomalies[0]
	if sched.LineSite(a.Sites[0]) != hits || sched.LineSite(a.Sites[1]) != hits || a.Verdict != "confirmed" {
		t.Errorf("anomaly %s %v: verdict %q (%+v); want the race on hits (line %v) confirmed", a.Pattern, a.Sites, a.Verdict, a.Runs, hits)
	}
}

// A hatch campaign run as 3 shards, one after another, and merged gives
// the unsharded campaign's anomalies and verdicts. The recordings run on
// the controlled random scheduler (-record-seed), the same in every shard.
func TestHatchShards(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs instrumented test binaries")
	}
	// AtomFuzzer's phase records under Go's scheduler, which shards
	// need not agree on: left out.
	args := []string{"hatch", "--json", "-q", "--record-seed", "4", "-j", "2", "--atomfuzz=false"}
	run := func(extra ...string) (string, confirm.HatchResult) {
		t.Helper()
		out, stderr, code := racekit(t, append(append(slices.Clone(args), extra...), "./testdata/lazyinit")...)
		var res confirm.HatchResult
		if err := json.Unmarshal([]byte(out), &res); err != nil || (code != exitRaces && code != exitOK) {
			t.Fatalf("hatch %v: exit %d (%v)\n%s\nstderr:\n%s", extra, code, err, out, stderr)
		}
		return out, res
	}
	_, whole := run()
	if whole.Predicted < 2 {
		t.Fatalf("unsharded: %d predictions, want 2 or more for shards to split", whole.Predicted)
	}
	dir := t.TempDir()
	var files []string
	for k := 1; k <= 3; k++ {
		out, _ := run("--shard", fmt.Sprintf("%d/3", k))
		f := filepath.Join(dir, fmt.Sprintf("shard%d.json", k))
		if err := os.WriteFile(f, []byte(out), 0o666); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	out, stderr, _ := racekit(t, append([]string{"merge", "--json"}, files...)...)
	var merged confirm.HatchResult
	if err := json.Unmarshal([]byte(out), &merged); err != nil {
		t.Fatalf("merge: %v\n%s\nstderr:\n%s", err, out, stderr)
	}
	type verdict struct {
		Index                  int
		Kind, Pattern, Verdict string
		Sites                  string
	}
	verdicts := func(r confirm.HatchResult) []verdict {
		var v []verdict
		for _, a := range r.Anomalies {
			v = append(v, verdict{a.Index, a.Kind, a.Pattern, a.Verdict, strings.Join(a.Sites, " ")})
		}
		splits := slices.Clone(r.Splits) // merged in split order
		slices.SortFunc(splits, func(a, b confirm.AtomicitySplit) int { return strings.Compare(a.Split, b.Split) })
		for _, s := range splits {
			v = append(v, verdict{0, "split", s.Split, s.Verdict, ""})
		}
		return v
	}
	if !reflect.DeepEqual(verdicts(merged), verdicts(whole)) || merged.Predicted != whole.Predicted || merged.Confirmed != whole.Confirmed || merged.Observed != whole.Observed {
		t.Errorf("merged shards: %d predicted, %d confirmed, %d observed, %+v\nunsharded: %d, %d, %d, %+v",
			merged.Predicted, merged.Confirmed, merged.Observed, verdicts(merged), whole.Predicted, whole.Confirmed, whole.Observed, verdicts(whole))
	}
}
