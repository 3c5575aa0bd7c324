// Package confirm turns suspected concurrency bugs into confirmed ones by
// controlled re-execution of instrumented test binaries, and says how to
// replay each from its seed: racekit fuzz, hatch and replay are commands
// over it.
//
// A confirmation is a [Campaign]: phase 1 finds candidates (racing
// statement pairs from the hybrid detector on recorded runs, racekit
// vet's warnings or a pairs file; lock-order cycles predicted by
// iGoodlock; split critical sections), phase 2 runs each target's test
// binary under racekit's controlled scheduler with one seed per run and a
// strategy aimed at the candidate: RaceFuzzer (Sen, PLDI'08) for races,
// DeadlockFuzzer (Joshi et al., PLDI'09) for cycles, AtomFuzzer (Park and
// Sen, FSE'08) for split regions. Each run's outcome (a panic, a test
// failure, a deadlock, a timeout) is classified from the run's schedule
// notes and output, and grouped per candidate into a verdict.
//
// A campaign splits into shards ([Shard]): a deterministic share of the
// candidates and baseline seeds each, whose JSON results [MergeFuzz]
// joins into the unsharded campaign's.
package confirm
