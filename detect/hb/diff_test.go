package hb_test

// Differential tests over random well-formed traces: hb against the
// brute-force oracle (package reference), fasttrack against hb (FastTrack's
// Theorem 1: same racing addresses, same first racing access on each).

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/racekit/racekit/detect/reference"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/trace"
)

// randomTrace returns a well-formed trace of roughly 50..300 events: a
// main goroutine M forks 2..4 workers (and sometimes goroutines U and V
// are born without a fork), all doing random reads and writes on a few
// addresses, nested exclusive and read-mode locking that respects mutual
// exclusion, sends and receives, and atomics; at the end every goroutine
// releases its locks and M joins the workers.
func randomTrace(seed uint64) *trace.Trace {
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	b := trace.NewBuilder()
	type held struct {
		lock string
		read bool
	}
	type gor struct {
		name              string
		live, done, untrk bool
		held              []held
	}
	nw := 2 + r.IntN(3)
	gs := []*gor{{name: "M", live: true}}
	for i := range nw {
		gs = append(gs, &gor{name: fmt.Sprintf("T%d", i+1)})
	}
	for _, u := range []string{"U", "V"} {
		if r.IntN(4) == 0 {
			gs = append(gs, &gor{name: u, untrk: true})
		}
	}
	owner := map[string]string{} // exclusive holder of each lock
	readers := map[string]int{}

	pick := func(prefix string, n int) string { return fmt.Sprintf("%s%d", prefix, r.IntN(n)) }
	// Each address x_i is either free for all, or guarded by a lock (a
	// write needs it exclusively) except for leak[i] percent of accesses,
	// so that traces range from race-free to racy.
	guard := make([]string, 2+r.IntN(3))
	leak := make([]int, len(guard))
	for i := range guard {
		switch r.IntN(3) {
		case 0:
		case 1:
			guard[i] = pick("L", 3)
		default:
			guard[i], leak[i] = pick("L", 3), 1+r.IntN(10)
		}
	}
	holds := func(g *gor, l string) bool {
		for _, h := range g.held {
			if h.lock == l {
				return true
			}
		}
		return false
	}
	guarded := func(g *gor, l string, write bool) bool {
		for _, h := range g.held {
			if h.lock == l && (!write || !h.read) {
				return true
			}
		}
		return false
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
	releaseAll := func(g *gor) {
		for len(g.held) > 0 {
			release(g, r.IntN(len(g.held)))
		}
	}

	b.Begin("M")
	target := 50 + r.IntN(251)
	for len(b.Trace().Events) < target {
		g := gs[r.IntN(len(gs))]
		if g.untrk && !g.live && r.IntN(8) == 0 {
			g.live = true // born in untraced code: its first event is now
		}
		if !g.live || g.done {
			continue
		}
		switch k := r.IntN(100); {
		case k < 45:
			i := r.IntN(len(guard))
			write := r.IntN(2) == 0
			if l := guard[i]; l != "" && !guarded(g, l, write) && r.IntN(100) >= leak[i] {
				continue // x_i is accessed only under its lock, but for leaks
			}
			x := fmt.Sprintf("x%d", i)
			if r.IntN(25) == 0 {
				// x_i is freed and allocated anew: earlier accesses are
				// to another object (sometimes x_i and x_i+1 at once).
				b.Alloc(g.name, x, 8*uint64(1+r.IntN(2)))
				continue
			}
			if write {
				b.Write(g.name, x, pick("w", 4))
			} else {
				b.Read(g.name, x, pick("r", 4))
			}
		case k < 57:
			l := pick("L", 3)
			read := r.IntN(3) == 0
			if holds(g, l) || owner[l] != "" || (!read && readers[l] > 0) {
				continue
			}
			g.held = append(g.held, held{l, read})
			if read {
				b.RAcq(g.name, l)
				readers[l]++
			} else {
				b.Acq(g.name, l)
				owner[l] = g.name
			}
		case k < 69:
			if len(g.held) > 0 {
				release(g, r.IntN(len(g.held)))
			}
		case k < 74:
			b.Snd(g.name, pick("c", 2))
		case k < 79:
			b.Rcv(g.name, pick("c", 2))
		case k < 88:
			a := pick("a", 2)
			op := []trace.Op{trace.OpAtomicStore, trace.OpAtomicLoad, trace.OpAtomicRMW}[r.IntN(3)]
			switch r.IntN(3) {
			case 0: // as traces of other sources have them
				b.Add(trace.Event{G: b.G(g.name), Op: op, Obj: b.Obj(a)})
			case 1: // as the Go front end records them; a plain access of a may race with it
				b.GoAtomic(g.name, op, a, pick("at", 3))
			default: // a plain access of the atomic word: racing with the atomic ones, or not
				if op == trace.OpAtomicLoad {
					b.Read(g.name, a, pick("pr", 2))
				} else {
					b.Write(g.name, a, pick("pw", 2))
				}
			}
		case k < 97:
			if g.name != "M" {
				continue
			}
			for _, c := range gs[1:] {
				if !c.untrk && !c.live {
					b.Fork("M", c.name, "go "+c.name)
					c.live = true
					break
				}
			}
		default:
			if g.name != "M" {
				releaseAll(g)
				b.End(g.name)
				g.done = true
			}
		}
	}
	for _, g := range gs[1:] {
		if g.live && !g.done {
			releaseAll(g)
			b.End(g.name)
		}
	}
	releaseAll(gs[0])
	for _, i := range r.Perm(len(gs) - 1) {
		if g := gs[i+1]; g.live {
			b.Join("M", g.name)
		}
	}
	for range r.IntN(4) {
		b.Write("M", pick("x", len(guard)), "after join")
	}
	return b.Trace()
}

// dump formats a trace for a failure message.
func dump(tr *trace.Trace) string {
	var s strings.Builder
	for _, e := range tr.Events {
		obj := tr.M.ObjLabel(e.Obj)
		if e.Op == trace.OpFork || e.Op == trace.OpJoin {
			obj = tr.M.Goroutine(e.Child()).Label()
		}
		mode := ""
		if e.ReadLock() {
			mode = "(read)"
		}
		fmt.Fprintf(&s, "%3d %s|%s%s(%s)|%s\n", e.Seq, tr.M.Goroutine(e.G).Label(), e.Op, mode, obj, tr.M.Site(e.Site))
	}
	return s.String()
}

// firstRaces maps each racing address to the smallest Cur.Seq reported on it.
func firstRaces(rs []finding.Race) map[uint64]uint64 {
	m := map[uint64]uint64{}
	for _, r := range rs {
		if s, ok := m[r.Addr]; !ok || r.Cur.Seq < s {
			m[r.Addr] = r.Cur.Seq
		}
	}
	return m
}

// seeds is how many random traces the differential test checks.
func seeds() int {
	switch {
	case testing.Short():
		return 300
	case raceBuild:
		return 1000
	}
	return 3000
}

// TestRaceDifferentialRandomTraces checks, on each random trace, that
// (a) hb reports exactly the oracle's distinct site pairs, (b) fasttrack
// finds a race on exactly the addresses hb does, first at the same access,
// and (c) every dynamic report of either detector is a racing pair of
// events of the trace, with the right addresses and access details.
func TestRaceDifferentialRandomTraces(t *testing.T) {
	var pairs, reports, racy, quiet int
	for seed := range uint64(seeds()) {
		tr := randomTrace(seed)
		oracle := reference.HBRaces(tr)
		h, f := run(t, hbFlavour, tr), run(t, ftFlavour, tr)

		if got, want := h.c.Pairs(), reference.Pairs(tr, oracle); !slices.Equal(got, want) {
			t.Fatalf("seed %d: hb pairs %v, reference %v\n%s", seed, labels(tr.M, got), labels(tr.M, want), dump(tr))
		}

		hf, ff := firstRaces(h.races), firstRaces(f.races)
		for a, s := range hf {
			if fs, ok := ff[a]; !ok || fs != s {
				t.Fatalf("seed %d: %s first races at seq %d under hb, fasttrack: %d (reported %v)\n%s",
					seed, tr.M.ObjLabel(a), s, fs, ok, dump(tr))
			}
		}
		for a := range ff {
			if _, ok := hf[a]; !ok {
				t.Fatalf("seed %d: fasttrack reports a race on %s, hb none\n%s", seed, tr.M.ObjLabel(a), dump(tr))
			}
		}

		real := map[[2]uint64]bool{}
		for _, x := range oracle {
			real[[2]uint64{uint64(x.A), uint64(x.B)}] = true
		}
		for _, x := range append(h.races, f.races...) {
			if !real[[2]uint64{x.Prev.Seq, x.Cur.Seq}] || x.Addr != tr.Events[x.Cur.Seq].Obj ||
				x.Prev != access(tr, int(x.Prev.Seq)) || x.Cur != access(tr, int(x.Cur.Seq)) {
				t.Fatalf("seed %d: %s reported %+v, not a race of the trace\n%s", seed, x.Detector, x, dump(tr))
			}
		}

		pairs += h.c.Len()
		reports += len(h.races) + len(f.races)
		if len(hf) > 0 {
			racy++
		} else {
			quiet++
		}
	}
	if racy == 0 || quiet == 0 {
		t.Fatalf("%d racy and %d race-free traces: the generator needs both", racy, quiet)
	}
	t.Logf("%d racy traces, %d race-free; %d distinct pairs, %d dynamic reports", racy, quiet, pairs, reports)
}

func TestNoRaceRandomTracesAreWellFormed(t *testing.T) {
	// The differential tests rely on the generator's traces being
	// well-formed: neither detector counts anything as ill-formed.
	for seed := range uint64(200) {
		tr := randomTrace(seed)
		for _, f := range flavours {
			if n := run(t, f, tr).stats["illformed"]; n != 0 {
				t.Fatalf("seed %d: %s counts %d ill-formed events\n%s", seed, f.name, n, dump(tr))
			}
		}
	}
}
