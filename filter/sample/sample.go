// Package sample implements the seven samplers of LiteRace (Marino,
// Musuvathi and Narayanasamy, PLDI'09, Table 3), and one adaptation of
// racekit's own (gs-ad, below): filters that keep every
// synchronization event but only some memory accesses, chosen a function
// invocation at a time, so that a happens-before detector run on what they
// keep reports a subset of the races of the full trace and never a false
// one (§3.2: "we have to log all the synchronization events in order to
// avoid reporting false data races").
//
// The unit of sampling is one invocation of one function by one goroutine
// (§3.3): at function entry a dispatch check decides whether this
// invocation runs the "instrumented copy", which logs its memory accesses,
// or the uninstrumented one, which logs only synchronization. The accesses
// an invocation makes in its own body (not in its callees, which have their
// own checks) are kept exactly when it is sampled.
//
// The samplers, by the names New takes (Policies lists them with their
// parameters):
//
//	tl-ad  thread-local adaptive: per (goroutine, function), bursts of 10
//	       calls at rates 100%, 10%, 1%, then 0.1% (LiteRace's own)
//	tl-fx  thread-local fixed: per (goroutine, function), bursty at 5%
//	g-ad   global adaptive: per function over all goroutines, bursty at
//	       100%, 50%, 25%, ... down to 0.1%
//	g-fx   global fixed: per function, bursty at 10%
//	rnd10  each call sampled independently with probability 10%
//	rnd25  each call sampled independently with probability 25%
//	ucp    un-cold region: per (goroutine, function) the first 10 calls are
//	       not sampled, every later call is
//
// and two adaptations of racekit's to Go, which are not in the paper:
//
//	gs-ad  goroutine-site adaptive: TL-Ad's schedule (bursts of 10 at 100%,
//	       10%, 1%, then 0.1%) per (goroutine creation site, function)
//	tp-ad  thread-pool adaptive: TL-Ad's schedule per (slot, function),
//	       where a goroutine holds a slot of its go statement's pool while
//	       it lives (below)
//
// GS-Ad exists because Go programs start many short-lived goroutines
// (workers, one per item, handlers), and a thread-local sampler starts
// every new goroutine cold, at 100%, so its back-off never pays: the 50th
// worker started by the same go statement runs the same code as the 49
// before it, but TL-Ad logs its first ten calls of every function again.
// GS-Ad keeps the cold-region idea with a coarser notion of "thread": the
// goroutines started by one go statement (the site of their Fork event)
// share one counter per function, so a function is cold for a creation
// site until that site's goroutines together have called it enough; a
// function hot in the workers of one go statement is still cold for the
// goroutines of another (G-Ad's failure mode, §3.4, is kept away at the
// granularity of go statements).
//
// Goroutines born in untraced code (the main goroutine, test functions,
// net/http's connection goroutines) have no Fork event and no go statement
// racekit can see: GS-Ad keeps their counters per goroutine, as TL-Ad
// does. They are few (one per test, one per connection), so their cold
// starts cost little, and the alternatives lose races: keying them by the
// first function they enter (all connections of one handler share) or
// putting them all under one key (a helper made hot by TestA is hot for
// TestB, G-Ad's failure) each detected 5-6 points fewer of the subjects'
// races, for under 1 point less logged (bench/results/sample). Unlike
// TL-Ad's, GS-Ad's decisions depend on how the goroutines of one go
// statement interleave their calls, as G-Ad's do.
//
// TP-Ad reads "thread" as LiteRace's servers had them: a pool thread runs
// one task after another, and its counters carry over from task to task.
// In Go a task is a goroutine, so TP-Ad gives each go statement a pool of
// slots (counters): a goroutine takes a free slot, the one freed last, at
// its first check and frees it when it ends. Goroutines alive at once
// never share a slot, so two workers running together both start cold, as
// TL-Ad's threads do, and a worker started after another ended runs on its
// counters, hot. Goroutines born in untraced code share one pool, and hold
// a slot for each call from untraced code (a test function called by the
// testing framework, a handler called by net/http's connection goroutine):
// the next test, or the next request, runs on a slot the previous one
// heated. So a function hot in the 49 workers that ran before is still hot
// for the 50th, unless the 50th runs beside one of them: the cold-region
// idea for the goroutine that runs concurrently with others, which is where
// races are. For a program whose goroutines live long (a worker pool, a
// server's connections), TP-Ad is TL-Ad: each goroutine holds its slot all
// its life. Where it differs is where Go programs differ from the paper's:
// goroutines started per item and test suites run many times (go test
// -count=N), where TL-Ad starts every goroutine cold and cannot log less
// than the first ten calls of each function of each (bench/results/sample).
//
// The package has three layers, so that the runtime can sample while
// recording with the same decisions as the offline filter:
//
//   - Schedule and Counter: the bursty back-off of one code region (§4.1's
//     frequency and sampling counters), 8 bytes of state per region;
//   - Dispatcher: the dispatch check of a whole program, Enter(g, fn),
//     holding the counters per goroutine, per function, per creation site
//     or per slot, and the random streams per goroutine (Rand);
//   - Filter: a filter.Filter over a recorded trace, which replays the
//     dispatch check at each FuncEnter, keeps each goroutine's stack of
//     sampled and unsampled frames, and keeps an access exactly when its
//     innermost frame is sampled. Every event that is not a read or a
//     write (synchronization, goroutine life, FuncEnter/FuncExit, regions,
//     BarrierPairs) is kept.
//
// Accesses outside every traced function frame of their goroutine (the
// body of a goroutine whose function was not instrumented, package
// initialization, accesses before the first FuncEnter) belong, by the same
// rule, to the one invocation of the goroutine's start routine: in LiteRace
// every code region, a thread's start function included, is reached
// through a dispatch check, so the filter checks the pseudo-function
// RootFunc once per goroutine, at the goroutine's first such access, and
// keeps or drops all its root accesses with that decision.
//
// # A sampled run beside the offline filter
//
// Three functions state what a sampled recording (package rt) does beyond
// the dispatch check, so that a sampled run can be compared with Filter's
// output of a full run:
//
//   - Edges: the synchronization events, over a slice of events, that add
//     no happens-before edge; a sampled run applies the same rule to every
//     sync object as it records. edges.go also holds the names the
//     runtime's global objects (I/O, timers, contexts) have in a trace.
//   - Shown: the frames and edges a sampled run records (an unsampled frame
//     only when an event other than a Frameless one is recorded inside it).
//   - Epochs: a trace up to what dedup may vary, to compare a sampled run
//     recorded with dedup on with a full one recorded with it off.
package sample

