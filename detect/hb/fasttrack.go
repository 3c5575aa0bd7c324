package hb

import (
	"slices"

	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/detect/clock"
	"github.com/racekit/racekit/detect/shadow"
	"github.com/racekit/racekit/detect/vc"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/trace"
)

// FastTrack is the FastTrack detector ("fasttrack"; Flanagan and Freund,
// PLDI'09, Section 3): per address a write epoch W_x and a read state R_x
// that is an epoch, or a vector clock while the reads are shared
// (concurrent). Each epoch keeps the site and Seq of the access that set it
// (per goroutine entry in read-shared mode) so a finding names both sides.
//
// Its guarantee (the paper's Theorem 1) is per address: it reports a race
// on x exactly when hb does, first at the same access. After the first
// race on x, it may report fewer site pairs on x than hb.
type FastTrack struct {
	k      clock.Tracker
	sink   finding.Sink
	shadow shadow.Mem[ftShadow]
	shared statePool[readShared] // read-shared states; cells refer to them by index+1
	// atomics: the atomic accesses of words since their last plain write
	// (cells refer to them by index+1).
	atomics statePool[atomicAccesses]
	race    finding.Race // reused report buffer
	wide    []wideRef    // the refs too large to pack (accRef)
	// haveWhole: a granule has been kept whole (rangeBytes) since the
	// detector started; until then no access looks for one to split.
	haveWhole bool
	// collect: report appends to pend instead of reporting (wholeAccess).
	collect bool
	pend    []pendingRace
	// extra: what a rule counter adds beyond 1 (7 in wholeAccess, whose
	// access of one cell stands for eight).
	extra int64

	reads, writes, races                                                     int64
	readSameEpoch, readSharedSameEpoch, readExclusive, readShare, readShared int64
	writeSameEpoch, writeExclusive, writeShared                              int64
	atomicReads, atomicWrites, atomicSameEpoch                               int64
	granulesWhole, rangeBytesApart                                           int64
}

// Forget drops every address's state, its read-shared clocks and atomic
// accesses with it (detect.Forgetter); the goroutines', locks' and sync
// objects' clocks stay.
func (d *FastTrack) Forget() {
	d.shadow = shadow.Mem[ftShadow]{}
	d.wide = nil
	d.shared = statePool[readShared]{}
	d.atomics = statePool[atomicAccesses]{}
}

// ftShadow is one address's FastTrack state.
type ftShadow struct {
	w, r       vc.Epoch // W_x; R_x when rs == 0 (sharedRead otherwise)
	wRef, rRef accRef   // W_x's and R_x's event: its seq and site, for the report
	rs         int32    // 1 + index into FastTrack.shared while read-shared, else 0
	at         int32    // 1 + index into FastTrack.atomics while it has atomic accesses, else 0; atWhole
}

// accRef is an access's seq and site in one word, seq above the site's
// refSiteBits: a cell is 40 bytes where the two apart made it 48, for
// every word the program touched (an analysis's memory is mostly cells).
// A seq or site too large to fit (2^39 events, 2^24 sites) is kept in
// FastTrack.wide, and the ref, with refWide set, holds its index.
type accRef uint64

const (
	refSiteBits = 24
	refWide     = accRef(1) << 63
)

type wideRef struct {
	seq  uint64
	site trace.SiteID
}

// ref packs the seq and site of e.
func (d *FastTrack) ref(e *trace.Event) accRef {
	if e.Seq < 1<<(63-refSiteBits) && uint64(e.Site) < 1<<refSiteBits {
		return accRef(e.Seq<<refSiteBits | uint64(e.Site))
	}
	d.wide = append(d.wide, wideRef{e.Seq, e.Site})
	return refWide | accRef(len(d.wide)-1)
}

// unref is the seq and site r packs.
func (d *FastTrack) unref(r accRef) (seq uint64, site trace.SiteID) {
	if r&refWide != 0 {
		w := d.wide[r&^refWide]
		return w.seq, w.site
	}
	return uint64(r >> refSiteBits), trace.SiteID(r & (1<<refSiteBits - 1))
}

// reportRef is report of the earlier access epoch at r.
func (d *FastTrack) reportRef(e *trace.Event, prev vc.Epoch, r accRef, write bool) {
	seq, site := d.unref(r)
	d.report(e, prev, site, seq, write)
}

