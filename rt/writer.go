package rt

import (
	"fmt"
	"os"
	"reflect"
	"sync"
	"time"

	"github.com/racekit/racekit/trace"
	"github.com/racekit/racekit/trace/rkt"
)

// The writer: rounds run every tick while there is something to write or
// watch, in the callback of a timer (fire); in a goroutine started when a
// goroutine fills a big chunk (wakeWriter); and in a goroutine that filled
// a big chunk while the writer falls behind (helpWrite). A round computes
// the frontier, writes the definitions queued so far, merges the committed
// records of every goroutine by key up to the frontier, and encodes them
// into the file with fresh Seqs 1, 2, 3, ... Flush and Finish run a round
// themselves. Everything here is under wmu.
//
// No goroutine of rt's outlives its work (issue 33: a program that counts
// its goroutines, runtime.NumGoroutine, runtime.Stack(all) or goleak, sees
// the ones it sees under go test -race). A timer made by time.AfterFunc has
// a goroutine only while its callback runs. The writer's timer is armed
// while some goroutine holds the frontier (an open word: it records, or it
// is blocked where the writer will steal from it after stealAfter) or has
// committed records not yet written; a round that finds neither flushes
// the file and disarms it (fire). A goroutine arms it again when it
// opens its word (open: every record is written after one, since a word
// is idle when the writer disarms), by one load of wflags.armed, a flag on
// a cache line of its own that changes at most once per tick. So while the
// program's goroutines record, a goroutine of rt's may show (a callback, or
// wakeWriter's round), as the writer goroutine always did; once they are
// done or blocked, none does, within about three ticks (a round that sees
// the last open word, one that steals it after stealAfter, the last).
//
// Arming is Dekker's handshake on sequentially consistent atomics: open
// stores the word, then loads the flag; the callback stores false, then
// loads every word (writerIdle). One of them sees the other's store, and
// the loser of a compare-and-swap of the flag leaves the timer to the
// winner. While the flag is true a callback is due, or running and yet to
// look at the words.

var (
	wmu       OwnMutex
	w         *rkt.Writer
	out       *os.File
	outPath   string
	finished  bool   // the end block is written (or tracing failed)
	outSeq    uint64 // Seq of the last event written
	wsites    uint32 // sites defined in the file, counting site 0
	unflushed int64  // when the oldest event not yet flushed was written (nanotime); 0 if none

	wsnap   []*gstate // the registry, copied each round
	wheap   []*gstate // goroutines with records to write, by head key
	wev     trace.Event
	waddrs  []uint64
	wdefs   []def // the definitions being written (swapped with defs)
	wdefBuf []def
)

// writerTimer is the timer of one trace's writer (start makes one; its
// callback does nothing once another trace started).
type writerTimer struct{ t *time.Timer }

var wtimer OwnPointer[writerTimer]

// armed is true while the writer's timer is due or its callback runs (see
// above); wakeReq while wakeWriter's round is due. Read at every open, written
// at most once per round: a cache line of their own.
var wflags struct {
	_       [64]byte
	armed   OwnBool
	wakeReq OwnBool
	_       [62]byte
}

// newWriterTimer makes the timer of a new trace, disarmed (start, with
// wmu held, before the program records).
func newWriterTimer() {
	wt := &writerTimer{}
	wt.t = SysAfterFunc(time.Hour, wt.fire)
	wt.t.Stop()
	if old := wtimer.Swap(wt); old != nil {
		old.t.Stop()
	}
	wflags.armed.Store(false)
	wflags.wakeReq.Store(false)
}

// stopWriterTimer stops the timer when the trace is finished. wmu is held.
func stopWriterTimer() {
	if wt := wtimer.Load(); wt != nil {
		wt.t.Stop()
	}
}

// armWriter arms the writer's timer if it is not: open calls it when it
// loads wflags.armed false after storing its word.
func armWriter() {
	wt := wtimer.Load()
	if wt == nil || inBubble() {
		return
	}
	if wflags.armed.CompareAndSwap(false, true) {
		wt.reset()
	}
}

