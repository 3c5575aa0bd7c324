// Package anomaly is PECAN (Huang and Zhang, "Persuasive prediction of
// concurrency access anomalies", ISSTA'11) offline: it predicts access
// anomalies from one recorded trace and generates for each a "bug
// hatching clip", a schedule that makes it happen.
//
// # Phases
//
//   - Attributes (§4.1, NewModel): for every event the locks held, the
//     atomic region it belongs to (outermost wins; critical sections,
//     RegionBegin/End annotations, and functions marked by
//     Options.AtomicFunc; fork, join and the message ops snd/rcv bound
//     regions, as wait/notify do in the paper), its position in its
//     goroutine, and the goroutine's stable creation-order name (g0, g0.1,
//     g0.1.2: PECAN §7 identifies threads the same way).
//   - Graph (§4.2-§5.1): the partial order relation through communication
//     events only (fork/join, snd→rcv, atomic store/RMW → load/RMW, the
//     untraced-goroutine rule: detect/clock's NoLockEdges relation, kept as
//     per-goroutine clock snapshots taken when an edge arrives), and
//     indices by address, goroutine and region. Two events are independent
//     when they hold no common lock (in write mode by one of them) and are
//     not ordered: the hybrid condition, the same as detect/lockset's
//     hybrid detector.
//   - Search (§5.2, Find): patterns [E, T, SV, AR, AT] (Pattern, Builtin,
//     ParsePatterns) are matched on the indices. Data races use the hybrid
//     detector's per-address latest-access entries, so their candidate site
//     pairs are exactly hybrid's; other patterns are matched by
//     backtracking over their steps, each step bound to every event of
//     the index in turn (not only the first of each statement: a
//     statement run both under a lock and outside it can interleave only
//     outside; Options.SiteEvents bounds the runs of one statement tried
//     per enumeration, still trying one with a new lockset, and counts
//     the others in Stats as site_events_skipped). Candidates pass the mutation condition
//     (Algorithm 1; Algorithm 2 generalized to any pattern). The
//     backtracking applies the partial-order part of that condition as
//     soon as a step is bound: an event ordered before an earlier step of
//     another goroutine, or after the last event a later step of another,
//     already bound, goroutine (or region) can have, is not tried, and
//     whole regions are skipped by binary search on the clocks. This only
//     removes candidates the condition would reject and keeps the order of
//     the others, so the anomalies are those of the plain backtracking
//     (a differential test checks it); on long traces the search examines
//     a few hundred thousand partial candidates per pattern where the
//     plain one needs hundreds of millions.
//   - Schedules (§6): the original trace is replayed in its own order while
//     the anomaly's goroutines are held at hold points (the outermost-lock
//     node, as Algorithms 3 and 4 move it), stopping at the last anomaly
//     event. The replay up to the first hold point is the trace itself: it
//     is computed once (with the lock table at checkpoints) and each
//     schedule starts there. Each schedule is then checked against the
//     trace's constraints by an independent checker; an anomaly whose
//     schedule fails is pruned (Theorem 1: with nested locks this only
//     happens to false ones) unless Options.KeepInfeasible.
//   - Clips: a schedule runs the whole trace prefix before the anomaly, so
//     on a long trace a clip lists most of the trace. Beyond FullClipSteps
//     events a clip is compact (Clip.Compact, Options.Clips): it leaves out
//     the data accesses and function entries and exits that are not
//     anomaly events and keeps every synchronization event of each
//     goroutine's prefix, with each event's index in its goroutine.
//
// One anomaly is reported per pattern and site combination (races: per
// unordered site pair, like finding.Collector), with the first instance
// whose clip is feasible. Everything is potential evidence until a
// controlled re-execution (racekit hatch) confirms it.
//
// Differences from the paper, on purpose: Algorithm 1 as printed reads
// l(i) ∩ l(j) ≠ ∅, a typo for = ∅ (§4.2). The race clip runs the pair in
// the order the trace did not show when feasible (Figure 1), else in the
// observed order. Regions and the eleven ASV patterns: see Options and
// Builtin.
package anomaly
