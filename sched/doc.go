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
// recorded by name and followed again.
//
// # Strategies
//
//   - Random picks an enabled goroutine uniformly, from one seeded PCG.
//   - RaceFuzzer is Sen's RaceFuzzer (PLDI'08, Algorithms 1 and 2): a
//     goroutine about to execute a statement of the racing pair is
//     postponed until another one is about to access the same location at
//     the other statement (one of them writing); the race is then created,
//     reported, and resolved by a coin flip.
//   - Replay follows a recorded Schedule step by step and reports where the
//     run departs from it.
//   - Clip follows a partial schedule, a list of (goroutine, n-th
//     scheduling point of that goroutine) steps, and runs freely (Random)
//     elsewhere; a goroutine that reaches a step with another operation is
//     reported.
//
// All random choices of one run come from one PCG source seeded with the
// run's seed, so the same seed and the same program input give the same
// schedule.
//
// # Schedule files
//
// A run records its schedule as text, one line per record, written as the
// run goes so that a run that dies leaves what it did (ReadSchedule,
// FormatStep, FormatNote): a header (strategy, seed, pair), then "step"
// lines (the goroutine chosen, its operation, site and point index) and
// "note" lines (a race created, a divergence, a deadlock).
package sched
