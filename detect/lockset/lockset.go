// Package lockset holds racekit's two imprecise, lockset-based detectors:
//
//   - Eraser (New, detector "lockset"), Savage et al. 1997: a per-address
//     ownership state machine and candidate lockset; it warns once per
//     address whose candidate set becomes empty while shared-modified.
//   - Hybrid (NewHybrid, detector "hybrid"), O'Callahan and Choi 2003 as
//     RaceFuzzer's phase 1 uses it: a pair of accesses races when it holds no
//     common lock and is unordered by happens-before built from fork/join and
//     message edges only (lock edges are deliberately left out).
//
// Both label their findings finding.Potential: false alarms are expected.
// docs/semantics.md says which event gives which edge or lockset change.
//
// Goroutines, the locks each one holds and hybrid's happens-before relation
// are a clock.Tracker's (package clock, shared with the hb detectors):
// Eraser's keeps no clocks (clock.NoEdges), hybrid's builds every edge but
// the lock ones (clock.NoLockEdges). What is here is the lockset half: the
// held locks of each goroutine interned as a small set ID, candidate sets,
// and per-address state.
//
// A lock protects a pair of accesses when both hold it and at least one holds
// it in write mode (an RWMutex read lock protects reads from writes, not
// reads from reads). A lock acquired again while held (ill-formed) stays held
// until its last hold is released, in write mode while any of its holds is.
//
// Ill-formed streams never panic: the events package clock lists (a release
// of a lock not held, a nested acquire, a release in the other mode, which
// drops the hold, a join of a goroutine never seen, a second fork, an event
// of a goroutine after it was joined, ...) are tolerated and counted in
// Stats under "illformed". Goroutine IDs index nothing directly: a stray
// huge GID is one more goroutine.
package lockset

import "github.com/racekit/racekit/detect"

var (
	_ detect.Detector = (*Eraser)(nil)
	_ detect.Stats    = (*Eraser)(nil)
	_ detect.Detector = (*Hybrid)(nil)
	_ detect.Stats    = (*Hybrid)(nil)
)
