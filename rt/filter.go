package rt

import (
	"fmt"
	"os"

	"github.com/racekit/racekit/filter/tree"
	"github.com/racekit/racekit/trace"
)

// TREE while recording (thesis ch. 3; package filter/tree), configured by
// the environment:
//
//	RACEKIT_FILTER=tree        drop the accesses TREE finds redundant
//	RACEKIT_FILTER_FOR=ALGO    the detector that will analyze the trace
//	                           (tree.OptionsFor; default fasttrack, "all"
//	                           for the options sound for every detector)
//
// The filter runs in the writer, on the merged stream in the order it goes
// to the file, just before each event is encoded: the trace on disk is
// what `racekit analyze --filter=tree` would read, and the program's own
// goroutines pay nothing (the writer runs in a goroutine of its own, or in
// one helping it; always under wmu, so the filter needs no lock of its own).
// Seqs stay dense: a dropped event takes none.

var (
	treeOn   bool
	treeOpts tree.Options
	treeF    *tree.Filter // this trace's filter (start makes it)
)

// treeMaxEntries bounds what TREE remembers in the traced process (the
// offline default is 4M entries); forgetting only makes it keep more.
const treeMaxEntries = 1 << 20

// configureFilter reads the filter environment; an unknown filter is
// reported and ignored (the trace then has every event, which is safe).
func configureFilter() {
	if err := setFilter(os.Getenv("RACEKIT_FILTER"), os.Getenv("RACEKIT_FILTER_FOR")); err != nil {
		fmt.Fprintf(os.Stderr, "racekit: %v; not filtering\n", err)
	}
}

// setFilter switches TREE on ("tree") or off (""), tuned to the detector
// algo; it takes effect at the next start.
func setFilter(name, algo string) error {
	treeOn = false
	switch name {
	case "":
		return nil
	case "tree":
	default:
		return fmt.Errorf("RACEKIT_FILTER=%q (want tree)", name)
	}
	if algo == "" {
		algo = "fasttrack"
	}
	treeOn, treeOpts = true, tree.OptionsFor(algo)
	treeOpts.MaxEntries = treeMaxEntries
	return nil
}

// newTraceFilter makes the filter of a new trace (start calls it).
func newTraceFilter() {
	treeF = nil
	if treeOn {
		treeF = tree.New(treeOpts)
	}
}

// writeOut encodes the next event of the merged stream, unless TREE drops
// it, with the next Seq: the next trace.GoAtomicSeqs for an atomic
// operation with trace.FlagGoAtomic, whose four events TREE takes one by
// one (it may drop the data access). Called with wmu held.
func writeOut(e *trace.Event) {
	if e.Flags&trace.FlagGoAtomic != 0 {
		if treeF != nil {
			var out [trace.GoAtomicSeqs]trace.Event
			trace.GoAtomicEvents(e, &out)
			for i := range out {
				writeOut(&out[i])
			}
			return
		}
		e.Seq = outSeq + 1
		outSeq += trace.GoAtomicSeqs
	} else {
		if treeF != nil && !treeF.Keep(e) {
			return
		}
		outSeq++
		e.Seq = outSeq
	}
	if err := w.WriteEvent(e); err != nil {
		fail(err)
	}
}