import (
	"fmt"
	"math"

	"github.com/racekit/racekit/filter"
)

// Scope is where a sampler keeps its counters.
type Scope uint8

const (
	// PerGoroutine samplers ("thread-local", §3.4) keep one Counter per
	// (goroutine, function): a function hot in one goroutine is still
	// cold in a goroutine that runs it for the first time.
	PerGoroutine Scope = iota
	// Global samplers keep one Counter per function, counting calls by
	// every goroutine (SWAT's adaptive profiler, §5.2).
	Global
	// PerCall samplers are not bursty: each call is sampled independently
	// with probability Policy.Prob.
	PerCall
	// PerSite samplers (racekit's, not the paper's) keep one Counter per
	// (goroutine creation site, function): the goroutines started by one
	// go statement share their counters; a goroutine born in untraced code
	// has its own, as PerGoroutine (see the package comment).
	PerSite
	// PerSlot samplers (racekit's) keep one Counter per (slot, function):
	// each go statement has a pool of slots, and so do the goroutines born
	// in untraced code. A goroutine takes a free slot when it starts (a
	// root: when untraced code calls into traced code) and frees it when it
	// ends (a root: when the call returns), so goroutines that run at once
	// have counters of their own, as threads do, and a goroutine started
	// after another ended runs on its counters, as a pool thread runs its
	// next task.
	PerSlot
)

// String names the scope.
func (s Scope) String() string {
	switch s {
	case PerGoroutine:
		return "per-goroutine"
	case Global:
		return "global"
	case PerCall:
		return "per-call"
	case PerSite:
		return "per-site"
	case PerSlot:
		return "per-slot"
	}
	return fmt.Sprintf("scope(%d)", uint8(s))
}

// Policy is one sampler of Table 3: where its state lives and which calls
// it samples.
type Policy struct {
	Name        string // as New takes it: "tl-ad"
	Short       string // the paper's short name: "TL-Ad"
	Description string // Table 3's description
	Scope       Scope
	// Schedule is the back-off of each region (PerGoroutine, Global,
	// PerSite).
	Schedule Schedule
	// Prob is the probability that a call is sampled (PerCall).
	Prob float64
}

// Nominal returns the policy's long-run sampling rate of a hot function:
// what a region converges to after its back-off.
func (p *Policy) Nominal() float64 {
	if p.Scope == PerCall {
		return p.Prob
	}
	return p.Schedule.Rate()
}