// The writer waits while rttest.AllocsPerRun counts (CountAllocs):
// testing.AllocsPerRun counts the allocations of every goroutine, and a
// round allocates (so may the goroutine of a timer's callback), which the
// Go race detector's runtime does not add: AllocsPerRun(1, ...) counted 1
// where go test counts 0 when a round ran in the window (e2e
// TestTestUnchanged under GOGC=1). A round due meanwhile runs when the
// last count ends. A runtime.ReadMemStats pair does not hold the writer:
// a program may open one and never close it. writerHold.Mutex orders the
// counts with the timer's arming.
var writerHold struct {
	OwnMutex
	due bool // a round came due while a count held the writer
}

// holdWriter opens (+1) or closes (-1) a count that holds the writer.
func holdWriter(delta int32) {
	writerHold.Lock()
	defer writerHold.Unlock()
	was := allocsCounted.Load()
	now := allocsCounted.Add(delta)
	wt := wtimer.Load()
	switch {
	case was == 0 && now > 0:
		if wt != nil && wflags.armed.Load() && wt.t.Stop() {
			writerHold.due = true
		}
	case was > 0 && now == 0 && writerHold.due:
		writerHold.due = false
		if wt != nil {
			wt.t.Reset(tick)
		}
	}
}

// held reports whether a count holds the writer, and if so notes that a
// round is due when it ends.
func held() bool {
	if allocsCounted.Load() == 0 {
		return false
	}
	writerHold.Lock()
	defer writerHold.Unlock()
	if allocsCounted.Load() == 0 {
		return false
	}
	writerHold.due = true
	return true
}

// reset arms wt's timer for the next round, or for the end of the count
// that holds the writer.
func (wt *writerTimer) reset() {
	if !held() {
		wt.t.Reset(tick) // a count that begins now stops it (holdWriter), or fire sees it
	}
}

// wakeWriter asks for a round now (a goroutine filled a big chunk). The
// round runs in a goroutine of its own, started here, which ends with it;
// only a goroutine that records heavily starts one, and none while another
// is due. Resetting the timer to fire at once instead left the writer
// behind: in one BenchmarkAccess run it made about 250 rounds where the
// writer goroutine of before made 6000, and the recording goroutine wrote
// in helpWrite instead (the timer, on the heap of that goroutine's busy
// processor, ran late; a new goroutine is taken by an idle processor).
func wakeWriter() {
	if wflags.wakeReq.Load() || wflags.wakeReq.Swap(true) {
		return // one is due
	}
	if wtimer.Load() == nil || inBubble() || allocsCounted.Load() > 0 {
		wflags.wakeReq.Store(false)
		return
	}
	go rtsysWakeRound()
}

// rtsysCallback wraps f, the callback of one of rt's timers: time.AfterFunc
// runs a callback in a goroutine of its own, whose function is then this
// closure, named rtsys..., which the patched runtime counts as its own
// (instrument's sysGoroutineCheck: runtime.NumGoroutine and
// runtime.Stack(all) do not show it). Before, a goroutine the program saw
// for a moment each round of the writer made runtime.NumGoroutine move,
// which tests that count goroutines compare
// (bench/results/corpus/run-session63/notes.md).
// Not inlined: a closure inlined elsewhere is named after that function.
//
//go:noinline
func rtsysCallback(f func()) func() {
	return func() { f() }
}

// SysAfterFunc is time.AfterFunc for rt's and rttest's own timers, whose
// callbacks wake no goroutine of the program (see rtsysCallback).
func SysAfterFunc(d time.Duration, f func()) *time.Timer {
	return time.AfterFunc(d, rtsysCallback(f))
}

// sysCallbackPC is the entry of rtsysCallback's closure, the function of
// every timer SysAfterFunc made.
var sysCallbackPC = sync.OnceValue(func() uintptr {
	return reflect.ValueOf(rtsysCallback(nil)).Pointer()
})

