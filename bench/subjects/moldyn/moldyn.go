// Package moldyn is a Go version of the Java Grande Forum's MolDyn
// (RaceFuzzer Table 1: 1,352 lines; PECAN Table 1; TREE Table 5.1): an
// N-body Lennard-Jones simulation of particles in a periodic cubic box,
// parallelized as in JGF. Each thread accumulates the forces of a cyclic
// share of the particle pairs into its own force array; after a barrier,
// each thread sums the force arrays for a contiguous block of particles
// and moves them; after another barrier the next step reads the new
// positions. Positions and partial forces are thus written by one thread
// and read by others with no lock in common, ordered only by the barrier:
// the false alarms a lockset detector raises by the dozen (RaceFuzzer's
// hybrid phase reported 59 potential races).
//
// The real races are benign, as in JGF (RaceFuzzer found two benign races
// earlier tools missed): the interaction counter, a statistic every thread
// increments without a lock, and the velocity scale factor, which every
// thread computes from the same reduced kinetic energy and stores into one
// shared field before using it: the stores write the same value.
package moldyn

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
)

// Config sizes a run.
type Config struct {
	Side    int // particles per box edge: Side^3 particles
	Threads int
	Steps   int // time steps
	Rescale int // rescale velocities every Rescale steps
}

// DefaultConfig is the size the test uses.
func DefaultConfig() Config { return Config{Side: 3, Threads: 2, Steps: 4, Rescale: 2} }

// Constants of the simulation (reduced units, as JGF).
const (
	density = 0.83134
	tref    = 0.722
	cutoff2 = 3.0 * 3.0
	dt      = 0.064
)

type vec struct{ x, y, z float64 }

func (a vec) add(b vec) vec       { return vec{a.x + b.x, a.y + b.y, a.z + b.z} }
func (a vec) sub(b vec) vec       { return vec{a.x - b.x, a.y - b.y, a.z - b.z} }
func (a vec) scale(s float64) vec { return vec{a.x * s, a.y * s, a.z * s} }
func (a vec) dot(b vec) float64   { return a.x*b.x + a.y*b.y + a.z*b.z }

// Particle is one molecule.
type Particle struct {
	pos, vel vec
}

// barrier is a spin barrier for n threads, the kind JGF's
// TournamentBarrier is: arrivals count on one atomic word, the last one
// raises the episode's flag, the others spin on it. Everything before wait
// in any thread happens before everything after it in every thread
// (through the atomics). Consecutive episodes use different flag words, so
// a thread that leaves late is not ordered after what an early leaver did
// next (as it would be through a shared mutex, or through racekit's
// runtime, which records an atomic word's loads as ordered with each
// other).
type barrier struct {
	n     int32
	count atomic.Int32
	flag  [3]atomic.Uint32
}

func newBarrier(n int) *barrier { return &barrier{n: int32(n)} }

// wait blocks until n threads have called it; episode is the caller's
// count of barriers passed.
func (b *barrier) wait(episode *int) {
	e := *episode
	*episode = e + 1
	f, v := &b.flag[e%3], uint32(e/3+1)
	if b.count.Add(1) == b.n {
		b.count.Store(0)
		f.Store(v)
		return
	}
	for f.Load() != v {
		runtime.Gosched()
	}
}

// MD is the shared state of one simulation.
type MD struct {
	threads int
	side    float64 // box edge length
	parts   []Particle
	force   [][]vec   // force[t][i]: thread t's contribution to particle i
	epot    []float64 // per thread
	vir     []float64 // per thread
	ekin    []float64 // per thread
	bar     *barrier

	interactions int     // statistic: incremented by every thread, unlocked
	tscale       float64 // velocity scale: stored by every thread, same value
}

// New builds a lattice of side^3 particles with deterministic velocities.
func New(cfg Config) *MD {
	n := cfg.Side * cfg.Side * cfg.Side
	md := &MD{threads: cfg.Threads, bar: newBarrier(cfg.Threads)}
	md.side = math.Cbrt(float64(n) / density)
	a := md.side / float64(cfg.Side)
	seed := uint64(12345)
	rnd := func() float64 {
		seed = seed*6364136223846793005 + 1442695040888963407
		return float64(seed>>11)/float64(1<<53) - 0.5
	}
	for i := 0; i < cfg.Side; i++ {
		for j := 0; j < cfg.Side; j++ {
			for k := 0; k < cfg.Side; k++ {
				p := Particle{pos: vec{(float64(i) + 0.5) * a, (float64(j) + 0.5) * a, (float64(k) + 0.5) * a}}
				p.vel = vec{rnd(), rnd(), rnd()}
				md.parts = append(md.parts, p)
			}
		}
	}
	// Remove the net momentum, as JGF does.
	var sum vec
	for _, p := range md.parts { // racekit:norace id=md-n-init why="New initializes before the go statements that start the threads"
		sum = sum.add(p.vel)
	}
	sum = sum.scale(1 / float64(n))
	for i := range md.parts {
		md.parts[i].vel = md.parts[i].vel.sub(sum) // racekit:norace id=md-n-init why="see above"
	}
	md.force = make([][]vec, cfg.Threads)
	for t := range md.force {
		md.force[t] = make([]vec, n)
	}
	md.epot = make([]float64, cfg.Threads)
	md.vir = make([]float64, cfg.Threads)
	md.ekin = make([]float64, cfg.Threads)
	return md
}

