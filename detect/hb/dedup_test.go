package hb_test

import (
	"maps"
	"slices"
	"testing"

	"github.com/racekit/racekit/trace"
)

// dedupLikeRT returns tr without the accesses rt's dedup drops
// (rt/access.go), with a table that never forgets: per goroutine, an
// access covered by one recorded in its current epoch (the same address; a
// write covers a read). An epoch ends at each synchronization event of the
// goroutine, except, when acrossAcquires (RACEKIT_DEDUP=release), at those
// that only acquire (rt's acquireOnly: a lock's acquisition, a sync
// object's acquire, an atomic load, a join); an allocation makes its words
// new; a goroutine born in untraced code ends every goroutine's epoch (rt's
// generation). It also returns how many accesses it dropped.
func dedupLikeRT(tr *trace.Trace, acrossAcquires bool) (*trace.Trace, int) {
	type key struct {
		g    trace.GID
		addr uint64
	}
	type seen struct {
		epoch int
		write bool
	}
	epoch := map[trace.GID]int{}
	gen := 0 // epochs before it are over everywhere
	table := map[key]seen{}
	known := map[trace.GID]bool{}
	out := &trace.Trace{M: tr.M}
	dropped := 0
	for _, e := range tr.Events {
		if !known[e.G] {
			known[e.G] = true
			if len(known) > 1 && !forkedBefore(tr, e.G, e.Seq) {
				gen = int(e.Seq) + 1
			}
		}
		if e.Op == trace.OpFork {
			known[e.Child()] = true
		}
		cur := max(epoch[e.G], gen)
		switch {
		case e.Op.IsAccess() && e.Flags&trace.FlagGoAtomic == 0:
			k := key{e.G, e.Obj}
			write := e.Op == trace.OpWrite
			if s, ok := table[k]; ok && s.epoch == cur && (s.write || !write) {
				dropped++
				continue
			}
			table[k] = seen{cur, write}
		case e.Op == trace.OpAlloc:
			if lo, hi, ok := e.AllocRange(); ok {
				for k := range table {
					if k.addr >= lo && k.addr < hi {
						delete(table, k)
					}
				}
			}
		default:
			only := false
			switch e.Op {
			case trace.OpAcquire, trace.OpSyncAcquire, trace.OpAtomicLoad, trace.OpJoin:
				only = acrossAcquires
			}
			if !only {
				epoch[e.G] = int(e.Seq) + 1
			}
		}
		ev := e
		ev.Seq = uint64(len(out.Events))
		out.Events = append(out.Events, ev)
	}
	return out, dropped
}

// forkedBefore reports whether a fork of g comes before seq in tr.
func forkedBefore(tr *trace.Trace, g trace.GID, seq uint64) bool {
	for _, e := range tr.Events[:seq] {
		if e.Op == trace.OpFork && e.Child() == g {
			return true
		}
	}
	return false
}

// TestFastTrackDedupAcrossAcquires: on random traces, FastTrack finds a race
// on the same addresses whether it sees every access, the accesses rt's
// default dedup keeps, or those it keeps when an epoch ends only at a
// release (RACEKIT_DEDUP=release, which racekit test sets for FastTrack
// alone): an access repeated after an acquire races with nothing the first
// one does not race with. The traces must give the second mode something
// to drop.
func TestFastTrackDedupAcrossAcquires(t *testing.T) {
	var drops, dropsAcross int
	for seed := range uint64(seeds()) {
		tr := randomTrace(seed)
		want := slices.Sorted(maps.Keys(firstRaces(run(t, ftFlavour, tr).races)))
		for _, across := range []bool{false, true} {
			d, n := dedupLikeRT(tr, across)
			if across {
				dropsAcross += n
			} else {
				drops += n
			}
			got := slices.Sorted(maps.Keys(firstRaces(run(t, ftFlavour, d).races)))
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d, across acquires %v: fasttrack races on %v after dedup, %v before\n%s", seed, across, got, want, dump(tr))
			}
		}
	}
	if dropsAcross <= drops {
		t.Fatalf("dedup across acquires dropped %d accesses, the default %d: want more", dropsAcross, drops)
	}
	t.Logf("accesses dropped: %d by the default dedup, %d across acquires", drops, dropsAcross)
}
