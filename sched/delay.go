package sched

// DelayFuzzer is a random scheduler that also delays goroutines, for
// blocking bugs that no lock-order cycle names: a WaitGroup.Wait before
// the channel its workers send on is drained, a Signal that comes between
// a waiter's test and its Cond.Wait. Such a bug needs one goroutine to
// stall at one point while others run, for as long as another's sleep: a
// loaded machine does that, a quiet one rarely, and the random scheduler
// (whose virtual clock moves a microsecond per step) never before the
// sleep is over.
//
// So, as in delay-bounded scheduling (Emmi, Qadeer, Rakamarić, POPL'11)
// and PCT's priority changes (Burckhardt et al., ASPLOS'10), a few points
// of a run are delay points: a goroutine reaching one is held back while
// any other goroutine can proceed, and while only held ones could, the
// caller lets virtual time pass (Postponer, Pauser), so that a goroutine
// asleep on a timer wakes and runs before the held one goes on. When no
// timer is pending either, a held goroutine is released at random, as
// RaceFuzzer's line 26; one held for more than MaxWait decisions is
// released (livelock). Every schedule it makes is one the program can
// take for real (any goroutine may stall for any time), so a run that
// deadlocks shows a real deadlock.
//
// Whether a point is a delay point depends only on the seed, the
// goroutine and the point's index (one in Every, Every chosen by the
// seed among 2, 4, 8 and 16, so that runs differ in how often they
// delay): WouldPause gives rt the same answer Next acts on, and a seed
// replays its run.
type DelayFuzzer struct {
	holdBack
	key   uint64
	every uint64
	// passed is, per goroutine, the point it was last released at: it
	// goes on from there.
	passed map[string]int
}

// NewDelayFuzzer returns the DelayFuzzer strategy seeded with seed.
func NewDelayFuzzer(seed uint64) *DelayFuzzer {
	s := &DelayFuzzer{holdBack: newHoldBack(seed), key: seed, passed: map[string]int{}}
	s.every = 2 << s.r.IntN(4)
	return s
}

// Every is how many points of a goroutine there are per delay point.
func (s *DelayFuzzer) Every() int { return int(s.every) }

// delayable reports whether a goroutine may be held back at a point of
// kind k: an operation of the program, not a goroutine's beginning or end
// (a test function's departure: holding it holds back the testing
// framework) or a timer's firing.
func delayable(k Kind) bool {
	switch k {
	case KindBegin, KindEnd, KindTimer, KindResume:
		return false
	}
	return true
}

// delays reports whether p is a delay point of this run.
func (s *DelayFuzzer) delays(p Point) bool {
	if !p.Enabled || !delayable(p.Kind) {
		return false
	}
	if n, ok := s.passed[p.G]; ok && n == p.N {
		return false
	}
	return pointHash(s.key, p.G, p.N)%s.every == 0
}

// pointHash mixes a seed, a goroutine's stable name and a point index
// into a number that is the same on every platform and in every run.
func pointHash(seed uint64, g string, n int) uint64 {
	f := uint64(0xcbf29ce484222325) // FNV-1a of the name
	for i := 0; i < len(g); i++ {
		f = (f ^ uint64(g[i])) * 0x100000001b3
	}
	return mix64(mix64(mix64(seed)^f) ^ uint64(n))
}

// mix64 is splitmix64's finalizer: every bit of x moves every bit of the
// result.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// WouldPause implements Pauser.
func (s *DelayFuzzer) WouldPause(p Point) bool { return s.delays(p) }

// Next implements Strategy. A held goroutine that can no longer proceed
// is blocked or gone.
func (s *DelayFuzzer) Next(w []Point) int {
	return s.chose(w, s.next(w, func(p Point) bool { return p.Enabled }, "delayed", func(p Point) (string, bool) {
		if !s.delays(p) {
			return "", false
		}
		return p.String() + " delayed", true
	}))
}

// chose notes the point the goroutine w[i] goes on from, and returns i.
func (s *DelayFuzzer) chose(w []Point, i int) int {
	if i < len(w) {
		s.passed[w[i].G] = w[i].N
	}
	return i
}