// atWhole is ftShadow.at of the aligned cell of a granule kept whole: the
// eight bytes from its address have the one state the cell holds (with
// at 0), and the seven unaligned ones have no cell (rangeBytes).
const atWhole = -1

// atomicAccesses is a word's atomic accesses since its last plain write:
// its atomic writes and its atomic reads (the accesses the Go front end
// records inside atomic operations). As in Go's race detector they race
// with plain accesses only, never with each other, and atomic operations
// need not be ordered with one another (two loads are not), so each kind
// is kept as FastTrack keeps reads (atomicSet): W_x and R_x stay the plain
// accesses'. A plain write checks both and forgets them: an access after
// it is ordered after every atomic access it is ordered after, or a race
// was reported.
type atomicAccesses struct {
	w, r atomicSet
	addr uint64 // the address whose cell refers to it; see sweepAtomics
	live bool   // not free in FastTrack.atomics
}

// of returns the set of atomic writes or of atomic reads.
func (a *atomicAccesses) of(write bool) *atomicSet {
	if write {
		return &a.w
	}
	return &a.r
}

// atomicSet is one kind of a word's atomic accesses, as R_x is its plain
// reads: an epoch while each access is ordered after the one before (the
// latest then stands for all: what is unordered with an earlier one is
// unordered with it), a read-shared state of FastTrack.shared (by index
// + 1 in rs) once two are concurrent.
type atomicSet struct {
	e   vc.Epoch // the latest access while rs == 0 (0: none)
	ref accRef   // its seq and site
	rs  int32
}

// sharedRead is the value of ftShadow.r while R_x is a vector clock: no
// real epoch equals it, so READ SAME EPOCH never fires in shared mode.
const sharedRead = ^vc.Epoch(0)

// readShared is R_x in read-shared mode: the last read of each goroutine
// that read x since the last write, with that read's site and Seq, by the
// goroutine's clock.Thread.ID. It is sparse (entries sorted by ID): a word
// is mostly read by a few goroutines, and a dense clock, site and seq per
// ID cost 16 bytes per ID for every read-shared word (watermill's pub/sub
// tests, where hundreds of subscribers read each message, ran out of
// memory).
//
// A read by a goroutine that took over the ID of one that ended (package
// clock, "Recycled IDs") does not replace the earlier owner's read: that
// one goes to old, so that a write racing with both reports both, as with
// IDs apart.
type readShared struct {
	ents   []sharedEnt
	old    []sharedEnt
	addr   uint64 // the address whose cell refers to it; see sweep
	live   bool   // not free in FastTrack.shared
	atomic bool   // a set of atomic accesses (atomicSet), not R_x
}

// sharedEnt is one goroutine's last read in R_x (in readShared.old, a
// read of an earlier owner of its ID).
type sharedEnt struct {
	tid, clock uint32
	ref        accRef // the read's seq and site
}

