package confirm

import (
	"os"
	"time"

	"github.com/racekit/racekit/detect/anomaly"
)

// HatchOptions are a campaign of racekit hatch on one package (the
// campaign's first target): PECAN's anomalies, or RDIT's and the maximal
// causal model's predicted races, each run along the clip of the recorded
// run that predicted it.
type HatchOptions struct {
	Campaign
	From       string             // pecan, rdit or mcm
	Patterns   []*anomaly.Pattern // From pecan: the patterns searched
	Anomaly    anomaly.Options
	Recordings []RecordSpec // one per recording (RecordSpecs)
	Control    string       // auto, anomaly or clip: the accesses under control in a run
	Dedup      bool         // record with rt's dedup, as racekit test does
	Keep       string       // if set, the runs' clips, schedules and traces go here
	AtomFuzz   bool         // also run AtomFuzzer on the recordings' split regions
	MaxSplits  int          // AtomFuzzer's regions at most
	Verbose    bool         // each recording's counts on stderr
	Warn       func(msg string)
}

// hatcher is one campaign of Hatch: what its steps found so far, which
// each step passes on to the next.
type hatcher struct {
	*HatchOptions
	t        *Target
	outDir   string // where the runs' files go: Keep, or Tmp
	res      HatchResult
	groups   []*hatchGroup          // the distinct predictions, in order of first prediction
	byKey    map[string]*hatchGroup // groups by hatchCand.key
	observed []map[string]bool      // per recording, the races its run had (observedRaces)
	shown    []*hatchCand           // per group, the alternative its verdict and page come from
}

// Hatch records the package's tests (o.Recordings), predicts on each
// recording (o.From), runs each distinct prediction o.Runs times along
// the clip of a recording that predicted it (the next recording's when
// one does not confirm it) and gives each its verdict: confirmed,
// observed or pruned. With o.AtomFuzz, AtomFuzzer runs on the split
// regions as well. It returns the result and, with From pecan, the
// anomalies shown, their verdicts as evidence (for the clip pages).
func Hatch(o *HatchOptions) (HatchResult, []anomaly.Anomaly, error) {
	h := &hatcher{HatchOptions: o, t: o.Targets[0], outDir: o.Tmp, byKey: map[string]*hatchGroup{}}
	if o.Keep != "" {
		if err := os.MkdirAll(o.Keep, 0o777); err != nil {
			return HatchResult{}, nil, err
		}
		h.outDir = o.Keep
	}
	h.res = HatchResult{Package: h.t.Pkg, From: o.From, Shard: o.Shard.String()}
	if err := h.record(); err != nil {
		return HatchResult{}, nil, err
	}
	// A shard hatches its share of the distinct predictions (Predicted
	// stays the campaign's count).
	h.groups = inShard(o.Shard, h.groups, func(g *hatchGroup) string { return shardKey(h.t.Pkg, g.alts[0].key()) })
	start := time.Now()
	if err := h.hatchClips(); err != nil {
		return HatchResult{}, nil, err
	}
	if o.AtomFuzz {
		if err := h.fuzzSplits(); err != nil {
			return HatchResult{}, nil, err
		}
	}
	h.res.HatchSeconds = time.Since(start).Seconds()
	h.classify()
	return h.res, h.shownAnomalies(), nil
}
