package reference

import (
	"fmt"
	"math/rand/v2"

	"github.com/racekit/racekit/trace"
)

// Churn returns a random well-formed trace of many short-lived goroutines,
// the shape of an HTTP test suite (a goroutine per request, per callback,
// per cancel), for the differential tests of recycled clock IDs
// (detect/clock, "Recycled IDs"): main forks a few spawners; spawners fork
// children, which do a few accesses to shared and private words (a shared
// word under its lock, but for a share of accesses that varies from trace
// to trace, none to all), take locks, publish to and read from a few global sync objects (as the Go
// front end's "I/O" and "contexts" objects), use atomics, now and then fork
// a grandchild, and end; sometimes a spawner ends and main forks another,
// a goroutine is born without a fork (untraced code), a goroutine that
// ended is joined, or a word is allocated anew. Its events number roughly
// n (at least 50).
func Churn(seed uint64, n int) *trace.Trace {
	c := &churn{
		r:       rand.New(rand.NewPCG(seed, 0xc4c4)),
		b:       trace.NewBuilder(),
		owner:   map[string]string{},
		readers: map[string]int{},
	}
	c.leak = []int{0, 0, 1, 5, 100}[c.r.IntN(5)]
	c.main = &churnG{name: "M"}
	c.b.Begin("M")
	for range 2 + c.r.IntN(2) {
		c.spawn(c.main, true)
	}
	n = max(n, 50)
	for len(c.b.Trace().Events) < n {
		c.step()
	}
	for _, g := range c.live {
		c.end(g)
	}
	return c.b.Trace()
}

// churnHeld is a lock a goroutine of Churn holds.
type churnHeld struct {
	lock string
	read bool
}

// churnG is a goroutine of Churn.
type churnG struct {
	name    string
	spawner bool
	done    bool
	left    int // steps before a child ends (spawners end at random)
	held    []churnHeld
}

// churn is the state of the trace Churn builds: its goroutines and who
// holds which lock.
type churn struct {
	r       *rand.Rand
	b       *trace.Builder
	owner   map[string]string // lock -> its writer
	readers map[string]int    // lock -> its readers
	live    []*churnG
	ended   []*churnG
	count   int // goroutines spawned
	leak    int // percent of shared accesses without their lock
	main    *churnG
}

// spawn starts a goroutine, forked by parent or (parent nil) born in
// untraced code.
func (c *churn) spawn(parent *churnG, spawner bool) {
	c.count++
	g := &churnG{name: fmt.Sprintf("g%d", c.count), spawner: spawner, left: 1 + c.r.IntN(8)}
	if parent == nil {
		c.b.Begin(g.name) // born in untraced code
	} else {
		c.b.Fork(parent.name, g.name, fmt.Sprintf("go%d", c.r.IntN(3)))
	}
	c.live = append(c.live, g)
}

// release releases g's i'th held lock.
func (c *churn) release(g *churnG, i int) {
	h := g.held[i]
	g.held = append(g.held[:i], g.held[i+1:]...)
	if h.read {
		c.b.RRel(g.name, h.lock)
		c.readers[h.lock]--
	} else {
		c.b.Rel(g.name, h.lock)
		delete(c.owner, h.lock)
	}
}

// end releases g's locks and ends it.
func (c *churn) end(g *churnG) {
	for len(g.held) > 0 {
		c.release(g, len(g.held)-1)
	}
	c.b.End(g.name)
	g.done = true
	c.ended = append(c.ended, g)
}

// step takes one random step: main's (a goroutine born untraced, a join,
// another spawner) or one of a live goroutine, which a child's last step
// ends.
func (c *churn) step() {
	switch k := c.r.IntN(100); {
	case k < 2:
		c.spawn(nil, false)
		return
	case k < 4:
		if len(c.ended) > 0 {
			c.b.Join("M", c.ended[c.r.IntN(len(c.ended))].name)
		}
		return
	case k < 6:
		c.spawn(c.main, true)
		return
	}
	if len(c.live) == 0 {
		c.spawn(c.main, true)
		return
	}
	i := c.r.IntN(len(c.live))
	g := c.live[i]
	if !c.act(g, i) {
		return
	}
	if g.left--; !g.spawner && g.left <= 0 {
		c.end(g)
		c.live = append(c.live[:i], c.live[i+1:]...)
	}
}

// act makes g, c.live[i], do one random thing. It reports whether that
// counts as one of g's steps: not when an access was skipped, nor when g,
// a spawner, ended.
func (c *churn) act(g *churnG, i int) bool {
	r, b := c.r, c.b
	switch k := r.IntN(100); {
	case k < 30:
		return c.access(g)
	case k < 48:
		c.lock(g)
	case k < 62:
		b.Snd(g.name, fmt.Sprintf("o%d", r.IntN(3)))
	case k < 76:
		b.Rcv(g.name, fmt.Sprintf("o%d", r.IntN(3)))
	case k < 80:
		a := fmt.Sprintf("a%d", r.IntN(2))
		switch r.IntN(3) {
		case 0:
			b.AStore(g.name, a)
		case 1:
			b.ALoad(g.name, a)
		default:
			b.ARMW(g.name, a)
		}
	case k < 92:
		if g.spawner || r.IntN(8) == 0 {
			c.spawn(g, false)
		}
	default:
		if g.spawner && r.IntN(6) == 0 {
			c.end(g)
			c.live = append(c.live[:i], c.live[i+1:]...)
			return false
		}
	}
	return true
}

// access makes g read, write or allocate a shared or private word; it
// reports false, doing nothing, when g does not hold the lock that guards
// the shared word (and this access is not one to leak).
func (c *churn) access(g *churnG) bool {
	r, b := c.r, c.b
	xi := r.IntN(4)
	x := fmt.Sprintf("x%d", xi)
	write := r.IntN(2) == 0
	if r.IntN(3) == 0 {
		x = "p" + g.name // private
	} else if l := fmt.Sprintf("L%d", xi%2); r.IntN(100) >= c.leak {
		// x_i is guarded by L_i%2, but for leak percent of accesses
		ok := false
		for _, h := range g.held {
			ok = ok || h.lock == l && (!write || !h.read)
		}
		if !ok {
			return false
		}
	}
	if r.IntN(30) == 0 {
		b.Alloc(g.name, x, 8)
	} else if write {
		b.Write(g.name, x, fmt.Sprintf("w%d", r.IntN(5)))
	} else {
		b.Read(g.name, x, fmt.Sprintf("r%d", r.IntN(5)))
	}
	return true
}

// lock makes g take a lock (for reading or writing) if it is free, or
// else release the last lock g holds.
func (c *churn) lock(g *churnG) {
	r, b := c.r, c.b
	l := fmt.Sprintf("L%d", r.IntN(2))
	read := r.IntN(3) == 0
	busy := c.owner[l] != "" || (!read && c.readers[l] > 0)
	for _, h := range g.held {
		busy = busy || h.lock == l
	}
	if !busy {
		g.held = append(g.held, churnHeld{l, read})
		if read {
			b.RAcq(g.name, l)
			c.readers[l]++
		} else {
			b.Acq(g.name, l)
			c.owner[l] = g.name
		}
	} else if len(g.held) > 0 {
		c.release(g, len(g.held)-1)
	}
}
