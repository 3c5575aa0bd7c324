package confirm

import (
	"strings"

	"github.com/racekit/racekit/detect/anomaly"
	"github.com/racekit/racekit/sched"
)

// hatchEvent is one event of an anomaly, located in the recorded trace.
type hatchEvent struct {
	G    string // stable name (sched.Names)
	Ev   int    // position among G's events (sched.Positions)
	Kind sched.Kind
	Site string // file:line
	Obj  uint64 // address in the recorded run
}

// hatchCand is one prediction to hatch.
type hatchCand struct {
	Kind        string
	Pattern     string
	Sites       []string
	Vars        []string
	consecutive bool
	events      []hatchEvent
	steps       []sched.ClipStep
	anomaly     *anomaly.Anomaly // -from=pecan
	// extra are more statements under test than the anomaly's own; wide
	// is the same clip with every access it lists under control (a full
	// clip's access sites in extra), nil when there is none.
	extra []string
	wide  *hatchCand
	// recording is the index of the recording it was predicted on.
	recording int
	// virtual: that recording ran on the random scheduler's virtual clock,
	// so the clip runs on it too (RACEKIT_SCHED_TIME=virtual): an expiry
	// checked against time.Now, a timeout, a sleep's end then come at the
	// same places in the clip as in the recording, not when the serialized
	// run's real clock says.
	virtual bool
}

// key identifies a prediction across recordings: PECAN reports one
// anomaly per distinct combination of pattern and source lines.
func (cd *hatchCand) key() string {
	return cd.Kind + " " + cd.Pattern + " " + strings.Join(cd.Sites, " ")
}

// hatchGroup is one distinct prediction and its clips, one per recording
// that made it, in recording order; runs holds the runs along each clip
// hatched so far.
type hatchGroup struct {
	index int // its number among the distinct predictions, from 1
	alts  []*hatchCand
	runs  [][]HatchRun
}

// confirmed reports whether a run along one of g's clips confirmed it.
func (g *hatchGroup) confirmed() bool {
	for _, rs := range g.runs {
		for _, r := range rs {
			if r.Confirmed {
				return true
			}
		}
	}
	return false
}

// HatchRun is one controlled run along a clip.
type HatchRun struct {
	Seed      uint64  `json:"seed"`
	Confirmed bool    `json:"confirmed"`
	Reason    string  `json:"reason,omitempty"` // why it was not confirmed
	Outcome   string  `json:"outcome"`          // none, panic, test failure, deadlock, timeout, stopped (at a departure), exit N
	Detail    string  `json:"detail,omitempty"`
	Steps     int     `json:"steps"`
	Seconds   float64 `json:"seconds"`
	// Control is "clip" for a run with every access of the clip under
	// control (-control), "" for the anomaly's accesses only.
	Control string `json:"control,omitempty"`
	// Recording is the recording (1, 2, ...) whose clip the run followed,
	// with -recordings above 1.
	Recording int `json:"recording,omitempty"`
}

// HatchAnomaly is the result for one prediction.
type HatchAnomaly struct {
	// Index is its number among the distinct predictions, from 1: the
	// unsharded campaign's order (MergeHatch).
	Index   int        `json:"index"`
	Kind    string     `json:"kind"`
	Pattern string     `json:"pattern"`
	Sites   []string   `json:"sites"`
	Vars    []string   `json:"vars,omitempty"`
	Verdict string     `json:"verdict"` // confirmed, observed (a race of the recorded run; see observedRaces) or pruned
	Runs    []HatchRun `json:"runs"`
}

// HatchRecording is one recorded run (-recordings): its trace and the
// predictions made on it, of which New were not made on an earlier one.
type HatchRecording struct {
	Trace string `json:"trace"`
	// Seed is the controlled random scheduler's seed, 0 for Go's scheduler;
	// Preempt its RACEKIT_SCHED_PREEMPT.
	Seed          uint64  `json:"seed,omitempty"`
	Preempt       float64 `json:"preempt,omitempty"`
	Events        int     `json:"events"`
	RecordSeconds float64 `json:"record_seconds"`
	SearchSeconds float64 `json:"search_seconds"`
	Predicted     int     `json:"predicted"`
	New           int     `json:"new"`
}

// HatchResult is racekit hatch's -json output. With several recordings,
// Trace is the first, Events, RecordSeconds and SearchSeconds the sums,
// Goroutines and SharedVars the largest; Predicted counts distinct
// predictions (kind, pattern and sites).
type HatchResult struct {
	Package       string           `json:"package"`
	Trace         string           `json:"trace"`
	Recordings    []HatchRecording `json:"recordings"`
	From          string           `json:"from"`
	Events        int              `json:"events"`
	Goroutines    int              `json:"goroutines"`
	SharedVars    int              `json:"shared_vars"` // addresses accessed by two goroutines or more
	RecordSeconds float64          `json:"record_seconds"`
	SearchSeconds float64          `json:"search_seconds"`
	HatchSeconds  float64          `json:"hatch_seconds"`
	Predicted     int              `json:"predicted"`
	Confirmed     int              `json:"confirmed"`
	Observed      int              `json:"observed"` // races not confirmed that the recorded run had
	Anomalies     []HatchAnomaly   `json:"anomalies"`
	// Splits are the atomic regions whose critical sections on one lock
	// are split in two (-atomfuzz: AtomFuzzer), with their verdicts.
	Splits []AtomicitySplit `json:"splits,omitempty"`
	// Shard is the shard of the campaign this result is ("K/N"), "" for
	// a whole campaign (or shards merged).
	Shard string `json:"shard,omitempty"`
}

// verdictOf is a prediction's verdict: confirmed when a run along its
// clip made it happen; otherwise observed when it is a race the recorded
// run itself had (observed: observedRaces); otherwise pruned.
func verdictOf(cd *hatchCand, runs []HatchRun, observed map[string]bool) string {
	for _, r := range runs {
		if r.Confirmed {
			return "confirmed"
		}
	}
	if cd.consecutive && len(cd.events) == 2 && observed[raceKey(cd.events[0].Site, cd.events[1].Site, cd.events[0].Obj)] {
		return "observed"
	}
	return "pruned"
}
