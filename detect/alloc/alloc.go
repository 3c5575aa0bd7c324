// Package alloc finds where the objects of raced heap addresses were
// allocated, so that a report can say what an address was ("heap block of
// 96 bytes allocated at ..."), as ThreadSanitizer's reports do. It is a
// detector over a trace's allocation events (trace.OpAlloc, which rt
// records at every allocation of traced code and at std calls with fresh
// results): for each address asked about, it keeps the last allocation
// before a given event whose range holds it. Reports run it as a second
// pass over the trace, for the few addresses that raced.
package alloc

import (
	"cmp"
	"errors"
	"slices"

	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/trace"
	"github.com/racekit/racekit/trace/tracefile"
)

// Block is an allocation: its range, site, goroutine and event.
type Block struct {
	Addr, Size uint64
	Site       trace.SiteID
	G          trace.GID
	Seq        uint64
}

// A Query asks for the allocation of the object at Addr that an access at
// event Before was to: the last allocation before it that holds Addr.
type Query struct {
	Addr, Before uint64
}

// Finder answers queries over one pass of a trace (a detect.Detector).
type Finder struct {
	qs    []Query // sorted by address
	order []int   // qs[i] is query order[i] as given
	found []Block // per query as given
	ok    []bool
	seq   uint64 // the latest event's
	last  uint64 // no query asks about an allocation at or after this event
}

// New returns a Finder for qs.
func New(qs []Query) *Finder {
	f := &Finder{found: make([]Block, len(qs)), ok: make([]bool, len(qs))}
	f.order = make([]int, len(qs))
	for i := range f.order {
		f.order[i] = i
	}
	slices.SortFunc(f.order, func(a, b int) int { return cmp.Compare(qs[a].Addr, qs[b].Addr) })
	for _, i := range f.order {
		f.qs = append(f.qs, qs[i])
		f.last = max(f.last, qs[i].Before)
	}
	return f
}

// Handle records an allocation that holds asked addresses.
func (f *Finder) Handle(e *trace.Event) {
	if e.Seq > f.seq {
		f.seq = e.Seq
	}
	lo, hi, ok := e.AllocRange()
	if !ok {
		return
	}
	f.add(Block{Addr: lo, Size: hi - lo, Site: e.Site, G: e.G, Seq: e.Seq})
}

// add takes allocation b, the latest so far.
func (f *Finder) add(b Block) {
	i, _ := slices.BinarySearchFunc(f.qs, b.Addr, func(q Query, a uint64) int { return cmp.Compare(q.Addr, a) })
	for ; i < len(f.qs) && f.qs[i].Addr-b.Addr < b.Size; i++ {
		if b.Seq < f.qs[i].Before {
			j := f.order[i]
			f.found[j] = b
			f.ok[j] = true
		}
	}
}

// HandleRange ignores a range event: the reader hands ranges on whole
// rather than a word event each (most of a second pass's time otherwise,
// on traces of byte loops), and none is an allocation.
func (f *Finder) HandleRange(*trace.Event) {}

// HandleGoAtomic ignores an atomic operation, whole for the same reason.
func (f *Finder) HandleGoAtomic(*trace.Event) {}

// Finish does nothing: the answers are ready.
func (f *Finder) Finish() {}

// Block returns the answer to query i (as given to New); ok is false when
// no allocation before the access holds the address (a global, a stack
// variable, memory untraced code allocated).
func (f *Finder) Block(i int) (Block, bool) { return f.found[i], f.ok[i] }

// errAnswered stops a second pass past the last event a query asks about.
var errAnswered = errors.New("answered")

// Blocks answers qs from the trace at path, read again (a second pass that
// only looks at allocations, and stops past the latest access asked about).
func Blocks(path string, qs []Query) ([]Block, []bool, error) {
	found, ok, _, err := blocks(path, qs)
	return found, ok, err
}

// blocks is Blocks, which also returns how many events it read.
func blocks(path string, qs []Query) ([]Block, []bool, int64, error) {
	f, err := tracefile.Open(path)
	if err != nil {
		return nil, nil, 0, err
	}
	defer f.Close()
	fd := New(qs)
	n, err := detect.RunChecked(f, func(int64) error {
		if fd.seq >= fd.last {
			return errAnswered
		}
		return nil
	}, fd)
	if err != nil && !errors.Is(err, errAnswered) {
		return nil, nil, n, err
	}
	return fd.found, fd.ok, n, nil
}

// A Log keeps a trace's allocations as it is read, so that a report finds
// its heap blocks without reading the trace again: that second pass was a
// minute of the analysis of a compressor's 12 GB trace (few allocations,
// billions of accesses). It keeps them while they are few: up to LogMax,
// and past logWarm at most one per logDensity events. A trace with more
// (an HTTP service's: an allocation every eight events, 34 MB of blocks
// where its analysis took 50) is read again (Locate), which is cheap for
// a trace that allocates at that rate before its end. The zero Log is
// empty and ready to use.
type Log struct {
	blocks []Block
	over   bool // too many: blocks let go
}

// LogMax bounds a Log: 32 MiB of blocks (a variable for the tests).
var LogMax = 1 << 20

const (
	logWarm    = 1 << 12
	logDensity = 256
)

// Handle keeps an allocation.
func (l *Log) Handle(e *trace.Event) {
	lo, hi, ok := e.AllocRange()
	if !ok || l.over {
		return
	}
	if n := len(l.blocks); n >= LogMax || n >= logWarm && uint64(n) > e.Seq/logDensity {
		l.blocks, l.over = nil, true
		return
	}
	l.blocks = append(l.blocks, Block{Addr: lo, Size: hi - lo, Site: e.Site, G: e.G, Seq: e.Seq})
}

// HandleRange ignores a range event (no allocation), which the reader
// then hands on whole to the detectors beside it.
func (l *Log) HandleRange(*trace.Event) {}

// HandleGoAtomic ignores an atomic operation, whole for the same reason.
func (l *Log) HandleGoAtomic(*trace.Event) {}

// Finish does nothing.
func (l *Log) Finish() {}

// Complete reports whether l holds every allocation of the events it saw.
func (l *Log) Complete() bool { return l != nil && !l.over }

// Locate answers qs: from log if it is complete (it must have seen the
// whole trace, or at least every event before the queries' accesses),
// else from the trace at path, read again (Blocks).
func Locate(path string, log *Log, qs []Query) ([]Block, []bool, error) {
	if !log.Complete() {
		return Blocks(path, qs)
	}
	f := New(qs)
	for _, b := range log.blocks {
		f.add(b)
	}
	return f.found, f.ok, nil
}
