package main

import (
	"slices"

	"github.com/racekit/racekit/trace"
)

// isSyncOp reports whether op synchronizes (the events rule "region"
// hides, and the ones that make a function synchronize for rule "func").
func isSyncOp(op trace.Op) bool {
	switch op {
	case trace.OpAcquire, trace.OpRelease, trace.OpSyncRelease, trace.OpSyncAcquire,
		trace.OpAtomicLoad, trace.OpAtomicStore, trace.OpAtomicRMW:
		return true
	}
	return false
}

// isSndRcvOp reports whether op is a snd or rcv (channels, WaitGroup,
// Once, Cond: the events rule "chans" hides).
func isSndRcvOp(op trace.Op) bool { return op == trace.OpSyncRelease || op == trace.OpSyncAcquire }

// isLockOp reports whether op is a lock operation (the events rule "locks"
// hides).
func isLockOp(op trace.Op) bool { return op == trace.OpAcquire || op == trace.OpRelease }

// atomicRecords marks the Acquire and the Release of each atomic
// operation that the Go front end recorded inside the lock private to its
// word, when hide does not report the atomic op: such a section is the
// atomic operation itself, not a critical section of the program, and
// stays visible as recorded.
func atomicRecords(tr *trace.Trace, hide func(trace.Op) bool) []bool {
	var rec []bool
	for i := range tr.Events {
		e := &tr.Events[i]
		if e.Op != trace.OpAcquire || e.Obj&trace.AtomicLockBit == 0 {
			continue
		}
		// The goroutine's next events: the atomic op on the word, then the
		// data access, then the Release.
		var own []int
		for j := i + 1; j < len(tr.Events) && len(own) < 3; j++ {
			if tr.Events[j].G == e.G {
				own = append(own, j)
			}
		}
		if len(own) < 3 {
			continue
		}
		a, d, r := &tr.Events[own[0]], &tr.Events[own[1]], &tr.Events[own[2]]
		if !a.Op.IsAtomic() || a.Obj|trace.AtomicLockBit != e.Obj || hide(a.Op) ||
			!d.Op.IsAccess() || d.Obj != a.Obj || r.Op != trace.OpRelease || r.Obj != e.Obj {
			continue
		}
		if rec == nil {
			rec = make([]bool, len(tr.Events))
		}
		rec[i], rec[own[2]] = true, true
	}
	return rec
}

// untraceRegions makes tr incomplete by rule "region" or "locks" (see the
// package comment): each outermost critical section of each goroutine
// (Acquire to Release of one lock in one frame), and outside those each
// single event whose op hide reports, becomes a BarrierPair whose D lists
// every object the region touches. hide must report the lock operations
// (an Acquire or Release whose section is not a region is always a
// single-event region); the other synchronization events it does not
// report stay visible outside critical sections, and so does the private
// lock around each atomic operation the front end recorded
// (atomicRecords) when hide does not report the atomic op. isSyncOp gives
// rule "region", isLockOp rule "locks". It returns the new trace and the
// number of regions replaced.
func untraceRegions(tr *trace.Trace, balancedLocksInD bool, hide func(trace.Op) bool) (*trace.Trace, int) {
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
	atomicRec := atomicRecords(tr, hide)
	isAtomicRec := func(i int) bool { return atomicRec != nil && atomicRec[i] }
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
			if isAtomicRec(i) {
				break
			}
			held[g] = append(held[g], open{acq: i, frame: top(g), obj: e.Obj})
		case trace.OpRelease:
			if isAtomicRec(i) {
				break
			}
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
	touches := func(op trace.Op) bool { return op.IsAccess() || isSyncOp(op) }
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
		case (hide(e.Op) || isLockOp(e.Op)) && !isAtomicRec(i):
			out.Events = appendLone(out.Events, e)
			n++
		default:
			out.Events = append(out.Events, e)
		}
	}
	return out, n
}

// untraceEvents makes tr incomplete by rule "chans": each event whose op
// hide reports becomes a BarrierPair of its own, with D = {its object};
// every other event stays as recorded. It returns the new trace and the
// number of events replaced.
func untraceEvents(tr *trace.Trace, hide func(trace.Op) bool) (*trace.Trace, int) {
	out := &trace.Trace{M: tr.M, Events: make([]trace.Event, 0, len(tr.Events))}
	n := 0
	for _, e := range tr.Events {
		if !hide(e.Op) {
			out.Events = append(out.Events, e)
			continue
		}
		out.Events = appendLone(out.Events, e)
		n++
	}
	return out, n
}

// appendLone appends e made untraced on its own: a BarrierPair with
// D = {e's object} in its place.
func appendLone(out []trace.Event, e trace.Event) []trace.Event {
	return append(out,
		trace.Event{Seq: e.Seq, G: e.G, Op: trace.OpMethodBegin, Obj: regionObj, Site: e.Site, Addrs: []uint64{e.Obj}},
		trace.Event{Seq: e.Seq, G: e.G, Op: trace.OpMethodEnd, Obj: regionObj, Site: e.Site})
}

// regionObj names the helper an untraced region stands for in
// MethodBegin/MethodEnd (no function of the trace: the region has none).
const regionObj = 0
