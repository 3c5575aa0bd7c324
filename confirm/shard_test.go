package confirm

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseShard(t *testing.T) {
	for in, want := range map[string]Shard{"": {}, "1/1": {1, 1}, "3/4": {3, 4}} {
		if got, err := ParseShard(in); err != nil || got != want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"0/4", "5/4", "4", "a/b", "1/0", "-1/2"} {
		if _, err := ParseShard(bad); err == nil {
			t.Errorf("ParseShard(%q): no error", bad)
		}
	}
}

// Bazel's variables count shards from 0; racekit's K from 1. The status
// file is touched to tell Bazel the test shards.
func TestShardFromEnv(t *testing.T) {
	status := filepath.Join(t.TempDir(), "status")
	t.Setenv("TEST_TOTAL_SHARDS", "4")
	t.Setenv("TEST_SHARD_INDEX", "0")
	t.Setenv("TEST_SHARD_STATUS_FILE", status)
	if s, err := ShardFromEnv(); err != nil || s != (Shard{1, 4}) {
		t.Errorf("index 0 of 4: %v, %v; want 1/4", s, err)
	}
	if _, err := os.Stat(status); err != nil {
		t.Errorf("status file not touched: %v", err)
	}
	t.Setenv("TEST_SHARD_INDEX", "4")
	if _, err := ShardFromEnv(); err == nil {
		t.Errorf("index 4 of 4: no error")
	}
	t.Setenv("TEST_TOTAL_SHARDS", "")
	if s, err := ShardFromEnv(); err != nil || s != (Shard{}) {
		t.Errorf("unset: %v, %v; want the whole campaign", s, err)
	}
}

// Every candidate and every baseline seed is in exactly one shard of N,
// and a candidate's shard does not depend on where the files are.
func TestShardPartition(t *testing.T) {
	var keys []string
	for i := 0; i < 200; i++ {
		keys = append(keys, shardKey("m/p", fmt.Sprintf("/src/m/p/a.go:%d~/src/m/p/b.go:%d", i, 3*i)))
	}
	for _, n := range []int{1, 2, 4, 7} {
		in := map[string]int{}
		seeds := map[uint64]int{}
		for k := 1; k <= n; k++ {
			s := Shard{k, n}
			mine := 0
			for _, key := range keys {
				if s.has(key) {
					in[key]++
					mine++
				}
			}
			if mine < len(keys)/n/2 {
				t.Errorf("%v: %d of %d candidates", s, mine, len(keys))
			}
			for _, seed := range s.baselineSeeds(5, 10) {
				seeds[seed]++
			}
			if got, want := s.count(10), len(s.baselineSeeds(5, 10)); got != want {
				t.Errorf("%v: count %d, %d seeds", s, got, want)
			}
		}
		for _, key := range keys {
			if in[key] != 1 {
				t.Fatalf("N=%d: %q in %d shards", n, key, in[key])
			}
		}
		for i := uint64(5); i < 15; i++ {
			if seeds[i] != 1 {
				t.Errorf("N=%d: seed %d in %d shards", n, i, seeds[i])
			}
		}
	}
	a := shardKey("m/p", "/home/a/m/p/x.go:3~/home/a/m/p/x.go:9")
	b := shardKey("m/p", "/ci/work/m/p/x.go:3~/ci/work/m/p/x.go:9")
	if a != b {
		t.Errorf("the key depends on the checkout: %q, %q", a, b)
	}
}