// find returns the index of tid's entry, or where it goes: a binary
// search by hand (slices.BinarySearchFunc's comparison through a func
// value was 15% of the analysis of a concurrent map's trace, its words
// read by a hundred goroutines: BenchmarkReadSharedFind). First a guess:
// package clock hands out the lowest free IDs, so the readers of a word
// are mostly a run of consecutive IDs, each at its offset from the first
// (the search was still 14% of the analysis of puzpuzpuz/xsync's
// TestMapParallelDeleteMatching).
func (rs *readShared) find(tid uint32) (int, bool) {
	ents := rs.ents
	if len(ents) > 0 && tid >= ents[0].tid {
		if g := uint(tid - ents[0].tid); g < uint(len(ents)) && ents[g].tid == tid {
			return int(g), true
		}
	}
	lo, hi := 0, len(ents)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if ents[m].tid < tid {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(ents) && ents[lo].tid == tid
}

// get returns tid's clock in R_x (0: none).
func (rs *readShared) get(tid uint32) uint32 {
	if i, ok := rs.find(tid); ok {
		return rs.ents[i].clock
	}
	return 0
}

// set makes the read c@tid at ref the latest of tid's owner, whose first
// clock on tid is base.
func (rs *readShared) set(tid uint32, base, clock uint32, ref accRef) {
	i, ok := rs.find(tid)
	if !ok {
		rs.ents = slices.Insert(rs.ents, i, sharedEnt{tid: tid})
	}
	e := &rs.ents[i]
	if e.clock != 0 && e.clock < base {
		rs.old = append(rs.old, *e)
	}
	e.clock, e.ref = clock, ref
}

var (
	_ detect.Detector  = (*FastTrack)(nil)
	_ detect.Stats     = (*FastTrack)(nil)
	_ detect.Forgetter = (*FastTrack)(nil)
)

// NewFastTrack returns a FastTrack detector reporting into sink (nil
// discards findings).
func NewFastTrack(sink finding.Sink) *FastTrack { return newFastTrack(sink, true) }

// newFastTrack is NewFastTrack; recycle false keeps one clock ID per
// goroutine (the tests' baseline).
func newFastTrack(sink finding.Sink, recycle bool) *FastTrack {
	if sink == nil {
		sink = finding.SinkFunc(func(*finding.Race) {})
	}
	d := &FastTrack{
		k:    clock.New(clock.AllEdges),
		sink: sink,
		race: finding.Race{Detector: "fasttrack", Evidence: finding.Observed},
	}
	if recycle {
		d.k.Recycle() // epochs of accesses only; readShared keeps old owners' reads
	}
	d.k.GoAtomics() // atomics as Go's race detector orders them; atomicAccesses
	return d
}

// Handle processes one event.
func (d *FastTrack) Handle(e *trace.Event) {
	t := d.k.Running(e)
	if t == nil {
		t = d.k.Start(e.G)
	}
	switch e.Op {
	case trace.OpRead, trace.OpWrite:
		d.access(t, e)
	case trace.OpAlloc:
		if lo, hi, ok := e.AllocRange(); ok {
			if d.haveWhole { // a granule whole across an end keeps its other bytes
				if lo&7 != 0 {
					d.split(lo &^ 7)
				}
				if hi&7 != 0 {
					d.split(hi &^ 7)
				}
			}
			d.shadow.Clear(lo, hi)
			d.shared.noteClear()
			d.atomics.noteClear()
		}
		d.k.Sync(t, e) // a channel's message state (clock.Tracker.Sync)
	default:
		d.k.Sync(t, e)
	}
}

// HandleRange processes a range event as Handle processes the word
// accesses it stands for (detect.RangeHandler), with its goroutine looked
// up once.
func (d *FastTrack) HandleRange(e *trace.Event) {
	t := d.k.Running(e)
	if t == nil {
		t = d.k.Start(e.G)
	}
	if span := trace.Span(e.Value); !t.InAtomicAccess() {
		switch {
		case e.Obj&7 == 0 && span.Stride()&7 == 0 && !span.Sparse():
			d.rangeWords(t, e, span.Words(), 1)
			return
		case e.Obj&7 == 0 && span.Stride()&7 == 0:
			d.rangeWords(t, e, span.Count(), span.Stride()/8) // a sparse span: a word of each element
			return
		case span.Stride() == 1:
			d.rangeBytes(t, e, span.Count())
			return
		}
	}
	var x trace.RangeExpander
	w := *e
	x.Start(&w)
	for {
		d.access(t, &w)
		if !x.Next(&w) {
			return
		}
	}
}

// rangeWords is HandleRange of n aligned words from e.Obj, step words
// apart (elements a multiple of 8 bytes wide: every word of each, step 1;
// or the first word of each, a sparse span: a stencil's every other
// element), outside any atomic operation: their cells a page at a time
// (shadow.Mem.Run, Strided), each
// access's same-epoch rule checked in the loop, the word event made only
// for the others. A copy that shifts a slice's tail writes the same words
// again and again in one epoch (an insertion into a sorted slice: most of
// prometheus/client_golang's summary tests), which a lookup and an event
// per word made most of the analysis.
func (d *FastTrack) rangeWords(t *clock.Thread, e *trace.Event, n, step uint64) {
	w := trace.Event{Seq: e.Seq, G: e.G, Op: e.Op.WordOp(), Flags: trace.FlagValueUnknown, Site: e.Site}
	epoch := t.Epoch()
	for a := e.Obj; n > 0; {
		var cells []ftShadow
		k := uint64(0)
		if step == 1 {
			cells = d.shadow.Run(a, n)
			k = uint64(len(cells))
		} else {
			cells, k = d.shadow.Strided(a, n, step)
		}
		if d.haveWhole {
			for j := range k {
				if cells[j*step].at == atWhole {
					d.split(a + 8*j*step)
				}
			}
		}
		if w.Op == trace.OpWrite {
			d.writes += int64(k)
			for j := range k {
				c := &cells[j*step]
				if c.w == epoch { // [WRITE SAME EPOCH]
					d.writeSameEpoch++
					continue
				}
				w.Obj = a + 8*j*step
				d.writeCell(t, &w, c)
			}
		} else {
			d.reads += int64(k)
			for j := range k {
				c := &cells[j*step]
				if c.r == epoch { // [READ SAME EPOCH]
					d.readSameEpoch++
					continue
				}
				w.Obj = a + 8*j*step
				d.readCell(t, &w, c)
			}
		}
		a += 8 * k * step
		n -= k
	}
}

// rangeBytes is HandleRange of the n bytes from e.Obj (a range of stride
// 1: what the interceptors record for a std call's buffer, a hash's Write,
// io.Copy's, bytes.Buffer's), outside any atomic operation. A cell and a
// check per byte cost eight of each per word, and a cell per byte of
// every buffer: held-out fake-gcs-server's upload test records 628,573
// events that stand for 1.57G byte accesses, whose analysis outgrew its
// memory limit (bench/results/overhead/session68-bytegranules.md). Go's
// race detector keeps a cell per 8 bytes. Here a granule (8 aligned
// bytes) that the range covers whole, whose bytes have one state (none
// yet, or kept whole before), is kept whole: one access of its aligned
// cell, marked atWhole, standing for the eight (wholeAccess). Any other
// access to one of its bytes (a byte, a word, an atomic operation, a range
// over part of it, an allocation over part of it) splits it into the
// eight cells first (split), so that the findings and counters are those
// of the byte-wise analysis (TestFastTrackByteRangesWholeMatchBytes).
func (d *FastTrack) rangeBytes(t *clock.Thread, e *trace.Event, n uint64) {
	w := trace.Event{Seq: e.Seq, G: e.G, Op: e.Op.WordOp(), Flags: trace.FlagValueUnknown, Site: e.Site}
	for a, end := e.Obj, e.Obj+n; a < end; {
		if a&7 != 0 || end-a < 8 { // a granule's part: byte by byte
			stop := min(a&^7+8, end)
			d.bytesApart(t, &w, a, stop)
			a = stop
			continue
		}
		// The granules it covers whole, up to the end of a's shadow page:
		// their aligned cells side by side (a fresh one zero, as a state
		// never set), and which of their other bytes have cells.
		cells := d.shadow.Run(a, (end-a)/8)
		odd := d.shadow.OddLive(a)
		for i := range cells {
			x := a + 8*uint64(i)
			if c := &cells[i]; c.at == atWhole || *c == (ftShadow{}) && shadow.OddBits(odd, x) == 0 {
				w.Obj = x
				d.wholeAccess(t, &w, c)
				d.granulesWhole++
				continue
			}
			d.bytesApart(t, &w, x, x+8)
		}
		a += 8 * uint64(len(cells))
	}
}

// bytesApart is the access w of each byte in [lo, hi), bytes of one
// granule, outside any atomic operation: the granule split once if whole,
// each byte's same-epoch rule checked in the loop (as rangeWords).
func (d *FastTrack) bytesApart(t *clock.Thread, w *trace.Event, lo, hi uint64) {
	if d.haveWhole {
		d.split(lo &^ 7)
	}
	epoch := t.Epoch()
	if w.Op == trace.OpWrite {
		d.writes += int64(hi - lo)
		for a := lo; a < hi; a++ {
			c := d.shadow.Get(a)
			if c.w == epoch { // [WRITE SAME EPOCH]
				d.writeSameEpoch++
				continue
			}
			w.Obj = a
			d.writeCell(t, w, c)
		}
	} else {
		d.reads += int64(hi - lo)
		for a := lo; a < hi; a++ {
			c := d.shadow.Get(a)
			if c.r == epoch { // [READ SAME EPOCH]
				d.readSameEpoch++
				continue
			}
			w.Obj = a
			d.readCell(t, w, c)
		}
	}
	d.rangeBytesApart += int64(hi - lo)
}

// wholeAccess is the access e of the eight bytes from e.Obj, a granule
// whose aligned cell c is whole or zero and whose other bytes have no
// cell: FastTrack's rules applied once to c (counted eightfold: extra),
// and each race reported for each of the eight addresses in
// order, as the byte-wise analysis reports them.
func (d *FastTrack) wholeAccess(t *clock.Thread, e *trace.Event, c *ftShadow) {
	c.at = 0
	d.collect, d.pend, d.extra = true, d.pend[:0], 7
	if e.Op == trace.OpWrite {
		d.writes += 8
		d.writeCell(t, e, c)
	} else {
		d.reads += 8
		d.readCell(t, e, c)
	}
	d.collect, d.extra = false, 0
	c.at, d.haveWhole = atWhole, true
	x := e.Obj
	for b := range uint64(8) {
		e.Obj = x + b
		for _, p := range d.pend {
			d.report(e, p.prev, p.site, p.seq, p.write)
		}
	}
	e.Obj = x
}

// pendingRace is a report wholeAccess holds until its cell's rules ran.
type pendingRace struct {
	prev  vc.Epoch
	site  trace.SiteID
	seq   uint64
	write bool
}

// split turns the granule of aligned x, if whole, into its eight cells,
// each with the state the eight had (a read-shared R_x copied for each).
func (d *FastTrack) split(x uint64) {
	c := d.shadow.Lookup(x)
	if c == nil || c.at != atWhole {
		return
	}
	c.at = 0
	src := *c
	for b := uint64(1); b < 8; b++ {
		oc := d.shadow.Get(x + b) // unaligned cells: c does not move
		*oc = src
		if src.rs != 0 {
			j := d.newShared(x + b) // its sweep keeps src's: x's cell refers to it
			from, to := d.shared.at(src.rs-1), d.shared.at(j)
			to.ents = append(to.ents[:0], from.ents...)
			to.old = append(to.old[:0], from.old...)
			oc.rs = j + 1
		}
	}
}

// cell is x's cell for an access of x, its granule split first if whole.
func (d *FastTrack) cell(x uint64) *ftShadow {
	if !d.haveWhole {
		return d.shadow.Get(x)
	}
	if x&7 == 0 { // the granule's own cell: one lookup
		c := d.shadow.Get(x)
		if c.at == atWhole {
			d.split(x)
		}
		return c
	}
	d.split(x &^ 7)
	return d.shadow.Get(x)
}

// HandleGoAtomic processes an atomic operation with trace.FlagGoAtomic as
// Handle processes the four events it stands for (detect.GoAtomicHandler),
// with its goroutine looked up once and the word's private lock kept off
// the held locks (clock.Tracker.GoAtomicBegin).
func (d *FastTrack) HandleGoAtomic(e *trace.Event) {
	t := d.k.Running(e)
	if t == nil {
		t = d.k.Start(e.G)
	}
	d.k.GoAtomicBegin(t, e)
	data := trace.Event{Seq: e.Seq + 2, G: e.G, Op: trace.GoAtomicDataOp(e), Site: e.Site, Obj: e.Obj}
	d.atomicAccess(t, &data)
	d.k.GoAtomicEnd(t)
}

// access is a data access of t: inside an atomic operation (the word's
// private lock held), a plain read or a plain write.
func (d *FastTrack) access(t *clock.Thread, e *trace.Event) {
	switch {
	case t.AtomicAccess(e.Obj):
		d.atomicAccess(t, e)
	case e.Op == trace.OpRead:
		d.read(t, e)
	default:
		d.write(t, e)
	}
}

// Finish does nothing: FastTrack reports as it goes.
func (d *FastTrack) Finish() {}

func (d *FastTrack) read(t *clock.Thread, e *trace.Event) {
	d.reads++
	d.readCell(t, e, d.cell(e.Obj))
}

// readCell is read of e.Obj, whose cell is s.
func (d *FastTrack) readCell(t *clock.Thread, e *trace.Event, s *ftShadow) {
	epoch := t.Epoch()
	if s.r == epoch { // [READ SAME EPOCH]
		d.readSameEpoch += 1 + d.extra
		return
	}
	var rs *readShared
	if s.rs != 0 {
		rs = d.shared.at(s.rs - 1)
		if rs.get(t.ID()) == epoch.Clock() { // [READ SHARED SAME EPOCH]
			d.readSharedSameEpoch += 1 + d.extra
			return
		}
	}
	if !s.w.Leq(t.Clock()) { // write-read race
		d.reportRef(e, s.w, s.wRef, true)
	}
	if s.at != 0 { // atomic write-read races
		d.checkAtomic(e, t.Clock(), &d.atomics.at(s.at-1).w, true)
	}
	switch {
	case rs != nil: // [READ SHARED]
		d.readShared += 1 + d.extra
		rs.set(t.ID(), t.Base(), epoch.Clock(), d.ref(e))
	case s.r.Leq(t.Clock()): // [READ EXCLUSIVE]
		d.readExclusive += 1 + d.extra
		s.r, s.rRef = epoch, d.ref(e)
	default: // [READ SHARE]: two concurrent reads; R_x becomes a clock
		d.readShare += 1 + d.extra
		i := d.newShared(e.Obj)
		rs = d.shared.at(i)
		rs.set(uint32(s.r.G()), 0, s.r.Clock(), s.rRef)
		rs.set(t.ID(), t.Base(), epoch.Clock(), d.ref(e))
		s.r, s.rs = sharedRead, i+1
	}
}

func (d *FastTrack) write(t *clock.Thread, e *trace.Event) {
	d.writes++
	d.writeCell(t, e, d.cell(e.Obj))
}

// writeCell is write of e.Obj, whose cell is s.
func (d *FastTrack) writeCell(t *clock.Thread, e *trace.Event, s *ftShadow) {
	epoch := t.Epoch()
	if s.w == epoch { // [WRITE SAME EPOCH]
		d.writeSameEpoch += 1 + d.extra
		return
	}
	if !s.w.Leq(t.Clock()) { // write-write race
		d.reportRef(e, s.w, s.wRef, true)
	}
	if s.rs == 0 { // [WRITE EXCLUSIVE]
		d.writeExclusive += 1 + d.extra
		if !s.r.Leq(t.Clock()) { // read-write race
			d.reportRef(e, s.r, s.rRef, false)
		}
	} else { // [WRITE SHARED]: check every read; R_x := ⊥e
		d.writeShared += 1 + d.extra
		i := s.rs - 1
		d.checkSet(e, t.Clock(), d.shared.at(i), false) // read-write races
		d.release(i)
		s.r, s.rs = 0, 0
	}
	if s.at != 0 { // atomic read-write and write-write races; then forgotten
		a := d.atomics.at(s.at - 1)
		d.checkAtomic(e, t.Clock(), &a.r, false)
		d.checkAtomic(e, t.Clock(), &a.w, true)
		d.releaseAtomic(s.at - 1)
		s.at = 0
	}
	s.w, s.wRef = epoch, d.ref(e)
}

// checkSet reports the accesses of set (writes or not) unordered with c.
func (d *FastTrack) checkSet(e *trace.Event, c vc.VectorClock, set *readShared, write bool) {
	for _, r := range set.ents {
		if r.clock > c.Get(trace.GID(r.tid)) {
			d.reportRef(e, vc.MakeEpoch(r.clock, trace.GID(r.tid)), r.ref, write)
		}
	}
	for _, o := range set.old {
		if o.clock > c.Get(trace.GID(o.tid)) {
			d.reportRef(e, vc.MakeEpoch(o.clock, trace.GID(o.tid)), o.ref, write)
		}
	}
}

// checkAtomic reports the accesses of set (writes or not) unordered with
// c.
func (d *FastTrack) checkAtomic(e *trace.Event, c vc.VectorClock, set *atomicSet, write bool) {
	if set.rs != 0 {
		d.checkSet(e, c, d.shared.at(set.rs-1), write)
	} else if !set.e.Leq(c) {
		d.reportRef(e, set.e, set.ref, write)
	}
}

// atomicAccess checks an atomic access against the plain ones (W_x; R_x
// too for a write) and adds it to the word's atomic accesses.
func (d *FastTrack) atomicAccess(t *clock.Thread, e *trace.Event) {
	write := e.Op == trace.OpWrite
	if write {
		d.atomicWrites++
	} else {
		d.atomicReads++
	}
	s := d.cell(e.Obj)
	epoch, c := t.Epoch(), t.Clock()
	if s.at != 0 {
		set := d.atomics.at(s.at - 1).of(write)
		if set.e == epoch || set.rs != 0 && d.shared.at(set.rs-1).get(t.ID()) == epoch.Clock() {
			d.atomicSameEpoch++ // a repeat in its epoch
			return
		}
	}
	if !s.w.Leq(c) { // plain write, atomic access
		d.reportRef(e, s.w, s.wRef, true)
	}
	if write {
		if s.rs == 0 {
			if !s.r.Leq(c) { // plain read, atomic write
				d.reportRef(e, s.r, s.rRef, false)
			}
		} else {
			d.checkSet(e, c, d.shared.at(s.rs-1), false)
		}
	}
	if s.at == 0 {
		s.at = d.newAtomic(e.Obj) + 1
	}
	set := d.atomics.at(s.at - 1).of(write)
	switch {
	case set.rs != 0:
		d.shared.at(set.rs-1).set(t.ID(), t.Base(), epoch.Clock(), d.ref(e))
	case set.e.Leq(c): // ordered after the one it held (or none): it stands for both
		set.e, set.ref = epoch, d.ref(e)
	default: // concurrent with it: a set
		i := d.newShared(e.Obj) // a sweep moves no state (statePool's blocks): set stays valid
		rs := d.shared.at(i)
		rs.atomic = true
		rs.set(uint32(set.e.G()), 0, set.e.Clock(), set.ref)
		rs.set(t.ID(), t.Base(), epoch.Clock(), d.ref(e))
		set.e, set.rs = sharedRead, i+1
	}
}

// newAtomic returns the index of an unused atomic-accesses state for
// addr's cell, sweeping first as newShared does.
func (d *FastTrack) newAtomic(addr uint64) int32 {
	i := d.atomics.take(d.sweepAtomics)
	a := d.atomics.at(i)
	a.addr, a.live = addr, true
	return i
}

// releaseAtomic empties atomic-accesses state i and makes it free, with
// the read-shared states of its sets.
func (d *FastTrack) releaseAtomic(i int32) {
	a := d.atomics.at(i)
	for _, set := range []*atomicSet{&a.w, &a.r} {
		if set.rs != 0 {
			d.release(set.rs - 1)
		}
		*set = atomicSet{}
	}
	a.live = false
	d.atomics.put(i)
}

// sweepAtomics releases the atomic-accesses states no cell refers to any
// more (freed memory; see sweep).
func (d *FastTrack) sweepAtomics() {
	for i := range d.atomics.n {
		a := d.atomics.at(int32(i))
		if !a.live {
			continue
		}
		if c := d.shadow.Lookup(a.addr); c == nil || c.at != int32(i)+1 {
			d.releaseAtomic(int32(i))
		}
	}
}

// newShared returns the index of an unused read-shared state for addr's
// cell, sweeping first when the live states have doubled since the last
// sweep.
func (d *FastTrack) newShared(addr uint64) int32 {
	i := d.shared.take(d.sweep)
	rs := d.shared.at(i)
	rs.addr, rs.live = addr, true
	return i
}

// release empties read-shared state i and makes it free.
func (d *FastTrack) release(i int32) {
	rs := d.shared.at(i)
	rs.ents, rs.old = rs.ents[:0], rs.old[:0]
	if cap(rs.ents) > 64 {
		rs.ents = nil // one hot word's many readers: not for every later word
	}
	rs.live, rs.atomic = false, false
	d.shared.put(i)
}

// sweep releases the read-shared states no cell refers to any more: an
// allocation clears its words' cells (shadow.Mem.Clear) without looking
// at them, so the states of read-shared words of freed memory would stay
// taken forever.
func (d *FastTrack) sweep() {
	for i := range d.shared.n {
		rs := d.shared.at(int32(i))
		if !rs.live {
			continue
		}
		if !d.referred(rs, int32(i)+1) {
			d.release(int32(i))
		}
	}
}

// referred reports whether read-shared state rs, at index+1 ref, is still
// its address's R_x. A set of atomic accesses is its atomicAccesses' own,
// taken back with it (releaseAtomic, sweepAtomics), never here.
func (d *FastTrack) referred(rs *readShared, ref int32) bool {
	if rs.atomic {
		return true
	}
	c := d.shadow.Lookup(rs.addr)
	return c != nil && c.rs == ref
}

// statePool holds per-word states that shadow cells refer to by index+1
// (read-shared states, atomic accesses): taken for a word, put back when
// the word lets go of one, and swept when states outlive their cells. An
// allocation clears cells without looking at them (shadow.Mem.Clear), so
// a freed word's state would stay taken: when the live states have
// doubled since the last sweep and an allocation cleared cells since,
// take runs the sweep, which puts back those no cell refers to any more.
type statePool[T any] struct {
	// blocks hold the states, poolBlock each: a new block when they are
	// full, never a copy (an append's doubling copied them all and held
	// both arrays at its peak: most of the analysis's memory on a matrix
	// product's trace, cpu's 63,000 read-shared words). A state stays at
	// its address.
	blocks  [][]T
	n       int // states made
	free    []int32
	sweepAt int  // live states that start the next sweep
	cleared bool // an allocation cleared cells while states were live
}

// take returns the index of an unused state, sweeping first when due.
func (p *statePool[T]) take(sweep func()) int32 {
	if live := p.live(); live >= p.sweepAt {
		if p.cleared {
			sweep() // else no cell let go of its state since the last sweep
		}
		p.sweepAt = max(2*p.live(), minSweep)
		p.cleared = false
	}
	if n := len(p.free); n > 0 {
		i := p.free[n-1]
		p.free = p.free[:n-1]
		return i
	}
	if p.n == len(p.blocks)*poolBlock {
		p.blocks = append(p.blocks, make([]T, poolBlock))
	}
	p.n++
	return int32(p.n - 1)
}

// poolBlock is the number of states in a block of a statePool.
const poolBlock = 256

// at returns state i.
func (p *statePool[T]) at(i int32) *T { return &p.blocks[uint32(i)/poolBlock][uint32(i)%poolBlock] }

// put makes state i free; the caller emptied it.
func (p *statePool[T]) put(i int32) { p.free = append(p.free, i) }

// live is the number of states taken.
func (p *statePool[T]) live() int { return p.n - len(p.free) }

// noteClear records that an allocation cleared cells.
func (p *statePool[T]) noteClear() { p.cleared = p.cleared || p.live() > 0 }

// minSweep is the fewest live read-shared states that start a sweep (a
// variable for the tests).
var minSweep = 1 << 12

func (d *FastTrack) report(e *trace.Event, prev vc.Epoch, site trace.SiteID, seq uint64, write bool) {
	if d.collect {
		d.pend = append(d.pend, pendingRace{prev, site, seq, write})
		return
	}
	d.races++
	r := &d.race
	r.Addr = e.Obj
	r.Prev = finding.Access{Seq: seq, G: d.k.GIDAt(uint32(prev.G()), prev.Clock()), Site: site, Write: write}
	r.Cur = finding.Access{Seq: e.Seq, G: e.G, Site: e.Site, Write: e.Op == trace.OpWrite}
	d.sink.Report(r)
}

// Stats returns the detector's counters: events, accesses, reads, writes,
// races (dynamic reports), illformed (events tolerated, see
// docs/semantics.md), shadow_addrs, one counter per FastTrack rule taken
// (read_same_epoch, read_shared_same_epoch, read_exclusive, read_share —
// the promotions of R_x to a vector clock —, read_shared,
// write_same_epoch, write_exclusive, write_shared), read_shared_live (R_x
// clocks in use now, and sets of atomic accesses), atomic_reads,
// atomic_writes, atomic_same_epoch (repeats skipped), atomic_live (words
// whose atomic accesses are kept now), goroutines, locks, sync_objects and
// atomic_words.
func (d *FastTrack) Stats() map[string]int64 {
	m := map[string]int64{
		"accesses":               d.reads + d.writes + d.atomicReads + d.atomicWrites,
		"reads":                  d.reads,
		"writes":                 d.writes,
		"races":                  d.races,
		"shadow_addrs":           int64(d.shadow.Len()),
		"read_same_epoch":        d.readSameEpoch,
		"read_shared_same_epoch": d.readSharedSameEpoch,
		"read_exclusive":         d.readExclusive,
		"read_share":             d.readShare,
		"read_shared":            d.readShared,
		"write_same_epoch":       d.writeSameEpoch,
		"write_exclusive":        d.writeExclusive,
		"write_shared":           d.writeShared,
		"read_shared_live":       int64(d.shared.live()),
		"atomic_reads":           d.atomicReads,
		"atomic_writes":          d.atomicWrites,
		"atomic_same_epoch":      d.atomicSameEpoch,
		"atomic_live":            int64(d.atomics.live()),
		"granules_whole":         d.granulesWhole,
		"range_bytes_apart":      d.rangeBytesApart,
	}
	counters(&d.k, m)
	return m
}
