package rt

import (
	"math"
	"os"

	"github.com/racekit/racekit/filter/sample"
)

// Loop regions: LiteRace samples at the granularity of functions (§3.3),
// and its §7 names the cost: "computationally intensive scientific
// applications ... often have loops with high trip count", so a function
// called once with a long loop is logged in full, since the first call of
// every region is sampled. The paper proposes "sampling at a loop-level
// granularity ... to adaptively reduce the sampling rate of the loop within
// a single function execution". With RACEKIT_SAMPLE_LOOPS=1 rt does that:
// the instrumenter gives each loop whose body makes a recorded access a
// Loop, made before the loop from the enclosing decision (LoopOf), and at
// the top of each iteration the body shadows the access hooks' flag with
// the Loop's decision (Iter). Each iteration is a call of the loop's region
// under the sampler's Schedule, counted per execution of the loop (a fresh
// Loop each time the loop statement starts), so the first iterations are
// sampled as a function's first calls are, then the rate backs off. A loop
// region only narrows: in an unsampled invocation (or iteration of an
// enclosing loop) its iterations are unsampled, and functions called from
// the body make their own decisions. The loop's post statement is the
// enclosing region's; a condition that makes an access hook is checked at
// the top of each iteration instead (instrument.forStmt), so it is the
// iteration's. Synchronization is recorded as ever, so sampling loops,
// like sampling functions, invents no race.
//
// The instrumenter gives a loop body that records nothing but accesses two
// copies, as LiteRace gives a function two (instrument.loopBody): an
// iteration whose decision is false runs the body as written, without a
// hook, and the decision is false in every iteration of an unsampled
// invocation, with loop regions or not, and when nothing is traced.
//
// Not with the per-call samplers (rnd10, rnd25), which draw per call and
// are not about cold regions: their loops take the enclosing decision.
// Without a sampler a Loop passes the enclosing decision on at the cost of
// a decrement per iteration; with nothing traced it sends every iteration
// to the copy as written, where there is one.

var (
	loopsEnv = os.Getenv("RACEKIT_SAMPLE_LOOPS") == "1"
	// loopsOn is loopsEnv with a sampler that is not per call
	// (setSampler).
	loopsOn bool
)

// Loop is the sampling state of one execution of a loop statement.
type Loop struct {
	left uint32 // iterations left in the current run
	cur  bool   // whether the current run's iterations are sampled
	on   bool   // loop sampling: runs come from c
	c    sample.Counter
}

// LoopOf returns the state of a loop about to start, in a region whose
// decision is rec.
func LoopOf(rec bool) Loop {
	switch {
	case ctl:
		// Each access is a scheduling point (sched.go): no copy without
		// hooks. An access of an unsampled frame still asks its frame's
		// bit (sampleSkip), so true records no more than rec.
		return Loop{left: math.MaxUint32, cur: true}
	case !on:
		// Nothing is traced (on is set before the program's code runs):
		// the body's copy without hooks.
		return Loop{left: math.MaxUint32}
	case loopsOn && rec:
		return Loop{on: true} // the first Iter takes the first run
	}
	return Loop{left: math.MaxUint32, cur: rec}
}

// Iter is called at the top of each iteration; it returns whether the
// iteration's accesses are recorded.
func (l *Loop) Iter() bool {
	if l.left > 0 {
		l.left--
		return l.cur
	}
	return l.next()
}

// next starts the next run of iterations.
//
//go:noinline
func (l *Loop) next() bool {
	if !l.on {
		l.left = math.MaxUint32 // after 2^32 iterations of a passed-on decision
		return l.cur
	}
	l.cur, l.left = l.c.Take(&samplePol.Schedule)
	return l.cur
}
