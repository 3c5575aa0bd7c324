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
	}
	return f
}

// Handle records an allocation that holds asked addresses.
func (f *Finder) Handle(e *trace.Event) {
	lo, hi, ok := e.AllocRange()
	if !ok {
		return
	}
	i, _ := slices.BinarySearchFunc(f.qs, lo, func(q Query, a uint64) int { return cmp.Compare(q.Addr, a) })
	for ; i < len(f.qs) && f.qs[i].Addr < hi; i++ {
		if e.Seq < f.qs[i].Before {
			j := f.order[i]
			f.found[j] = Block{Addr: lo, Size: hi - lo, Site: e.Site, G: e.G, Seq: e.Seq}
			f.ok[j] = true
		}
	}
}

// Finish does nothing: the answers are ready.
func (f *Finder) Finish() {}

// Block returns the answer to query i (as given to New); ok is false when
// no allocation before the access holds the address (a global, a stack
// variable, memory untraced code allocated).
func (f *Finder) Block(i int) (Block, bool) { return f.found[i], f.ok[i] }

// Blocks answers qs from the trace at path, read again (a second pass that
// only looks at allocations).
func Blocks(path string, qs []Query) ([]Block, []bool, error) {
	f, err := tracefile.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fd := New(qs)
	if _, err := detect.Run(f, fd); err != nil {
		return nil, nil, err
	}
	return fd.found, fd.ok, nil
}
