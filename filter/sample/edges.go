package sample

import "github.com/racekit/racekit/trace"

// The names a trace gives the runtime's global sync objects (package rt):
// every call of an I/O write releases the first and every I/O read
// acquires it, and likewise timers, contexts, in-memory pipes, signal
// deliveries and database/sql drivers' callbacks. They over-approximate
// edges the Go race detector sees inside the runtime.
const (
	IOName       = "racekit: I/O"
	TimersName   = "racekit: timers"
	ContextsName = "racekit: contexts"
	PipesName    = "racekit: pipes"
	SignalsName  = "racekit: signals"
	// SQLDriversName: every callback of a database/sql driver of the
	// program acquires it at entry and releases it at return (rt.DriverEnter).
	SQLDriversName = "racekit: database/sql drivers"
)

// GlobalObjects returns the runtime's global sync objects of a trace's
// tables, found by their names (none if m is nil).
func GlobalObjects(m *trace.Meta) map[uint64]bool {
	objs := map[uint64]bool{}
	if m == nil {
		return objs
	}
	for _, n := range m.Names {
		switch n.Name {
		case IOName, TimersName, ContextsName, PipesName, SignalsName, SQLDriversName:
			objs[n.Obj] = true
		}
	}
	return objs
}

// Edges reports which of evs (events in trace order: a trace's, or what a
// filter kept of one) add no happens-before edge, on the objects elide
// accepts: drop[i] for evs[i]. A sampled run (package rt) applies the same
// rule to every sync object as it records: I/O-bound code releases or
// acquires the global objects on every call, the stages of a channel
// pipeline send and receive in bursts, and a goroutine takes its lock
// again and again, with nothing sampled between. An event of goroutine g
// on object o is dropped when it is:
//
//   - a SyncRelease after g's own kept SyncRelease of o with only
//     releases kept between (of other objects, or locks): o's clock
//     already holds g's, which has not grown since but for g's own
//     component, and g has no event at the components it skips, so every
//     acquire after it learns nothing more;
//   - a SyncAcquire with no kept SyncRelease of o since g's last kept
//     SyncAcquire of o (or ever, if none): o's clock has not grown since
//     g joined it, so g learns nothing;
//   - an Acquire of lock o followed by its Release (g's next event), both
//     exclusive, right after g's own kept exclusive Release of o, with no
//     kept Release of o since: the pair learns only g's own clock and
//     hands on a clock that has not grown. Both go, so acquires and
//     releases still pair up, and the pair held no access (lockset and
//     hybrid see the same locksets).
//
// A dropped event is as if it were not in the trace: it does not stand
// between two releases. So the happens-before order of the kept events
// is that of all of them (releases merge into o as in every detector of
// racekit), and hb, fasttrack, lockset and hybrid report the same races
// with and without it (TestEdgesKeepRaces). Not for the predictive
// detectors or PECAN's clips: they count synchronization events
// (sched.Positional).
func Edges(evs []*trace.Event, elide func(obj uint64) bool) (drop []bool, st EdgeStats) {
	drop = make([]bool, len(evs))
	// next[i]: the index of g's next event after evs[i], or -1.
	next := make([]int, len(evs))
	after := map[trace.GID]int{}
	for i := len(evs) - 1; i >= 0; i-- {
		j, ok := after[evs[i].G]
		if !ok {
			j = -1
		}
		next[i] = j
		after[evs[i].G] = i
	}
	type kept struct {
		op    trace.Op
		obj   uint64
		flags trace.Flags
	}
	prev := map[trace.GID]kept{}      // g's previous kept event
	ver := map[uint64]uint64{}        // per object: kept SyncReleases
	acqVer := map[edgeKey]uint64{}    // per goroutine and object: ver at its last kept SyncAcquire
	lockRel := map[uint64]trace.GID{} // per lock: the goroutine of its last kept Release
	// quiet[g][o]: g kept only releases since its last kept SyncRelease of o.
	quiet := map[trace.GID]map[uint64]bool{}
	for i, e := range evs {
		if drop[i] {
			continue // the Release of a dropped pair
		}
		p := prev[e.G]
		switch {
		case e.Op == trace.OpSyncRelease && elide(e.Obj):
			st.Releases++
			if quiet[e.G][e.Obj] {
				st.DroppedReleases++
				drop[i] = true
				continue
			}
			ver[e.Obj]++
		case e.Op == trace.OpSyncAcquire && elide(e.Obj):
			st.Acquires++
			k := edgeKey{e.G, e.Obj}
			v := ver[e.Obj]
			if v == acqVer[k] {
				st.DroppedAcquires++
				drop[i] = true
				continue
			}
			acqVer[k] = v
		case e.Op == trace.OpAcquire && e.Flags&trace.FlagReadLock == 0 && elide(e.Obj):
			g, ok := lockRel[e.Obj]
			if j := next[i]; j >= 0 && p == (kept{trace.OpRelease, e.Obj, 0}) && ok && g == e.G &&
				evs[j].Op == trace.OpRelease && evs[j].Obj == e.Obj && evs[j].Flags&trace.FlagReadLock == 0 {
				st.DroppedLockPairs++
				drop[i], drop[j] = true, true
				continue
			}
		case e.Op == trace.OpRelease:
			lockRel[e.Obj] = e.G
		}
		prev[e.G] = kept{e.Op, e.Obj, e.Flags & trace.FlagReadLock}
		switch {
		case e.Op == trace.OpSyncRelease && elide(e.Obj):
			if quiet[e.G] == nil {
				quiet[e.G] = map[uint64]bool{}
			}
			quiet[e.G][e.Obj] = true
		case e.Op != trace.OpSyncRelease && e.Op != trace.OpRelease:
			clear(quiet[e.G]) // g's clock may have grown
		}
	}
	return drop, st
}

type edgeKey struct {
	g   trace.GID
	obj uint64
}

// EdgeStats counts what Edges saw and dropped.
type EdgeStats struct {
	Releases, Acquires               int // SyncReleases and SyncAcquires on the objects it elides
	DroppedReleases, DroppedAcquires int
	DroppedLockPairs                 int // each an Acquire and a Release
}

// Dropped is the number of events dropped.
func (st EdgeStats) Dropped() int {
	return st.DroppedReleases + st.DroppedAcquires + 2*st.DroppedLockPairs
}

// EdgesKept returns the events of tr that Edges keeps, on every object.
func EdgesKept(tr *trace.Trace) (*trace.Trace, EdgeStats) {
	evs := make([]*trace.Event, len(tr.Events))
	for i := range tr.Events {
		evs[i] = &tr.Events[i]
	}
	drop, st := Edges(evs, func(uint64) bool { return true })
	out := &trace.Trace{M: tr.M}
	for i, d := range drop {
		if !d {
			out.Events = append(out.Events, tr.Events[i])
		}
	}
	return out, st
}