// minImage folds a distance component into the periodic box.
func (md *MD) minImage(d float64) float64 {
	if d > md.side/2 {
		return d - md.side
	}
	if d < -md.side/2 {
		return d + md.side
	}
	return d
}

// forces is thread t's force phase: the pairs (i, j>i) with i = t mod T.
func (md *MD) forces(t int) {
	f := md.force[t]
	for i := range f {
		f[i] = vec{} // racekit:norace id=md-force why="see move"
	}
	md.epot[t], md.vir[t] = 0, 0
	n := len(md.parts)
	for i := t; i < n; i += md.threads {
		// Positions were written by their owners in the last move phase:
		// no common lock; the barrier orders them.
		pi := md.parts[i].pos // racekit:norace id=md-pos why="barrier between the move phase that writes positions and the force phase that reads them"
		for j := i + 1; j < n; j++ {
			pj := md.parts[j].pos // racekit:norace id=md-pos why="see above"
			d := vec{md.minImage(pi.x - pj.x), md.minImage(pi.y - pj.y), md.minImage(pi.z - pj.z)}
			r2 := d.dot(d)
			if r2 >= cutoff2 || r2 == 0 {
				continue
			}
			inv2 := 1 / r2
			inv6 := inv2 * inv2 * inv2
			md.epot[t] += 4 * inv6 * (inv6 - 1)
			fm := 24 * inv2 * inv6 * (2*inv6 - 1)
			md.vir[t] -= fm * r2
			fv := d.scale(fm)
			f[i] = f[i].add(fv) // racekit:norace id=md-force why="see move"
			f[j] = f[j].sub(fv) // racekit:norace id=md-force why="see move"
			// A statistic shared by all threads, incremented without a
			// lock: lost updates only make the count low (benign).
			md.interactions++ // racekit:race id=md-inter kind=race benign=true self
		}
	}
}

// block returns thread t's contiguous block of particles.
func (md *MD) block(t int) (lo, hi int) {
	n := len(md.parts)
	per := (n + md.threads - 1) / md.threads
	lo, hi = t*per, (t+1)*per
	if hi > n {
		hi = n
	}
	if lo > n {
		lo = n
	}
	return lo, hi
}

// move is thread t's reduction and integration phase for its block.
func (md *MD) move(t int) {
	lo, hi := md.block(t)
	ek := 0.0
	for i := lo; i < hi; i++ {
		var f vec
		for tt := 0; tt < md.threads; tt++ {
			// Thread tt wrote it in the force phase: ordered by the
			// barrier, no lock.
			f = f.add(md.force[tt][i]) // racekit:norace id=md-force why="barrier between the force phase that writes partial forces and the move phase that sums them"
		}
		p := &md.parts[i]
		p.vel = p.vel.add(f.scale(dt))                                    // racekit:norace id=md-n-init why="see New"
		p.pos = p.pos.add(p.vel.scale(dt))                                // racekit:norace id=md-pos why="see forces" racekit:norace id=md-n-init why="see New"
		p.pos = vec{md.wrap(p.pos.x), md.wrap(p.pos.y), md.wrap(p.pos.z)} // racekit:norace id=md-pos why="see forces"
		ek += 0.5 * p.vel.dot(p.vel)
	}
	// Read by every thread in rescale, after a barrier.
	md.ekin[t] = ek // racekit:norace id=md-ekin why="barrier between the move phase and the rescale that reduces ekin"
}

func (md *MD) wrap(x float64) float64 {
	for x < 0 {
		x += md.side
	}
	for x >= md.side {
		x -= md.side
	}
	return x
}

// rescale is thread t's velocity rescaling: every thread reduces the
// kinetic energy, computes the same factor, and stores it in the shared
// field (the same value from every thread: a benign write/write race, and
// a benign race with the other threads' loads of it).
func (md *MD) rescale(t int) {
	ek := 0.0
	for _, e := range md.ekin { // racekit:norace id=md-ekin why="see move"
		ek += e
	}
	n := float64(len(md.parts))
	md.tscale = math.Sqrt(1.5 * n * tref / ek) // racekit:race id=md-tscale-ww kind=race benign=true self racekit:race id=md-tscale-wr kind=race benign=true
	s := md.tscale                             // racekit:race id=md-tscale-wr kind=race benign=true
	lo, hi := md.block(t)
	for i := lo; i < hi; i++ {
		md.parts[i].vel = md.parts[i].vel.scale(s)
	}
}

// run is one thread's whole simulation.
func (md *MD) run(t int, cfg Config) {
	episode := 0
	for step := 1; step <= cfg.Steps; step++ {
		md.forces(t)
		md.bar.wait(&episode)
		md.move(t)
		md.bar.wait(&episode)
		if cfg.Rescale > 0 && step%cfg.Rescale == 0 {
			md.rescale(t)
			md.bar.wait(&episode)
		}
	}
}

// Result is what JGF validates: energies, plus the interaction count.
type Result struct {
	Epot, Vir, Ekin float64
	Interactions    int
}

// Run simulates and returns the final energies.
func Run(cfg Config) Result {
	md := New(cfg)
	var wg sync.WaitGroup
	for t := 0; t < cfg.Threads; t++ {
		wg.Add(1)
		go func(t int) {
			defer wg.Done()
			md.run(t, cfg)
		}(t)
	}
	wg.Wait()
	var r Result
	for t := 0; t < cfg.Threads; t++ {
		r.Epot += md.epot[t]
		r.Vir += md.vir[t]
		r.Ekin += md.ekin[t]
	}
	r.Interactions = md.interactions
	return r
}
