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
	r := rand.New(rand.NewPCG(seed, 0xc4c4))
	b := trace.NewBuilder()
	type held struct {
		lock string
		read bool
	}
	type gor struct {
		name    string
		spawner bool
		done    bool
		left    int // steps before a child ends (spawners end at random)
		held    []held
	}
	owner := map[string]string{}
	readers := map[string]int{}
	var live []*gor
	var ended []*gor
	count := 0
	spawn := func(parent *gor, spawner bool) {
		count++
		g := &gor{name: fmt.Sprintf("g%d", count), spawner: spawner, left: 1 + r.IntN(8)}
		if parent == nil {
			b.Begin(g.name) // born in untraced code
		} else {
			b.Fork(parent.name, g.name, fmt.Sprintf("go%d", r.IntN(3)))
		}
		live = append(live, g)
	}
	release := func(g *gor, i int) {
		h := g.held[i]
		g.held = append(g.held[:i], g.held[i+1:]...)
		if h.read {
			b.RRel(g.name, h.lock)
			readers[h.lock]--
		} else {
			b.Rel(g.name, h.lock)
			delete(owner, h.lock)
		}
	}
	end := func(g *gor) {
		for len(g.held) > 0 {
			release(g, len(g.held)-1)
		}
		b.End(g.name)
		g.done = true
		ended = append(ended, g)
	}
	leak := []int{0, 0, 1, 5, 100}[r.IntN(5)]
	main := &gor{name: "M"}
	b.Begin("M")
	for range 2 + r.IntN(2) {
		spawn(main, true)
	}
	n = max(n, 50)
	for len(b.Trace().Events) < n {
		switch k := r.IntN(100); {
		case k < 2:
			spawn(nil, false)
			continue
		case k < 4:
			if len(ended) > 0 {
				b.Join("M", ended[r.IntN(len(ended))].name)
			}
			continue
		case k < 6:
			spawn(main, true)
			continue
		}
		if len(live) == 0 {
			spawn(main, true)
			continue
		}
		i := r.IntN(len(live))
		g := live[i]
		switch k := r.IntN(100); {
		case k < 30:
			xi := r.IntN(4)
			x := fmt.Sprintf("x%d", xi)
			write := r.IntN(2) == 0
			if r.IntN(3) == 0 {
				x = "p" + g.name // private
			} else if l := fmt.Sprintf("L%d", xi%2); r.IntN(100) >= leak {
				// x_i is guarded by L_i%2, but for leak percent of accesses
				ok := false
				for _, h := range g.held {
					ok = ok || h.lock == l && (!write || !h.read)
				}
				if !ok {
					continue
				}
			}
			if r.IntN(30) == 0 {
				b.Alloc(g.name, x, 8)
			} else if write {
				b.Write(g.name, x, fmt.Sprintf("w%d", r.IntN(5)))
			} else {
				b.Read(g.name, x, fmt.Sprintf("r%d", r.IntN(5)))
			}
		case k < 48:
			l := fmt.Sprintf("L%d", r.IntN(2))
			read := r.IntN(3) == 0
			busy := owner[l] != "" || (!read && readers[l] > 0)
			for _, h := range g.held {
				busy = busy || h.lock == l
			}
			if !busy {
				g.held = append(g.held, held{l, read})
				if read {
					b.RAcq(g.name, l)
					readers[l]++
				} else {
					b.Acq(g.name, l)
					owner[l] = g.name
				}
			} else if len(g.held) > 0 {
				release(g, len(g.held)-1)
			}
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
				spawn(g, false)
			}
		default:
			if g.spawner && r.IntN(6) == 0 {
				end(g)
				live = append(live[:i], live[i+1:]...)
				continue
			}
		}
		if g.left--; !g.spawner && g.left <= 0 {
			end(g)
			live = append(live[:i], live[i+1:]...)
		}
	}
	for _, g := range live {
		end(g)
	}
	return b.Trace()
}
