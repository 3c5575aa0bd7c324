// Package raytracer is a Go version of the Java Grande Forum's RayTracer
// (RaceFuzzer Table 1: 1,924 lines, 2 real races; PECAN Table 1; TREE
// Table 5.1): it renders a scene of spheres lit by point lights, each
// thread rendering an interleaved share of the rows, and adds the sum of
// its pixels to a shared checksum that validates the image.
//
// The famous JGF bug is kept: the checksum update is "synchronized", but
// on the thread's own runner object, so no two threads hold the same lock
// and the update is a data race (the checksum, and so the validation, can
// come out wrong). The second race is the ray counter, a statistic every
// thread increments without a lock (benign).
package raytracer

import (
	"math"
	"sync"
)

// Config sizes a run.
type Config struct {
	Width, Height int
	Threads       int
}

// DefaultConfig is the size the test uses.
func DefaultConfig() Config { return Config{Width: 12, Height: 12, Threads: 2} }

type vec struct{ x, y, z float64 }

func (a vec) add(b vec) vec       { return vec{a.x + b.x, a.y + b.y, a.z + b.z} }
func (a vec) sub(b vec) vec       { return vec{a.x - b.x, a.y - b.y, a.z - b.z} }
func (a vec) scale(s float64) vec { return vec{a.x * s, a.y * s, a.z * s} }
func (a vec) dot(b vec) float64   { return a.x*b.x + a.y*b.y + a.z*b.z }
func (a vec) norm() vec           { return a.scale(1 / math.Sqrt(a.dot(a))) }

// Sphere is a primitive.
type Sphere struct {
	Center vec
	Radius float64
	Color  vec
	Refl   float64 // reflectivity
}

// Scene is read-only once built.
type Scene struct {
	Spheres []Sphere
	Lights  []vec
	Eye     vec
}

// NewScene is JGF's scene in miniature: a grid of spheres and two lights.
func NewScene() *Scene {
	s := &Scene{Eye: vec{0, 0, -8}, Lights: []vec{{-5, 5, -5}, {5, 8, -3}}}
	for i := -1; i <= 1; i++ {
		for j := -1; j <= 1; j++ {
			s.Spheres = append(s.Spheres, Sphere{
				Center: vec{float64(i) * 1.5, float64(j) * 1.5, 2 + float64((i+j)&1)},
				Radius: 0.6,
				Color:  vec{0.5 + 0.2*float64(i), 0.5, 0.5 - 0.2*float64(j)},
				Refl:   0.3,
			})
		}
	}
	return s
}

// Shared is what the threads share.
type Shared struct {
	checksum int64 // updated under each runner's own lock: no common lock
	rays     int   // statistic, updated without a lock
}

// Runner is one thread's renderer, with the lock JGF's synchronized
// method takes: its own.
type Runner struct {
	mu     sync.Mutex
	id     int
	scene  *Scene
	shared *Shared
}

// intersect returns the nearest sphere hit by the ray and its distance.
func (r *Runner) intersect(orig, dir vec) (int, float64) {
	best, bestT := -1, math.Inf(1)
	for i, s := range r.scene.Spheres {
		oc := orig.sub(s.Center)
		b := oc.dot(dir)
		c := oc.dot(oc) - s.Radius*s.Radius
		disc := b*b - c
		if disc < 0 {
			continue
		}
		t := -b - math.Sqrt(disc)
		if t > 1e-6 && t < bestT {
			best, bestT = i, t
		}
	}
	return best, bestT
}

// trace follows a ray for up to depth bounces and returns its color.
func (r *Runner) trace(orig, dir vec, depth int) vec {
	// Counted by every thread without synchronization: lost counts only
	// (benign).
	r.shared.rays++ // racekit:race id=rt-rays kind=race benign=true self
	hit, t := r.intersect(orig, dir)
	if hit < 0 {
		return vec{0.1, 0.1, 0.1}
	}
	s := r.scene.Spheres[hit]
	p := orig.add(dir.scale(t))
	n := p.sub(s.Center).norm()
	col := s.Color.scale(0.1)
	for _, l := range r.scene.Lights {
		ld := l.sub(p).norm()
		if diff := n.dot(ld); diff > 0 {
			if sh, _ := r.intersect(p, ld); sh < 0 {
				col = col.add(s.Color.scale(diff * 0.7))
			}
		}
	}
	if depth > 0 && s.Refl > 0 {
		rd := dir.sub(n.scale(2 * dir.dot(n)))
		col = col.add(r.trace(p, rd, depth-1).scale(s.Refl))
	}
	return col
}

// addChecksum is JGF's synchronized checksum update: synchronized on the
// runner, which no other thread locks.
func (r *Runner) addChecksum(v int64) {
	r.mu.Lock()
	r.shared.checksum += v // racekit:race id=rt-checksum kind=race benign=false self racekit:norace id=rt-n1 why="read after wg.Wait joined the writers"
	r.mu.Unlock()
}

// render draws rows y = id, id+threads, ... into img.
func (r *Runner) render(img [][]int64, threads int) {
	h, w := len(img), len(img[0])
	var sum int64
	for y := r.id; y < h; y += threads {
		for x := 0; x < w; x++ {
			dir := vec{(float64(x) - float64(w)/2) / float64(w), (float64(y) - float64(h)/2) / float64(h), 1}.norm()
			c := r.trace(r.scene.Eye, dir, 2)
			px := int64(math.Min(c.x, 1)*255)<<16 | int64(math.Min(c.y, 1)*255)<<8 | int64(math.Min(c.z, 1)*255)
			img[y][x] = px
			sum += px
		}
	}
	r.addChecksum(sum)
}

// Result is the validation data.
type Result struct {
	Checksum int64 // from the racy shared update
	Image    int64 // the sum of the image's pixels, recomputed after the run
	Rays     int
}

// Run renders the scene.
func Run(cfg Config) Result {
	scene := NewScene()
	sh := &Shared{}
	img := make([][]int64, cfg.Height)
	for y := range img {
		img[y] = make([]int64, cfg.Width)
	}
	var wg sync.WaitGroup
	for t := 0; t < cfg.Threads; t++ {
		wg.Add(1)
		go func(t int) {
			defer wg.Done()
			r := &Runner{id: t, scene: scene, shared: sh}
			r.render(img, cfg.Threads)
		}(t)
	}
	wg.Wait()
	res := Result{Checksum: sh.checksum, Rays: sh.rays} // racekit:norace id=rt-n1 why="read after wg.Wait joined the writers"
	for _, row := range img {
		for _, px := range row {
			res.Image += px
		}
	}
	return res
}