// rtsysWakeRound is the round wakeWriter asked for. The timer stays armed (the
// goroutine that filled the chunk holds its word open), so it leaves the
// timer alone.
func rtsysWakeRound() {
	if held() { // started before a count began
		wflags.wakeReq.Store(false)
		return
	}
	wmu.Lock()
	wflags.wakeReq.Store(false)
	if !finished {
		round(roundNormal)
	}
	wmu.Unlock()
}

// inBubble reports whether the calling goroutine runs in a synctest
// bubble (testing/synctest), where time.Now has no monotonic reading. A
// timer armed there would run on the bubble's fake clock (and Reset of
// rt's timer would take the fake now as its base, decades away), so a
// goroutine in a bubble does not arm the writer: what it records is
// written by a round that goroutines outside the bubble arm (the test
// that called synctest.Test records when it returns), by helpWrite when
// much is pending, or by Flush and Finish.
func inBubble() bool {
	now := time.Now()
	return now == now.Round(0)
}

const (
	// tick is the writer's period while it is armed.
	tick = 10 * time.Millisecond
	// stealAfter is how long a goroutine may hold the frontier without
	// committing anything before the writer turns its word idle: it may
	// be blocked in code that is not traced.
	stealAfter = 10 * time.Millisecond
	// flushDelay bounds how long a written event may wait in the
	// pending block; with tick and stealAfter it bounds how long an
	// event takes to reach the file (a killed run leaves a readable
	// prefix). A round after which the writer disarms flushes at once.
	flushDelay = 50 * time.Millisecond
)

// Round modes.
const (
	roundNormal = iota
	roundForce  // Flush: steal every open goroutine, write all committed records
	roundFinal  // Finish: the same, and nothing is left behind
)

// fire is the writer timer's callback: a round, then the timer again in a
// tick, unless nothing is left to write or watch.
func (wt *writerTimer) fire() {
	if held() {
		return
	}
	wmu.Lock()
	if finished || wtimer.Load() != wt {
		wmu.Unlock()
		return
	}
	round(roundNormal)
	if finished {
		wmu.Unlock()
		return
	}
	if !writerIdle() {
		wmu.Unlock()
		wt.reset()
		return
	}
	if unflushed != 0 {
		unflushed = 0
		if err := w.Flush(); err != nil {
			fail(err)
			wmu.Unlock()
			return
		}
	}
	wflags.armed.Store(false)
	busy := !writerIdle() // a goroutine that opened meanwhile may have seen true
	wmu.Unlock()
	if busy && wflags.armed.CompareAndSwap(false, true) {
		wt.reset()
	}
}

// writerIdle reports whether no goroutine holds the frontier or has
// records the writer has not read, and none has ended unnoticed (the next
// round drops it and its chunks). wmu is held.
func writerIdle() bool {
	regMu.Lock()
	defer regMu.Unlock()
	for _, g := range reg {
		wd := g.word.Load()
		if !isIdle(wd) || (wd-g.consumed)&cntMask != 0 || g.dead.Load() {
			return false
		}
	}
	return true
}

