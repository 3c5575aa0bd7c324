package sample

import (
	"slices"
	"strings"

	"github.com/racekit/racekit/trace"
)

// Frameless reports whether a sampled run records an event of op without
// showing the unsampled frames around it (their FuncEnter waits for an
// event that does show them): lock acquisitions and releases and the
// edges of sync objects, which LiteRace's unsampled code logs and nothing
// more; and an allocation, whose stack no report shows (a run records it
// without showing frames, sampled or not). An access (even an atomic's), a
// goroutine's fork, begin or end, and a call into untraced code show their
// frames, for their stacks.
// (Events recorded in a frame that is shown later stand before its
// FuncEnter: their own sites are exact, their stacks lack those frames.)
func Frameless(op trace.Op) bool {
	switch op {
	case trace.OpAcquire, trace.OpRelease, trace.OpSyncAcquire, trace.OpSyncRelease, trace.OpAlloc:
		return true
	}
	return false
}

// Shown returns the events of tr that keep keeps, without the function
// frames that hold no other kept event (directly, or in a frame they call
// that does) but Frameless ones: their FuncEnter and FuncExit both; a
// frame shown by a later event has its FuncEnter right before that event.
// It is what a sampled run records of unsampled calls (package rt's Enter
// records such a frame only when an event is recorded inside it), so a
// sampled run and Filter's output of a full run are compared through
// Shown on both sides: the same events, in the same frames wherever a
// frame holds one. (A sampled run records its sampled frames even when
// empty; Shown drops those too.) Last, it drops the redundant edges of
// sync objects, as a sampled run does (Edges).
func Shown(tr *trace.Trace, keep func(*trace.Event) bool) []*trace.Event {
	type frame struct {
		e     *trace.Event
		shown bool
	}
	var out []*trace.Event
	stacks := map[trace.GID][]frame{}
	for i := range tr.Events {
		e := &tr.Events[i]
		if keep != nil && !keep(e) {
			continue
		}
		st := stacks[e.G]
		switch e.Op {
		case trace.OpFuncEnter:
			stacks[e.G] = append(st, frame{e: e})
			continue
		case trace.OpFuncExit:
			if n := len(st); n > 0 {
				stacks[e.G] = st[:n-1]
				if !st[n-1].shown {
					continue
				}
			}
			out = append(out, e)
			continue
		}
		if Frameless(e.Op) {
			out = append(out, e)
			continue
		}
		for j := range st {
			if !st[j].shown {
				st[j].shown = true
				out = append(out, st[j].e)
			}
		}
		out = append(out, e)
	}
	drop, _ := Edges(out, func(uint64) bool { return true })
	kept := out[:0]
	for i, e := range out {
		if !drop[i] {
			kept = append(kept, e)
		}
	}
	return kept
}

// Epochs is Shown without what dedup may vary, for comparing a sampled run
// recorded with rt's dedup on and Filter's output of a full run recorded
// with it off. Per goroutine, the accesses between two of its
// synchronization events (one dedup epoch) become one entry: for each word
// accessed, w (some access to it wrote: a write covers later reads) or r,
// then str of the epoch's first access to it, sorted; frames are left out
// (a frame whose accesses dedup dropped holds nothing, and Shown drops
// it); every other event is str(e). rt's dedup records the first access
// covering each word per epoch and perhaps repeats (its table is
// direct-mapped), and with sampling it sees only the accesses of sampled
// frames (the hooks skip the others before any lookup): none of it
// changes an epoch's entry. (Words are told apart by address but named by
// their first access, so that heap addresses may differ between runs.)
func Epochs(tr *trace.Trace, keep func(*trace.Event) bool, str func(*trace.Event) string) map[trace.GID][]string {
	type word struct {
		first *trace.Event
		write bool
	}
	m := map[trace.GID][]string{}
	sets := map[trace.GID]map[uint64]*word{}
	flush := func(g trace.GID) {
		set := sets[g]
		if len(set) == 0 {
			return
		}
		names := make([]string, 0, len(set))
		for _, w := range set {
			op := "r "
			if w.write {
				op = "w "
			}
			names = append(names, op+str(w.first))
		}
		slices.Sort(names)
		m[g] = append(m[g], "accesses: "+strings.Join(names, "; "))
		delete(sets, g)
	}
	for _, e := range Shown(tr, keep) {
		switch {
		case e.Op.IsAccess():
			set := sets[e.G]
			if set == nil {
				set = map[uint64]*word{}
				sets[e.G] = set
			}
			w := set[e.Obj]
			if w == nil {
				w = &word{first: e}
				set[e.Obj] = w
			}
			w.write = w.write || e.Op == trace.OpWrite
			continue
		case e.Op == trace.OpFuncEnter || e.Op == trace.OpFuncExit:
			continue
		case e.Op.IsSync():
			flush(e.G)
		}
		m[e.G] = append(m[e.G], str(e))
	}
	for g := range sets {
		flush(g)
	}
	return m
}