// RootFunc is the function ID under which the filter dispatches the
// accesses of a goroutine made outside every traced function frame: its
// start routine (see the package comment). Real function IDs are site IDs,
// far below it.
const RootFunc = math.MaxUint64

// gAdRates is G-Ad's back-off after each burst: 50%, 25%, ... halving down
// to the 0.1% floor (Table 3: "100%, 50%, 25%, ..., 0.1%"; the first burst
// is the 100%).
func gAdRates() []float64 {
	var rs []float64
	for r := 0.5; ; r /= 2 {
		if r <= 0.001 {
			return append(rs, 0.001)
		}
		rs = append(rs, r)
	}
}

// policies is Table 3, in its order, then racekit's own samplers.
var policies = []Policy{
	{Name: "tl-ad", Short: "TL-Ad", Description: "Adaptive back-off per function / per thread (100%,10%,1%,0.1%); bursty",
		Scope: PerGoroutine, Schedule: Bursty(DefaultBurst, 0.10, 0.01, 0.001)},
	{Name: "tl-fx", Short: "TL-Fx", Description: "Fixed 5% per function / per thread; bursty",
		Scope: PerGoroutine, Schedule: Bursty(DefaultBurst, 0.05)},
	{Name: "g-ad", Short: "G-Ad", Description: "Adaptive back-off per function globally (100%, 50%, 25%, ..., 0.1%); bursty",
		Scope: Global, Schedule: Bursty(DefaultBurst, gAdRates()...)},
	{Name: "g-fx", Short: "G-Fx", Description: "Fixed 10% per function globally; bursty",
		Scope: Global, Schedule: Bursty(DefaultBurst, 0.10)},
	{Name: "rnd10", Short: "Rnd10", Description: "Random 10% of dynamic calls chosen for sampling",
		Scope: PerCall, Prob: 0.10},
	{Name: "rnd25", Short: "Rnd25", Description: "Random 25% of dynamic calls chosen for sampling",
		Scope: PerCall, Prob: 0.25},
	{Name: "ucp", Short: "UCP", Description: "First 10 calls per function / per thread are NOT sampled, all remaining calls are sampled",
		Scope: PerGoroutine, Schedule: Schedule{Skip: 10, Burst: 0}},
	// Not in Table 3: racekit's adaptations of TL-Ad to Go (see the package
	// comment).
	{Name: "gs-ad", Short: "GS-Ad", Description: "racekit's adaptation, not the paper's: TL-Ad's back-off (100%,10%,1%,0.1%) per function / per goroutine creation site (go statement; goroutines born in untraced code per goroutine); bursty",
		Scope: PerSite, Schedule: Bursty(DefaultBurst, 0.10, 0.01, 0.001)},
	{Name: "tp-ad", Short: "TP-Ad", Description: "racekit's adaptation, not the paper's: TL-Ad's back-off (100%,10%,1%,0.1%) per function / per slot of a goroutine pool (a goroutine takes a free slot of its go statement's pool; roots, per call from untraced code); bursty",
		Scope: PerSlot, Schedule: Bursty(DefaultBurst, 0.10, 0.01, 0.001)},
}

// Names returns the samplers' names in Table 3's order, then gs-ad and
// tp-ad.
func Names() []string {
	ns := make([]string, len(policies))
	for i := range policies {
		ns[i] = policies[i].Name
	}
	return ns
}

// Policies returns the samplers of Table 3, in its order, then gs-ad and
// tp-ad (copies: changing them changes nothing here).
func Policies() []Policy {
	ps := make([]Policy, len(policies))
	for i, p := range policies {
		p.Schedule.Gaps = append([]uint32(nil), p.Schedule.Gaps...)
		ps[i] = p
	}
	return ps
}

// Lookup returns the sampler named name.
func Lookup(name string) (Policy, error) {
	for _, p := range Policies() {
		if p.Name == name {
			return p, nil
		}
	}
	return Policy{}, fmt.Errorf("unknown sampler %q (want one of %v)", name, Names())
}

// New returns the sampler named name (one of Names) as a filter over a
// recorded trace; seed drives the random samplers (same seed, same
// decisions) and is ignored by the others. Its dynamic type is *Filter.
func New(name string, seed int64) (filter.Filter, error) {
	f, err := NewFilter(name, seed)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// NewFilter is New returning the concrete *Filter, whose Stats give the
// effective sampling rate.
func NewFilter(name string, seed int64) (*Filter, error) {
	p, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	return NewPolicyFilter(p, seed), nil
}