// round writes what can be written. The frontier F is a key below which
// (or at which, for plain events) no goroutine can add a record any more:
// the smallest bound of the goroutines that hold it (open words), and for
// an idle one the global seq loaded before its word (it will load a seq
// at least as large before it records again, see open). Every committed
// record with a key up to F is written, in key order; the others wait.
// It returns how many events it wrote.
func round(mode int) (written int) {
	now := nanotime() // not time.Now, fake in a synctest bubble (clock.go)
	lw := seq.Load()
	regMu.Lock()
	wsnap = append(wsnap[:0], reg...)
	regMu.Unlock()
	front := keyOf(lw, kindAccess)
	for _, g := range wsnap {
		if !g.dead.Load() && g.ended() {
			retire(g)
		}
		dead := g.dead.Load() // before the word: a dead goroutine's word is final
		wd := g.word.Load()
		if !isIdle(wd) {
			steal := mode != roundNormal || (wd == g.wlast && time.Duration(now-g.wsince) >= stealAfter)
			for tries := 0; steal && !isIdle(wd); tries++ {
				if g.word.CompareAndSwap(wd, packWord(idleK, wd)) {
					wd = packWord(idleK, wd)
					break
				}
				wd = g.word.Load()
				if mode == roundForce && tries > 100 {
					break // it keeps committing; take it as it is
				}
			}
		}
		if wd != g.wlast {
			g.wlast, g.wsince = wd, now
		}
		if !isIdle(wd) && wordK(wd) < front {
			front = wordK(wd)
		}
		g.avail = (wd - g.consumed) & cntMask
		g.gone = dead
	}
	// Definitions after the words: a committed record's goroutine and
	// site were queued before it.
	writeDefs()
	if finished {
		return
	}
	if mode == roundFinal {
		front = ^uint64(0)
	}
	n := merge(front)
	written = n
	if finished {
		return
	}
	for _, g := range wsnap {
		g.out.Store(g.consumed)
	}
	forgetDrained()
	if n > 0 && unflushed == 0 {
		unflushed = now
	}
	if unflushed != 0 && (mode != roundNormal || time.Duration(now-unflushed) >= flushDelay) {
		unflushed = 0
		if err := w.Flush(); err != nil {
			fail(err)
		}
	}
	return written
}

// writeDefs writes the queued definitions.
func writeDefs() {
	defMu.Lock()
	wdefs, defs = defs, wdefBuf[:0]
	defMu.Unlock()
	for i := range wdefs {
		d := &wdefs[i]
		var err error
		if d.name != nil {
			err = w.DefineName(d.name.Obj, d.name.Name)
		} else if d.isSite {
			err = w.DefineSite(trace.SiteID(wsites), d.site)
			wsites++
		} else {
			err = w.DefineGoroutine(d.g)
		}
		if err != nil {
			fail(err)
			break
		}
	}
	clear(wdefs)
	wdefBuf = wdefs[:0]
}

// merge writes the committed records with keys up to front, in key
// order, and returns how many events it wrote. Each goroutine's records
// are in key order already; the heap picks the goroutine with the
// smallest head, which writes its run up to the next smallest head.
// Plain events at one key are placed in any order, all after the
// synchronization event of that seq.
func merge(front uint64) int {
	wheap = wheap[:0]
	for _, g := range wsnap {
		if g.headKey() && g.head <= front {
			wheap = append(wheap, g)
		}
	}
	for i := len(wheap)/2 - 1; i >= 0; i-- {
		siftDown(i)
	}
	written := 0
	for len(wheap) > 0 && !finished {
		g := wheap[0]
		limit := front
		if len(wheap) > 1 {
			limit = min(limit, wheap[1].head)
		}
		if len(wheap) > 2 {
			limit = min(limit, wheap[2].head)
		}
		written += g.writeRun(limit)
		if g.headKey() && g.head <= front {
			siftDown(0)
		} else {
			last := len(wheap) - 1
			wheap[0] = wheap[last]
			wheap[last] = nil // a goroutine that ends is not kept past the round (HeapObjects)
			wheap = wheap[:last]
			siftDown(0)
		}
	}
	return written
}

func siftDown(i int) {
	n := len(wheap)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && wheap[r].head < wheap[l].head {
			m = r
		}
		if wheap[i].head <= wheap[m].head {
			return
		}
		wheap[i], wheap[m] = wheap[m], wheap[i]
		i = m
	}
}

// peek returns g's next committed record (g.avail > 0), freeing the
// chunks it has read.
func (g *gstate) peek() *rec {
	for {
		c := g.rc
		if g.ri < len(c.recs) {
			if nx := c.next.Load(); nx == nil || g.ri < int(c.n.Load()) {
				return &c.recs[g.ri]
			}
		}
		nx := c.next.Load()
		freeChunk(c)
		g.rc, g.ri = nx, 0
	}
}

// take consumes g's next committed record.
func (g *gstate) take() *rec {
	r := g.peek()
	g.ri++
	g.avail--
	g.consumed++
	return r
}