// MergeFuzz gives the whole campaign's result: pairs in phase 1's order,
// baseline counted over every shard; a missing or repeated shard is an
// error.
func TestMergeFuzz(t *testing.T) {
	pair := func(i int, out string) FuzzPair {
		fp := FuzzPair{Index: i, Pair: "a.go:" + string(rune('0'+i)) + "~a.go:9", Package: "m", Runs: 2,
			Outcomes: []FuzzOutcome{{Outcome: out, Runs: 2, Seeds: []uint64{1, 2}}}}
		fp.setVerdict()
		return fp
	}
	shards := []FuzzResult{
		{Shard: "2/2", BaselineRuns: 1, Baselines: []BaselineOutcome{{Package: "m", Outcome: "test failure", Detail: "TestX", Seeds: []uint64{2}}},
			Pairs: []FuzzPair{pair(2, "test failure")}},
		{Shard: "1/2", BaselineRuns: 1, Baselines: []BaselineOutcome{{Package: "m", Outcome: "test failure", Detail: "TestX", Seeds: []uint64{1}}},
			Pairs: []FuzzPair{pair(1, "none"), pair(3, "test failure")}},
	}
	shards[0].Pairs[0].Outcomes[0].Detail = "TestX"
	shards[1].Pairs[1].Outcomes[0].Detail = "TestX"
	m, err := MergeFuzz(shards)
	if err != nil {
		t.Fatal(err)
	}
	var order []int
	for _, p := range m.Pairs {
		order = append(order, p.Index)
	}
	if !reflect.DeepEqual(order, []int{1, 2, 3}) || m.BaselineRuns != 2 || m.Shard != "" {
		t.Errorf("merged: order %v, %d baseline runs, shard %q", order, m.BaselineRuns, m.Shard)
	}
	if len(m.Baselines) != 1 || !reflect.DeepEqual(m.Baselines[0].Seeds, []uint64{1, 2}) {
		t.Errorf("baselines %+v, want one outcome with seeds 1 2", m.Baselines)
	}
	for _, p := range m.Pairs {
		want := 0
		if p.Outcomes[0].Outcome == "test failure" {
			want = 2
		}
		if p.Outcomes[0].Baseline != want {
			t.Errorf("pair %d: baseline %d, want %d", p.Index, p.Outcomes[0].Baseline, want)
		}
	}
	for _, bad := range [][]FuzzResult{
		shards[:1],                  // 1/2 missing
		{shards[0], shards[0]},      // 2/2 twice
		{shards[1], {Shard: "2/3"}}, // of other campaigns
		{shards[1], {}, shards[0]},  // a whole campaign's result
		nil,
	} {
		if _, err := MergeFuzz(bad); err == nil {
			t.Errorf("merging %d results: no error", len(bad))
		}
	}
}

// MergeHatch gives the whole hatch campaign's result: the anomalies in
// prediction order, the verdicts summed, the split regions of all.
func TestMergeHatch(t *testing.T) {
	shards := []HatchResult{
		{Shard: "2/2", Predicted: 3, Confirmed: 1, Anomalies: []HatchAnomaly{{Index: 2, Verdict: "confirmed"}}, Splits: []AtomicitySplit{{Split: "b>c"}}},
		{Shard: "1/2", Predicted: 3, Confirmed: 1, Observed: 1, Anomalies: []HatchAnomaly{{Index: 1, Verdict: "observed"}, {Index: 3, Verdict: "confirmed"}}, Splits: []AtomicitySplit{{Split: "a>b"}}},
	}
	m, err := MergeHatch(shards)
	if err != nil {
		t.Fatal(err)
	}
	var order []int
	for _, a := range m.Anomalies {
		order = append(order, a.Index)
	}
	if !reflect.DeepEqual(order, []int{1, 2, 3}) || m.Confirmed != 2 || m.Observed != 1 || m.Predicted != 3 || len(m.Splits) != 2 || m.Shard != "" || !m.Found() {
		t.Errorf("merged: %+v", m)
	}
	if _, err := MergeHatch(shards[1:]); err == nil || !strings.Contains(err.Error(), "shards missing: 2/2") {
		t.Errorf("one of two shards: error %v", err)
	}
}

// The shards of -deadlocks and -atomicity campaigns merge into every
// shard's cycles or regions, in order; a missing shard is an error.
func TestMergeDeadlocksAtomicity(t *testing.T) {
	d, err := MergeDeadlocks([]DeadlockResult{
		{Shard: "2/2", Cycles: []DeadlockCycle{{Package: "m", Cycle: "b"}}, Explored: []ExploredBlocking{{Package: "p"}}},
		{Shard: "1/2", Cycles: []DeadlockCycle{{Package: "m", Cycle: "c"}, {Package: "m", Cycle: "a"}}, Explored: []ExploredBlocking{{Package: "n"}}},
	})
	if err != nil || len(d.Cycles) != 3 || d.Cycles[0].Cycle != "a" || d.Cycles[2].Cycle != "c" || d.Shard != "" {
		t.Errorf("merged cycles %+v, %v", d, err)
	}
	if len(d.Explored) != 2 || d.Explored[0].Package != "n" || d.Explored[1].Package != "p" {
		t.Errorf("merged explored deadlocks %+v", d.Explored)
	}
	a, err := MergeAtomicity([]AtomicityResult{{Shard: "1/1", Splits: []AtomicitySplit{{Package: "m", Split: "x>y"}}}})
	if err != nil || len(a.Splits) != 1 {
		t.Errorf("merged splits %+v, %v", a, err)
	}
	if _, err := MergeDeadlocks([]DeadlockResult{{Shard: "1/2"}}); err == nil {
		t.Errorf("one of two shards merged")
	}
}
