// Package sched holds racekit's scheduling strategies: the decisions a
// controlled scheduler makes when it runs an instrumented Go program one
// goroutine at a time. Package rt (the runtime linked into instrumented
// programs) drives them: at each scheduling point it knows which traced
// goroutines are waiting, what each is about to do (a Point: its Kind,
// object and site) and which of them can proceed without blocking
// (Enabled); it asks the Strategy which one runs next, and that goroutine
// alone runs until its next scheduling point.
//
// Because rt imports it, sched imports only the standard library and the
// std-only package trace.
//
// # Goroutine names
//
// A goroutine is named by creation order, as PECAN names threads (and as
// package detect/anomaly names them in clips): goroutines born in code that
// is not traced (the main goroutine, the testing framework's) are roots g0,
// g1, ... in the order they reach their first hook, and the k-th goroutine
// (k from 1) that goroutine P starts with an instrumented go statement is
// P.k. Under a controlled schedule the same program with the same schedule
// gives every goroutine the same name in every run, so a schedule can be
// recorded by name and followed again. Names gives the names of a
// recorded trace's goroutines.
//
// # Strategies
//
//   - Random picks an enabled goroutine uniformly, from one seeded PCG.
//   - RaceFuzzer is Sen's RaceFuzzer (PLDI'08, Algorithms 1 and 2): a
//     goroutine about to execute a statement of the racing pair is
//     postponed until another one is about to access the same location at
//     the other statement (one of them writing); the race is then created,
//     reported, and resolved by a coin flip. A race counts only with one
//     goroutine at each of the pair's two statements, at least one
//     writing, on overlapping byte ranges (Point.Stmt, Point.Size). A
//     statement may name one access, file:line:col:r or file:line:col:w,
//     or, given by line only, every access on the line.
//   - DeadlockFuzzer (deadlock.go) pauses a goroutine about to take a lock
//     at a lock-order cycle's request while it holds the lock taken at
//     that link's other statement, keeping each goroutine's held locks
//     from the lock points it lets run. It is a Pauser, so that rt offers
//     a timer while the only enabled goroutines are paused or about to be
//     (racekit fuzz -deadlocks, cmd/racekit/deadfuzz.go).
//   - AtomFuzzer (atomfuzz.go) pauses a goroutine about to take a lock at
//     a split region's second section after its first, and notes a
//     violation when another goroutine takes the lock at the first
//     meanwhile (racekit fuzz -atomicity, cmd/racekit/atomfuzz.go).
//   - Replay follows a recorded Schedule step by step and reports where the
//     run departs from it. DigestSteps is a schedule's hash, so that a
//     replay can be checked against a run nobody kept.
//   - Clip follows a partial schedule, a list of (goroutine, n-th
//     scheduling point of that goroutine) steps, and runs freely (Random)
//     elsewhere; a goroutine that reaches a step with another operation is
//     reported. It follows PECAN's clips and predicted races' witnesses.
//
// All random choices of one run come from one PCG source seeded with the
// run's seed, so the same seed and the same program input give the same
// schedule.
//
// A recording may run under a strategy too (racekit test
// --schedule=random, fuzz --record-random, hatch --record-seed, where
// --record-preempt, rt's RACEKIT_SCHED_PREEMPT, also makes data accesses
// points at random, drawn from the seed). rt records a controlled run's
// events in the order they happen, so its races are an execution's.
//
// # Positions
//
// A clip's steps are given as (goroutine, position): a point carries the
// goroutine's position Point.Ev, which counts only its positional events
// (Positional: synchronization, goroutine life, atomics and the accesses
// at the statements under test; Positions gives a recorded trace's), so
// plain accesses that vary with the data do not move a clip. rt tells a
// Wanter when the goroutine it waits for is gone (a root that ended
// without a point), and a Parker when that goroutine is parked inside its
// last point's operation.
//
// # Schedule files
//
// A run records its schedule as text, one line per record, written as the
// run goes so that a run that dies leaves what it did (ReadSchedule,
// FormatStep, FormatNote): a header (strategy, seed, pair), then "step"
// lines (the goroutine chosen, its operation, site and point index) and
// "note" lines (a race created, a divergence, a deadlock).
package sched
