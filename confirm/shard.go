package confirm

import (
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Shard is part K of N of a campaign (1 <= K <= N): the candidates whose
// key hashes to K (the same in every shard, whatever order phase 1 found
// them in, wherever the module is checked out) and the baseline seeds
// Seed+i with i mod N = K-1. The zero Shard is the whole campaign. Each
// shard makes its own phase 1, so shards agree when phase 1 does: with a
// pairs file, vet or one trace; runs recorded under Go's scheduler may
// show other pairs in each shard.
type Shard struct{ K, N int }

// ParseShard parses "K/N"; "" is the whole campaign.
func ParseShard(s string) (Shard, error) {
	if s == "" {
		return Shard{}, nil
	}
	k, n, ok := strings.Cut(s, "/")
	ki, err1 := strconv.Atoi(k)
	ni, err2 := strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil || ni < 1 || ki < 1 || ki > ni {
		return Shard{}, fmt.Errorf("-shard %q: want K/N with 1 <= K <= N", s)
	}
	return Shard{K: ki, N: ni}, nil
}

// ShardFromEnv is the shard Bazel's test sharding asks for
// (TEST_SHARD_INDEX, from 0, of TEST_TOTAL_SHARDS), with its status file
// touched to say the test honours it; the zero Shard when unset.
func ShardFromEnv() (Shard, error) {
	total, index := os.Getenv("TEST_TOTAL_SHARDS"), os.Getenv("TEST_SHARD_INDEX")
	if total == "" {
		return Shard{}, nil
	}
	i, err1 := strconv.Atoi(index)
	n, err2 := strconv.Atoi(total)
	if err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("TEST_SHARD_INDEX=%q TEST_TOTAL_SHARDS=%q: want 0 <= index < total", index, total)
	}
	if f := os.Getenv("TEST_SHARD_STATUS_FILE"); f != "" {
		if err := os.WriteFile(f, nil, 0o666); err != nil {
			return Shard{}, err
		}
	}
	return Shard{K: i + 1, N: n}, nil
}

func (s Shard) String() string {
	if s.N == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.K, s.N)
}

// whole reports whether s is the whole campaign.
func (s Shard) whole() bool { return s.N <= 1 }

// has reports whether the candidate with this key is in the shard.
func (s Shard) has(key string) bool {
	if s.whole() {
		return true
	}
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32()%uint32(s.N)) == s.K-1
}

// baselineSeeds are the shard's baseline seeds among seed, seed+1, ...,
// seed+n-1.
func (s Shard) baselineSeeds(seed uint64, n int) []uint64 {
	var out []uint64
	for i := 0; i < n; i++ {
		if s.whole() || i%s.N == s.K-1 {
			out = append(out, seed+uint64(i))
		}
	}
	return out
}

// count is how many of n baseline seeds are the shard's.
func (s Shard) count(n int) int { return len(s.baselineSeeds(0, n)) }

// inShard keeps the jobs whose key is in shard s.
func inShard[T any](s Shard, jobs []T, key func(T) string) []T {
	return slices.DeleteFunc(jobs, func(j T) bool { return !s.has(key(j)) })
}

// shardKey names a candidate the same way on every machine: its package
// and what it is with each file name reduced to its base (a checkout's or
// module cache's directory differs between machines).
func shardKey(pkg, what string) string {
	return pkg + " " + baseNames(what)
}

// baseNames reduces every absolute or relative file path in s (a word
// containing a path separator) to its base name.
func baseNames(s string) string {
	f := strings.FieldsFunc(s, func(r rune) bool { return r == '~' || r == '>' || r == ' ' || r == ';' })
	for _, w := range f {
		if strings.ContainsRune(w, filepath.Separator) {
			s = strings.Replace(s, w, filepath.Base(w), 1)
		}
	}
	return s
}

// shard keeps the candidates of shard s.
func (c *candidates) shard(s Shard) {
	c.jobs = inShard(s, c.jobs, func(jb fuzzJob) string { return shardKey(jb.t.Pkg, PairKey(jb.pair)) })
}

// MergeFuzz joins the results of a campaign's shards (each of the N once)
// into the whole campaign's: its pairs in phase 1's order, each outcome's
// baseline counted over every shard's baseline runs. Phase 1's times are
// summed (each shard made its own phase 1).
func MergeFuzz(shards []FuzzResult) (FuzzResult, error) {
	if len(shards) == 0 {
		return FuzzResult{}, fmt.Errorf("no result to merge")
	}
	names := make([]string, len(shards))
	for i, r := range shards {
		names[i] = r.Shard
	}
	if err := checkShards(names); err != nil {
		return FuzzResult{}, err
	}
	m := FuzzResult{Phase1: shards[0].Phase1, Phase1Pairs: shards[0].Phase1Pairs, Phase1SourceSeconds: map[string]float64{}}
	base := map[[3]string]int{}
	for _, r := range shards {
		m.Phase1Seconds += r.Phase1Seconds
		for k, v := range r.Phase1SourceSeconds {
			m.Phase1SourceSeconds[k] += v
		}
		m.BaselineRuns += r.BaselineRuns
		for _, b := range r.Baselines {
			k := [3]string{b.Package, b.Outcome, b.Detail}
			i, ok := base[k]
			if !ok {
				i = len(m.Baselines)
				base[k] = i
				m.Baselines = append(m.Baselines, BaselineOutcome{Package: b.Package, Outcome: b.Outcome, Detail: b.Detail})
			}
			m.Baselines[i].Seeds = append(m.Baselines[i].Seeds, b.Seeds...)
		}
		m.Pairs = append(m.Pairs, r.Pairs...)
	}
	for i := range m.Baselines {
		slices.Sort(m.Baselines[i].Seeds)
	}
	sort.SliceStable(m.Pairs, func(i, j int) bool { return m.Pairs[i].Index < m.Pairs[j].Index })
	m.countBaselines()
	return m, nil
}