// headKey reads g's key markers up to its next committed event, sets
// g.head to that event's key and reports whether there is one.
func (g *gstate) headKey() bool {
	for g.avail > 0 {
		r := g.peek()
		if r.op == opKey {
			g.kcur = r.obj
			g.take()
			continue
		}
		g.head = eventKey(g.kcur, r.op)
		return true
	}
	return false
}

// eventKey is the key of an event of op after key marker k.
func eventKey(k uint64, op trace.Op) uint64 {
	if keyedAtLoad(op) {
		return k
	}
	return k &^ 3 // kindSync
}

// writeRun writes g's events while their keys are at most limit (at
// least one), and returns how many it took (written, or dropped by TREE);
// g.head is then the key of the next one, if any.
func (g *gstate) writeRun(limit uint64) int {
	n := 0
	e := &wev
	for g.avail > 0 {
		// The committed records of this chunk, read in place.
		g.peek()
		c := g.rc
		end := len(c.recs)
		if c.next.Load() != nil {
			end = int(c.n.Load())
		}
		if uint64(end-g.ri) > g.avail {
			end = g.ri + int(g.avail)
		}
		more := g.avail > uint64(end-g.ri) // committed records go on in the next chunk
		e.G = g.gid
		e.Addrs = nil
		i := g.ri
		for ; i < end; i++ {
			r := &c.recs[i]
			if r.op == opKey {
				g.kcur = r.obj
				continue
			}
			if k := eventKey(g.kcur, r.op); k > limit && n > 0 {
				break
			}
			if r.op == trace.OpMethodBegin || (i+1 == end && more) {
				break // addresses, or records that may go on in the next chunk: writeEvent
			}
			e.Op, e.Flags, e.Obj, e.Value = r.op, r.flags, r.obj, 0
			if j, sp := wordRun(c.recs, i, end); j > i {
				// Word accesses one after another at one site: one range
				// event (wordRun).
				e.Op, e.Flags, e.Value = r.op.RangeOp(), 0, uint64(sp)
				i = j
			} else if i+1 < end && c.recs[i+1].op == opVal {
				// The event's value (a channel message, a range's
				// span), its one trailer, in this chunk.
				e.Value = c.recs[i+1].obj
				i++
			}
			e.Site = trace.SiteID(r.site)
			if r.site >= wsites {
				e.Site = 0 // a site table not registered (see RegisterFile)
			}
			writeOut(e) // takes the Seq; TREE may drop it (filter.go)
			n++
		}
		g.avail -= uint64(i - g.ri)
		g.consumed += uint64(i - g.ri)
		g.ri = i
		if !g.headKey() {
			break
		}
		if g.head > limit && n > 0 {
			break
		}
		if i == end {
			continue // the next chunk
		}
		writeEvent(g)
		n++
	}
	return n
}

// minWordRun is the fewest word accesses wordRun makes one range event of:
// fewer take about as many bytes as words as one range event does.
const minWordRun = 4

// wordRun finds, from recs[i], a run of a goroutine's plain reads (or
// writes) at one site, without a key marker between them, at addresses
// that step up by one stride (a loop over a slice's elements: append's
// writes, a range loop's reads; over 8 bytes, a loop that reads one field
// of each struct, or every other element), up to before end. It returns
// the index of the run's last record and its span, or i when there is no
// run of minWordRun or more. The span lists exactly the words of the run
// (trace.Span, WordsPer 1: sparse over 8 bytes), at the run's key and in
// its order, with no event of the goroutine between them: every detector
// sees the same word accesses, at the first one's Seq, and the trace and
// the analysis a few bytes and a decode for the whole run. Not with TREE,
// which filters word events, nor when word events were asked for.
func wordRun(recs []rec, i, end int) (int, trace.Span) {
	r := &recs[i]
	if end-i < minWordRun || (r.op != trace.OpRead && r.op != trace.OpWrite) ||
		r.flags != trace.FlagValueUnknown || !rangesOn() {
		return i, 0
	}
	stride := recs[i+1].obj - r.obj
	if stride == 0 || stride > trace.MaxSpanStride {
		return i, 0
	}
	j := i + 1
	for j < end {
		x := &recs[j]
		if x.op != r.op || x.site != r.site || x.flags != r.flags || x.obj != recs[j-1].obj+stride {
			break
		}
		j++
	}
	if j-i < minWordRun {
		return i, 0
	}
	n := min(uint64(j-i), trace.MaxSpanCount, trace.MaxSpanBytes/stride)
	makeSpan := trace.MakeSpan
	if stride > 8 {
		makeSpan = trace.MakeSparseSpan
	}
	sp, ok := makeSpan(stride, n)
	if !ok {
		return i, 0
	}
	return i + int(sp.Count()) - 1, sp
}

