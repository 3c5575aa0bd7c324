package finding

import "github.com/racekit/racekit/trace"

// Witness is the evidence for one predicted race: a reordered prefix of the
// trace after which the two accesses run back to back. A controlled
// scheduler follows it by running, first, the trace's first ObservedPrefix
// events in their observed order (the part before the analysis window,
// which the reordering keeps), then Steps in order; the last two steps are
// the racing accesses. It encodes as JSON.
type Witness struct {
	Detector string `json:"detector"` // "mcm" or "rdit": the model it is a reordering in
	Addr     uint64 `json:"addr"`     // the racing address
	// ObservedPrefix is how many events, from the start of the trace, run
	// as observed before Steps.
	ObservedPrefix int    `json:"observed_prefix"`
	Steps          []Step `json:"steps"`
}

// Step is one event of a schedule: goroutine G runs its Index-th event
// (counting from 0 over the goroutine's own events in the whole trace),
// which is an Op at Site. Seq is the event's Seq in the trace, for people.
// (detect/predict makes them and checks them: predict.CheckWitness.)
type Step struct {
	G     trace.GID    `json:"g"`
	Index int          `json:"index"`
	Op    string       `json:"op"`
	Site  trace.SiteID `json:"site"`
	Seq   uint64       `json:"seq"`
}
