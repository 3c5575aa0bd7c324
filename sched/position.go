package sched

import "github.com/racekit/racekit/trace"

// Positional reports whether an event of op counts in its goroutine's
// position (Point.Ev, ClipStep.Ev); atPair says whether the event's site
// is a statement under test. What counts is what orders a schedule:
// synchronization, goroutine life, atomics, and the accesses at the
// statements under test, all of which have a scheduling point before
// them. Plain accesses elsewhere, function entries and exits,
// allocations, region marks and calls into untraced code do not: they
// vary with the data a run computes (a merge that branches on the values
// a race corrupted, a cache that evicts by the clock), and counting them
// made a clip read off one run depart in the next at the first such
// difference, though nothing it orders had changed.
func Positional(op trace.Op, atPair bool) bool {
	switch op {
	case trace.OpRead, trace.OpWrite:
		return atPair
	case trace.OpReadRange, trace.OpWriteRange:
		// A range counts as the word accesses it stands for, which a
		// trace's reader hands out (rt adds them to its position).
		return false
	case trace.OpFuncEnter, trace.OpFuncExit, trace.OpAlloc, trace.OpRegionBegin, trace.OpRegionEnd,
		trace.OpMethodBegin, trace.OpMethodEnd, trace.OpBlock:
		return false
	}
	return true
}

// Positions returns, for each event of tr, its position among its
// goroutine's events as a controlled run of the same program with the
// statements pair counts them (Point.Ev): a positional event's own
// ordinal among its goroutine's positional events; for any other event,
// the ordinal of the last positional event before it (-1 if none), so
// that a clip step running up to it runs the goroutine through that
// event's point and on to its next one, past the event.
func Positions(tr *trace.Trace, pair SitePair) []int {
	// Whether an access is at the pair depends on its kind (a statement
	// "file:line:col:w" is the write alone), as rt's points do.
	type posKey struct {
		site trace.SiteID
		op   trace.Op
	}
	atPair := make(map[posKey]bool)
	pos := make([]int, len(tr.Events))
	next := map[trace.GID]int{}
	for i := range tr.Events {
		e := &tr.Events[i]
		p := false
		if e.Op == trace.OpRead || e.Op == trace.OpWrite {
			key := posKey{e.Site, e.Op}
			v, ok := atPair[key]
			if !ok {
				s := tr.M.Site(e.Site)
				k := KindRead
				if e.Op == trace.OpWrite {
					k = KindWrite
				}
				v = pair.Stmts(s.File, s.Line, s.Col, k) != 0
				atPair[key] = v
			}
			p = v
		}
		n := next[e.G]
		if Positional(e.Op, p) {
			pos[i] = n
			next[e.G] = n + 1
		} else {
			pos[i] = n - 1
		}
	}
	return pos
}