// writeEvent writes g's next event, with the value or addresses in the
// records after it.
func writeEvent(g *gstate) {
	r := g.take()
	e := &wev
	e.G, e.Op, e.Flags, e.Obj, e.Value, e.Addrs = g.gid, r.op, r.flags, r.obj, 0, nil
	e.Site = trace.SiteID(r.site)
	if r.site >= wsites {
		e.Site = 0
	}
	waddrs = waddrs[:0]
	for g.avail > 0 {
		x := g.peek()
		if x.op == opVal {
			e.Value = x.obj
		} else if x.op == opAddr {
			waddrs = append(waddrs, x.obj)
		} else {
			break
		}
		g.take()
	}
	if e.Op == trace.OpMethodBegin {
		e.Addrs = waddrs
	}
	writeOut(e)
}

// forgetDrained drops the goroutines that ended and whose records are all
// written, with their chunks, from the registry; and frees the chunks the
// others have moved past.
func forgetDrained() {
	// The snapshot does not keep the states it held past the round: a
	// dropped goroutine's state, its chunks and channel counts would stay
	// reachable, and a program that counts its live heap objects
	// (runtime.MemStats.HeapObjects) would count them as its own.
	defer clear(wsnap)
	drop := 0
	for _, g := range wsnap {
		if g.avail > 0 {
			continue
		}
		if g.gone {
			for c := g.rc; c != nil; {
				nx := c.next.Load()
				freeChunk(c)
				c = nx
			}
			g.rc = nil
			drop++
			continue
		}
		// Free a chunk the goroutine has left, read to its last record
		// (its end, or where shed left it).
		if c := g.rc; c.next.Load() != nil && g.ri >= int(c.n.Load()) {
			g.peek() // not called with avail 0 past the end: it moves to next
		}
	}
	if drop == 0 {
		return
	}
	regMu.Lock()
	j := 0
	for _, g := range reg {
		if g.rc != nil {
			reg[j] = g
			j++
		}
	}
	clear(reg[j:])
	reg = reg[:j]
	regMu.Unlock()
}

// writeBlocked writes, after every other event, an OpBlock event for each
// goroutine blocked in a lock, WaitGroup or Cond operation (blockIn) as
// the trace is finished. Called by Finish with wmu held.
func writeBlocked() {
	regMu.Lock()
	gs := append([]*gstate(nil), reg...)
	regMu.Unlock()
	for _, g := range gs {
		obj := g.blockObj.Load()
		if obj == 0 || g.dead.Load() || finished {
			continue
		}
		at := g.blockAt.Load()
		e := &wev
		*e = trace.Event{G: g.gid, Op: trace.OpBlock, Obj: obj, Site: trace.SiteID(at >> 8), Value: at & 0xFF}
		if at>>8 >= uint64(wsites) {
			e.Site = 0
		}
		writeOut(e)
	}
}

// fail stops tracing after an I/O or encoding error. Called with wmu held.
func fail(err error) {
	if finished {
		return
	}
	finished = true
	live.Store(false)
	stopWriterTimer()
	fmt.Fprintf(os.Stderr, "racekit: tracing stopped: %v\n", err)
}
