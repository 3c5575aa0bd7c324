package sample

import "math"

// DefaultBurst is the burst length of LiteRace's bursty samplers: "when
// they decide to sample a function, they do so for ten consecutive
// executions of that function" (§5.2).
const DefaultBurst = 10

// A Schedule says which calls of one code region (a function, for one
// goroutine or for all of them) are sampled, as a sequence of runs of
// consecutive calls:
//
//	Skip unsampled calls, a burst of Burst sampled calls, Gaps[0] unsampled,
//	a burst, Gaps[1] unsampled, a burst, ... (the last gap repeats)
//
// This is LiteRace's pair of per-region counters (§4.1): the frequency
// counter is the index of the current run, the sampling counter the calls
// left in it. A region starts with a burst ("the sampler always runs the
// instrumented copy of a code region the first time it is executed", §3.4)
// unless Skip says otherwise (UCP), and each gap is set from the sampling
// rate in force after the burst before it, so the rate of the k-th period
// (burst k and the gap after it) is Burst/(Burst+Gaps[k]).
type Schedule struct {
	// Skip is the number of calls not sampled before the first burst.
	Skip uint32
	// Burst is the number of consecutive calls sampled per burst; 0 means
	// the first burst never ends.
	Burst uint32
	// Gaps[k] is the number of calls not sampled after burst k; the last
	// one repeats, and no gaps means every call after Skip is sampled.
	Gaps []uint32
}

// Bursty returns the schedule of a bursty sampler whose sampling rate
// after its k-th burst is rates[k] (the last rate repeating): each burst of
// burst calls is followed by the gap that makes the period's rate exact,
// round(burst/rate) − burst unsampled calls. A rate of 1 or more gives no
// gap; a rate at or below 0 is treated as the smallest rate that fits a
// 32-bit gap.
func Bursty(burst uint32, rates ...float64) Schedule {
	s := Schedule{Burst: burst, Gaps: make([]uint32, len(rates))}
	for i, r := range rates {
		period := math.Round(float64(burst) / r)
		if r <= 0 || period > math.MaxUint32 {
			period = math.MaxUint32
		}
		if period < float64(burst) {
			period = float64(burst)
		}
		s.Gaps[i] = uint32(period) - burst
	}
	return s
}

// Rate returns the long-run sampling rate of the schedule: the rate of its
// last, repeating period.
func (s *Schedule) Rate() float64 {
	if s.Burst == 0 || len(s.Gaps) == 0 {
		return 1
	}
	g := s.Gaps[len(s.Gaps)-1]
	return float64(s.Burst) / (float64(s.Burst) + float64(g))
}

// Counter is the sampling state of one code region under a Schedule: the
// run it is in and the calls left in that run. The zero Counter is a region
// never called. It is 8 bytes, so the runtime can keep one per (goroutine,
// function) in a slice indexed by function.
type Counter struct {
	// run numbers the current run: 0 before the first call, 1 the initial
	// skip, 2k+2 burst k, 2k+3 the gap after burst k.
	run uint32
	// left is the number of calls left in the current run.
	left uint32
}

// Next is the dispatch check (§4.1, Figure 3): it counts one call of the
// region and reports whether that call is sampled.
func (c *Counter) Next(s *Schedule) bool {
	for c.left == 0 {
		if c.run >= 2 && c.run%2 == 0 && s.Burst == 0 {
			return true // a burst that never ends
		}
		c.run = s.nextRun(c.run)
		c.left = s.runLen(c.run)
	}
	c.left--
	return c.run >= 2 && c.run%2 == 0
}

// Quick is Next for a call that stays in the current run, small enough
// for the compiler to inline into rt's dispatch check: when calls are left
// in the run (ok), it counts one and returns Next's decision; otherwise it
// changes nothing, and the caller calls Next.
func (c *Counter) Quick() (sampled, ok bool) {
	if c.left == 0 {
		return false, false
	}
	c.left--
	return c.run >= 2 && c.run%2 == 0, true
}

// QuickSkip is Quick for a call that stays in a run of unsampled calls:
// then it counts it and reports true (Next's decision is false); otherwise
// it changes nothing.
func (c *Counter) QuickSkip() bool {
	if c.left == 0 || c.run >= 2 && c.run%2 == 0 {
		return false
	}
	c.left--
	return true
}

// Take counts one call, as Next does, and reports with its decision how
// many calls after it the same run still holds: those calls have the same
// decision, and the Counter now stands at the end of the run, so a caller
// that counts them itself (rt's loop regions, one decrement per iteration)
// calls Take again after them and gets exactly Next's decisions. A burst
// that never ends holds math.MaxUint32 more calls, and again after them.
func (c *Counter) Take(s *Schedule) (sampled bool, more uint32) {
	sampled = c.Next(s)
	if sampled && s.Burst == 0 {
		return true, math.MaxUint32
	}
	more, c.left = c.left, 0
	return sampled, more
}

// Sampling reports whether the region's last call was sampled (false before
// its first call).
func (c *Counter) Sampling() bool { return c.run >= 2 && c.run%2 == 0 }

// nextRun is the run after run r. Once the last gap is reached, the runs
// cycle between the last burst and the last gap, so run numbers stay small.
func (s *Schedule) nextRun(r uint32) uint32 {
	if r >= 3 && r%2 == 1 && (r-3)/2+1 >= uint32(len(s.Gaps)) {
		return r - 1 // after the last gap, the burst before it again
	}
	return r + 1
}

// runLen is the number of calls in run r.
func (s *Schedule) runLen(r uint32) uint32 {
	switch {
	case r == 1:
		return s.Skip
	case r%2 == 0:
		if s.Burst == 0 {
			return math.MaxUint32
		}
		return s.Burst
	}
	k := (r - 3) / 2
	if len(s.Gaps) == 0 {
		return 0
	}
	if k >= uint32(len(s.Gaps)) {
		k = uint32(len(s.Gaps)) - 1
	}
	return s.Gaps[k]
}
