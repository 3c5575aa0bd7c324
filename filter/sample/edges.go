package sample

import "github.com/racekit/racekit/trace"

// The names a trace gives the runtime's global sync objects (package rt):
// every call of an I/O write releases the first and every I/O read
// acquires it, and likewise timers and contexts. They over-approximate
// edges the Go race detector sees inside the runtime.
const (
	IOName       = "racekit: I/O"
	TimersName   = "racekit: timers"
	ContextsName = "racekit: contexts"
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
		case IOName, TimersName, ContextsName:
			objs[n.Obj] = true
		}
	}
	return objs
}

// Edges drops the synchronization events that add no happens-before edge,
// on the objects it is given. A sampled run (package rt) applies it to
// every sync object as it records: I/O-bound code releases or acquires the
// global objects on every call, and the stages of a channel pipeline send
// and receive in bursts, with nothing sampled between. An event of
// goroutine g on object o is dropped when it is:
//
//   - a SyncRelease right after g's own kept SyncRelease of o (g's
//     previous event): o's clock already holds g's, which has not grown
//     since, so every acquire after it learns nothing more;
//   - a SyncAcquire with no kept SyncRelease of o since g's last kept
//     SyncAcquire of o (or ever, if none): o's clock has not grown since
//     g joined it, so g learns nothing.
//
// So the happens-before order of the kept events is that of all of them
// (releases merge into o as in every detector of racekit), and hb,
// fasttrack, lockset and hybrid report the same races with and without
// it (TestEdgesKeepRaces). Locks are not touched: an Acquire and Release
// pair up. Not for the predictive detectors or PECAN's clips: they count
// synchronization events (sched.Positional).
type Edges struct {
	elide  func(obj uint64) bool
	ver    map[uint64]uint64    // per object: kept releases
	relOf  map[trace.GID]uint64 // g's previous event was a kept release of this object
	acqVer map[edgeKey]uint64
	st     EdgeStats
}

type edgeKey struct {
	g   trace.GID
	obj uint64
}

// EdgeStats counts what an Edges saw and dropped.
type EdgeStats struct {
	Releases, Acquires               int // on the objects it elides
	DroppedReleases, DroppedAcquires int
}

// NewEdges returns an Edges for the objects elide accepts.
func NewEdges(elide func(obj uint64) bool) *Edges {
	return &Edges{elide: elide, ver: map[uint64]uint64{}, relOf: map[trace.GID]uint64{}, acqVer: map[edgeKey]uint64{}}
}

// Stats returns the counts so far.
func (f *Edges) Stats() EdgeStats { return f.st }

// Keep reports whether e stays, given the events before it in trace order
// (every event of the trace goes through Keep, in order). A dropped event
// is as if it were not in the trace: it does not stand between two
// releases.
func (f *Edges) Keep(e *trace.Event) bool {
	if (e.Op != trace.OpSyncRelease && e.Op != trace.OpSyncAcquire) || !f.elide(e.Obj) {
		delete(f.relOf, e.G)
		return true
	}
	if e.Op == trace.OpSyncRelease {
		f.st.Releases++
		if o, ok := f.relOf[e.G]; ok && o == e.Obj {
			f.st.DroppedReleases++
			return false
		}
		f.ver[e.Obj]++
		f.relOf[e.G] = e.Obj
		return true
	}
	f.st.Acquires++
	k := edgeKey{e.G, e.Obj}
	v := f.ver[e.Obj]
	if v == f.acqVer[k] {
		f.st.DroppedAcquires++
		return false
	}
	f.acqVer[k] = v
	delete(f.relOf, e.G)
	return true
}
