// Package text reads and writes racekit's two text trace formats, one
// event per line (docs/trace-formats.md is the user's reference):
//
//   - RAPID's STD format, THREAD|OP(DECOR)|LOC, with ops r, w, acq, rel,
//     fork, join, begin and end, for exchanging traces with RAPID
//     (NewSTDReader, NewSTDWriter);
//
//   - racekit text (.rktx), a superset of STD that expresses every op of
//     the event model (values, read locks, sync objects, atomics,
//     BarrierPairs, function and region boundaries), makes the location
//     optional, and has comments and "#!" directives for metadata; it is
//     the format of hand-written traces in tests (NewTextReader, Parse,
//     NewTextWriter).
//
//     # T0 starts T1; both touch x; T1 reads 5 under lock m.
//     T0|fork(T1)|main.go:10:2
//     T0|w(x=5)|main.go:11:4
//     T1|acq(m)|main.go:20:3
//     T1|r(x=5)|main.go:21:7
//     T1|rel(m)|main.go:22:3
//
// Both formats are read by one parser, in STD mode or with extensions.
// Threads get dense goroutine IDs in order of first mention; a thread first
// mentioned as a fork's child gets the forking thread as parent and the
// fork's site. Variables, locks and every other object share one namespace
// of names, and get IDs 0x1000, 0x1008, ... in order of first use (as
// trace.Builder gives them), with their names in Meta. Locations are
// interned as sites through trace.ParseSiteLabel. Seq counts events from 0.
//
// A file cut off in the middle of a line (its writer crashed) is read up
// to its last whole line: a last line without a newline that does not
// parse is skipped, and the readers' Warnings (trace.Warner) say so. A
// malformed line that ends with a newline is an error, wherever it is.
//
// The readers split lines themselves in a large buffer. The common line
// (no spaces, quotes or call) is parsed by a fast path that finds the
// fields a word at a time, any other by a general parser that also
// reports errors; the two agree on every line the fast path takes. The
// 8-byte words the fast path loads double as keys of the tokens: a small
// direct-mapped cache keyed by them finds the threads, objects and
// locations a stretch of trace keeps using, in front of tables where
// tokens that are a short prefix and a number (RAPID's V12, T3 and integer
// locations) are found by indexing a slice, and others in maps looked up
// without allocating. In front of it all, a cache of whole lines gives the
// event of a line seen before (Seq aside) without parsing it: traces
// repeat lines a lot, and a line's event depends only on its bytes once
// its tokens are known. It turns itself off while lines do not repeat.
// Once the tables hold every name, reading allocates nothing per event.
//
// The racekit text writer is lossless: a trace read from text, written and
// read again is the same trace, IDs included. The STD writer refuses (or,
// when Lossy, drops and counts) the events STD cannot express, rather than
// rewriting them into ops that would change RAPID's verdicts.
package text
