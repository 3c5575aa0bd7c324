package main

import (
	"slices"

	"github.com/racekit/racekit/trace"
)

// untraceRegions makes tr incomplete by rule "region" (see the package
// comment): each outermost synchronized region of each goroutine becomes a
// BarrierPair whose D lists every object the region touches. It returns
// the new trace and the number of regions replaced.
func untraceRegions(tr *trace.Trace, balancedLocksInD bool) (*trace.Trace, int) {
	type open struct {
		acq   int    // index of the Acquire
		frame uint64 // frame instance on top of the stack at the Acquire (0: none)
		obj   uint64
	}
	type region struct{ start, end int }
	frames := map[trace.GID][]uint64{} // per goroutine: stack of frame instances
	held := map[trace.GID][]open{}     // per goroutine: open critical sections, innermost last
	var nextFrame uint64
	var regions []region // critical sections that end in the frame they began in
	top := func(g trace.GID) uint64 {
		if st := frames[g]; len(st) > 0 {
			return st[len(st)-1]
		}
		return 0
	}
	for i := range tr.Events {
		e := &tr.Events[i]
		g := e.G
		switch e.Op {
		case trace.OpFuncEnter:
			nextFrame++
			frames[g] = append(frames[g], nextFrame)
		case trace.OpFuncExit:
			if st := frames[g]; len(st) > 0 {
				frames[g] = st[:len(st)-1]
			}
		case trace.OpAcquire:
			held[g] = append(held[g], open{acq: i, frame: top(g), obj: e.Obj})
		case trace.OpRelease:
			h := held[g]
			k := len(h) - 1
			for k >= 0 && h[k].obj != e.Obj {
				k--
			}
			if k < 0 {
				break // released without an acquire of this goroutine: a single-event region
			}
			o := h[k]
			held[g] = append(h[:k:k], h[k+1:]...)
			// A section is a candidate when it ends in the frame it began in.
			if o.frame == top(g) {
				regions = append(regions, region{o.acq, i})
			}
		}
	}
	// The regions are the outermost candidates: a candidate that begins
	// inside another (nested in it, or overlapping it) is left out.
	slices.SortFunc(regions, func(a, b region) int { return a.start - b.start })
	lastEnd := map[trace.GID]int{}
	kept := regions[:0]
	for _, r := range regions {
		g := tr.Events[r.start].G
		if l, ok := lastEnd[g]; ok && r.start < l {
			continue
		}
		lastEnd[g] = r.end
		kept = append(kept, r)
	}
	regions = kept
	// Regions that fork, join, begin or end a goroutine, or hold a
	// BarrierPair of the trace, are split into their synchronization events.
	inRegion := make([]int32, len(tr.Events)) // 1 + index in regions, for the region's own goroutine's events
	for ri, r := range regions {
		g := tr.Events[r.start].G
		ok := true
		for i := r.start; i <= r.end && ok; i++ {
			if e := &tr.Events[i]; e.G == g {
				switch e.Op {
				case trace.OpFork, trace.OpJoin, trace.OpBegin, trace.OpEnd, trace.OpMethodBegin, trace.OpMethodEnd:
					ok = false
				}
			}
		}
		if !ok {
			continue
		}
		for i := r.start; i <= r.end; i++ {
			if tr.Events[i].G == g {
				inRegion[i] = int32(ri) + 1
			}
		}
	}
	isSync := func(op trace.Op) bool {
		switch op {
		case trace.OpAcquire, trace.OpRelease, trace.OpSyncRelease, trace.OpSyncAcquire,
			trace.OpAtomicLoad, trace.OpAtomicStore, trace.OpAtomicRMW:
			return true
		}
		return false
	}
	touches := func(op trace.Op) bool { return op.IsAccess() || isSync(op) }
	out := &trace.Trace{M: tr.M}
	n := 0
	for i := 0; i < len(tr.Events); i++ {
		e := tr.Events[i]
		ri := inRegion[i]
		switch {
		case ri > 0 && regions[ri-1].start == i:
			// A critical section: MethodBegin(D) here, MethodEnd at its
			// Release; in between, the other goroutines' events keep their
			// places and the region's own allocations and region markers
			// stay visible.
			r := regions[ri-1]
			g := e.G
			depth := map[uint64]int{}
			balanced := map[uint64]bool{}
			for j := r.start; j <= r.end; j++ {
				if x := &tr.Events[j]; x.G == g && x.Op == trace.OpAcquire {
					depth[x.Obj]++
				} else if x.G == g && x.Op == trace.OpRelease && depth[x.Obj] > 0 {
					depth[x.Obj]--
					balanced[x.Obj] = true
				}
			}
			var d []uint64
			seen := map[uint64]bool{}
			for j := r.start; j <= r.end; j++ {
				x := &tr.Events[j]
				if x.G != g || !touches(x.Op) || seen[x.Obj] {
					continue
				}
				if (x.Op == trace.OpAcquire || x.Op == trace.OpRelease) && !balancedLocksInD && balanced[x.Obj] && depth[x.Obj] == 0 {
					continue
				}
				seen[x.Obj] = true
				d = append(d, x.Obj)
			}
			out.Events = append(out.Events, trace.Event{Seq: e.Seq, G: g, Op: trace.OpMethodBegin, Obj: regionObj, Site: e.Site, Addrs: d})
			n++
		case ri > 0 && regions[ri-1].end == i:
			out.Events = append(out.Events, trace.Event{Seq: e.Seq, G: e.G, Op: trace.OpMethodEnd, Obj: regionObj, Site: e.Site})
		case ri > 0:
			if e.Op == trace.OpAlloc || e.Op == trace.OpRegionBegin || e.Op == trace.OpRegionEnd {
				out.Events = append(out.Events, e)
			}
		case isSync(e.Op):
			out.Events = append(out.Events,
				trace.Event{Seq: e.Seq, G: e.G, Op: trace.OpMethodBegin, Obj: regionObj, Site: e.Site, Addrs: []uint64{e.Obj}},
				trace.Event{Seq: e.Seq, G: e.G, Op: trace.OpMethodEnd, Obj: regionObj, Site: e.Site})
			n++
		default:
			out.Events = append(out.Events, e)
		}
	}
	return out, n
}

// regionObj names the helper an untraced region stands for in
// MethodBegin/MethodEnd (no function of the trace: the region has none).
const regionObj = 0
