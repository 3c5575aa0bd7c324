package sample

import "github.com/racekit/racekit/trace"

// Rand is the random source of the random samplers (Rnd10, Rnd25): one
// SplitMix64 stream per goroutine, seeded by the sampler's seed and the
// goroutine's ID. Each goroutine's decisions thus depend only on the seed,
// its ID and its own sequence of calls, never on how goroutines interleave:
// the same seed gives the same decisions offline and, for the same
// per-goroutine call sequence, at run time, without a shared lock.
type Rand struct{ s uint64 }

// NewRand returns goroutine g's stream for seed.
func NewRand(seed int64, g trace.GID) Rand {
	return Rand{s: mix64(uint64(seed)) ^ mix64(uint64(g)+0x5851f42d4c957f2d)}
}

// Uint64 returns the next 64 random bits (SplitMix64, Steele et al.,
// OOPSLA'14).
func (r *Rand) Uint64() uint64 {
	r.s += 0x9e3779b97f4a7c15
	return mix64(r.s)
}

// Below reports whether the next draw falls below threshold t out of
// 2^53: true with probability t/2^53 (see Threshold).
func (r *Rand) Below(t uint64) bool { return r.Uint64()>>11 < t }

// Threshold converts a probability into the threshold Below takes.
func Threshold(p float64) uint64 {
	switch {
	case p <= 0:
		return 0
	case p >= 1:
		return 1 << 53
	}
	return uint64(p * (1 << 53))
}

func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
