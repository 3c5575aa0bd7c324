package text

import "github.com/racekit/racekit/trace"

// RAPIDReader reads an STD trace as RAPID means it. RAPID starts every
// thread with a clock of its own, concurrent with all the others until a
// fork, join or lock orders them; racekit takes a goroutine with no fork as
// born in untraced code, after everything before it (docs/semantics.md),
// so an STD trace from another tool, with no fork lines, would show no race
// at all. The reader gives each thread that runs without a fork one from a
// root thread of its own (named "STD root", which does nothing else) just
// before its first event: a fork that orders nothing, as RAPID's empty
// clocks. The STD writer leaves those forks out, so a trace read and
// written again is the same text.
type RAPIDReader struct {
	r *STDReader

	seen    []bool // per GID: has run, or was forked
	root    trace.GID
	hasRoot bool
	pending trace.Event // the event a synthetic fork went before
	hasPend bool
	seq     uint64
}

// STDRootName names the thread a RAPIDReader adds, which forks the threads
// that have no fork.
const STDRootName = "STD root"

// NewRAPIDReader reads r's trace with RAPID's threads.
func NewRAPIDReader(r *STDReader) *RAPIDReader { return &RAPIDReader{r: r} }

// Meta returns the tables of the events read so far, the root included.
func (r *RAPIDReader) Meta() *trace.Meta { return r.r.Meta() }

// Warnings says what the reader skipped: a last line that is cut off.
func (r *RAPIDReader) Warnings() []string { return r.r.Warnings() }

// Next reads the next event; Seq counts the forks added too.
func (r *RAPIDReader) Next(e *trace.Event) error {
	if r.hasPend {
		// pending's Addrs alias the parser's buffer, untouched since.
		*e, r.hasPend = r.pending, false
		e.Seq, r.seq = r.seq, r.seq+1
		return nil
	}
	if err := r.r.Next(e); err != nil {
		return err
	}
	if e.Op == trace.OpFork {
		r.markSeen(e.Child())
	}
	if !r.markSeen(e.G) && r.Meta().Goroutine(e.G).Parent == trace.NoParent {
		if err := r.forkFromRoot(e); err != nil {
			return err
		}
	}
	e.Seq, r.seq = r.seq, r.seq+1
	return nil
}

// markSeen marks g and reports whether it was marked already.
func (r *RAPIDReader) markSeen(g trace.GID) bool {
	for int(g) >= len(r.seen) {
		r.seen = append(r.seen, false)
	}
	was := r.seen[g]
	r.seen[g] = true
	return was
}

// forkFromRoot turns e, the first event of a thread with no fork, into the
// root's fork of that thread, and keeps e for the next call.
func (r *RAPIDReader) forkFromRoot(e *trace.Event) error {
	m := r.Meta()
	if !r.hasRoot {
		g, err := r.r.r.newGID()
		if err != nil {
			return err
		}
		if err := m.DefineGoroutine(trace.Goroutine{ID: g, Parent: trace.NoParent, Site: trace.NoSite, Name: STDRootName}); err != nil {
			return r.r.r.errorf("%v", err)
		}
		r.root, r.hasRoot = g, true
		r.markSeen(g)
	}
	child := e.G
	m.Goroutines[child].Parent = r.root
	r.pending, r.hasPend = *e, true
	*e = trace.Event{G: r.root, Op: trace.OpFork, Site: trace.NoSite, Obj: uint64(child)}
	return nil
}