// checkShards checks that names are the shards of one campaign, each of
// its N once.
func checkShards(names []string) error {
	if len(names) == 0 {
		return fmt.Errorf("no result to merge")
	}
	n := 0
	seen := map[int]bool{}
	for i, name := range names {
		s, err := ParseShard(name)
		if err != nil || s.N == 0 {
			return fmt.Errorf("result %d is not a shard's (shard %q)", i+1, name)
		}
		if n != 0 && s.N != n {
			return fmt.Errorf("result %d is shard %s, the others are of %d", i+1, name, n)
		}
		n = s.N
		if seen[s.K] {
			return fmt.Errorf("shard %s given twice", name)
		}
		seen[s.K] = true
	}
	var missing []string
	for k := 1; k <= n; k++ {
		if !seen[k] {
			missing = append(missing, fmt.Sprintf("%d/%d", k, n))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("shards missing: %s", strings.Join(missing, ", "))
	}
	return nil
}

// MergeHatch joins the results of a hatch campaign's shards (each of the
// N once) into the whole campaign's: the anomalies in prediction order,
// the verdicts counted over every shard, the split regions of all. The
// recordings are the first shard's (each shard records its own: they
// agree with -record-seed or -use-trace); the times are summed.
func MergeHatch(shards []HatchResult) (HatchResult, error) {
	names := make([]string, len(shards))
	for i, r := range shards {
		names[i] = r.Shard
	}
	if err := checkShards(names); err != nil {
		return HatchResult{}, err
	}
	m := shards[0]
	m.Shard, m.Anomalies, m.Splits = "", nil, nil
	m.Confirmed, m.Observed, m.RecordSeconds, m.SearchSeconds, m.HatchSeconds = 0, 0, 0, 0, 0
	for _, r := range shards {
		m.Confirmed += r.Confirmed
		m.Observed += r.Observed
		m.RecordSeconds += r.RecordSeconds
		m.SearchSeconds += r.SearchSeconds
		m.HatchSeconds += r.HatchSeconds
		m.Anomalies = append(m.Anomalies, r.Anomalies...)
		m.Splits = append(m.Splits, r.Splits...)
	}
	sort.SliceStable(m.Anomalies, func(i, j int) bool { return m.Anomalies[i].Index < m.Anomalies[j].Index })
	sort.SliceStable(m.Splits, func(i, j int) bool { return m.Splits[i].Split < m.Splits[j].Split })
	return m, nil
}

// DeadlockResult is racekit fuzz -deadlocks's -json output.
type DeadlockResult struct {
	Shard  string          `json:"shard,omitempty"` // "K/N" for a shard's
	Cycles []DeadlockCycle `json:"cycles"`
	// Explored is what the exploration under random delays made happen
	// (ExploreBlocking), each package's its shard's.
	Explored []ExploredBlocking `json:"explored,omitempty"`
}

// AtomicityResult is racekit fuzz -atomicity's -json output.
type AtomicityResult struct {
	Shard  string           `json:"shard,omitempty"` // "K/N" for a shard's
	Splits []AtomicitySplit `json:"splits"`
}

// MergeDeadlocks joins the shards of a racekit fuzz -deadlocks campaign:
// each cycle is its shard's alone, so the whole is every shard's cycles,
// in cycle order.
func MergeDeadlocks(shards []DeadlockResult) (DeadlockResult, error) {
	names := make([]string, len(shards))
	var m DeadlockResult
	for i, r := range shards {
		names[i] = r.Shard
		m.Cycles = append(m.Cycles, r.Cycles...)
		m.Explored = append(m.Explored, r.Explored...)
	}
	if err := checkShards(names); err != nil {
		return DeadlockResult{}, err
	}
	sort.SliceStable(m.Explored, func(i, j int) bool { return m.Explored[i].Package < m.Explored[j].Package })
	sort.SliceStable(m.Cycles, func(i, j int) bool {
		a, b := m.Cycles[i], m.Cycles[j]
		return a.Package < b.Package || a.Package == b.Package && a.Cycle < b.Cycle
	})
	return m, nil
}

// MergeAtomicity joins the shards of a racekit fuzz -atomicity campaign,
// the regions in split order.
func MergeAtomicity(shards []AtomicityResult) (AtomicityResult, error) {
	names := make([]string, len(shards))
	var m AtomicityResult
	for i, r := range shards {
		names[i] = r.Shard
		m.Splits = append(m.Splits, r.Splits...)
	}
	if err := checkShards(names); err != nil {
		return AtomicityResult{}, err
	}
	sort.SliceStable(m.Splits, func(i, j int) bool {
		a, b := m.Splits[i], m.Splits[j]
		return a.Package < b.Package || a.Package == b.Package && a.Split < b.Split
	})
	return m, nil
}
