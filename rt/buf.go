package rt

import (
	"runtime"
	"time"

	"github.com/racekit/racekit/filter/sample"
	"github.com/racekit/racekit/sched"
	"github.com/racekit/racekit/trace"
)

// Per-goroutine buffers (see "Global order" in the package comment). A
// goroutine appends fixed-size records to its own chain of chunks and
// commits them by one compare-and-swap of its word; the writer (writer.go:
// rounds in a timer's callback, or in a goroutine that helps) reads committed records, merges the goroutines' streams by
// key and encodes them.

// rec is one entry of a goroutine's buffer, 16 bytes: an event, or one of
// the markers below. The key of an event is not in its record: a key
// marker sets it for the events after it (a synchronization event takes
// the marker's seq with kind kindSync, a plain one the marker's key), so
// that a run of plain events costs 16 bytes each.
type rec struct {
	obj   uint64
	site  uint32
	op    trace.Op
	flags trace.Flags
	_     uint16
}

// Marker records (not valid trace.Ops).
const (
	opKey  trace.Op = 0xFD // obj: the key of the events that follow (kind kindAccess)
	opVal  trace.Op = 0xFE // obj: the value of the event before it
	opAddr trace.Op = 0xFF // obj: an address of the MethodBegin before it
)

// isTrailer reports whether op is that of a record that belongs to the
// event before it.
func isTrailer(op trace.Op) bool { return op >= opVal }

// Kinds in the low bits of a key: at one seq s, the synchronization event
// s comes before the plain events placed at s.
const (
	kindSync   = 0
	kindAccess = 1
)

func keyOf(s uint64, kind uint64) uint64 { return s<<2 | kind }

// A chunk is a run of a goroutine's records. The goroutine writes it; the
// writer reads the committed ones and frees the chunk once it has read all
// of them and the goroutine has moved on (next is set).
type chunk struct {
	recs []rec
	// n: the records the goroutine wrote here, valid once next is set;
	// atomic because a steal's redo may set it again (dropStale resets
	// next) while the writer reads it having seen the old next.
	n    OwnInt32
	next OwnPointer[chunk] // the chunk the goroutine continued in
}

// Chunk sizes: a goroutine's first chunk is small (many goroutines record
// little); each next one is larger, up to bigChunk.
const (
	firstChunk = 32
	bigChunk   = 4096
)

// sizeClass is the index of a chunk's size among chunkSizes (freeChunks,
// spareChunks).
func sizeClass(size int) int {
	switch size {
	case firstChunk:
		return 0
	case bigChunk:
		return 2
	}
	return 1
}

func newChunk(size int) *chunk {
	pending.Add(int64(size))
	if countingAllocs() {
		if c := spareChunk(size); c != nil {
			return c
		}
	}
	return getChunk(size)
}

// Spare chunks: while the program counts its allocations
// (testing.AllocsPerRun, a runtime.ReadMemStats pair), a goroutine whose
// buffer fills takes a chunk set aside when the count began, so that
// racekit's recording adds nothing to the count (a sync.Pool may allocate
// in Get, and a chunk boundary falls where the trace's length puts it).
var spareChunks [3]spareSet[chunk] // by size class

// chunkSizes are the chunk sizes, by size class.
var chunkSizes = [3]int{firstChunk, 512, bigChunk}

// sparesPerSize is how many chunks of each size a count starts with.
const sparesPerSize = 4

// reserveChunks sets spare chunks aside, at the start of a count.
func reserveChunks() {
	for i, size := range chunkSizes {
		spareChunks[i].fill(sparesPerSize, func() *chunk { return getChunk(size) })
	}
}

// spareChunk takes a spare chunk of size, if one is left.
func spareChunk(size int) *chunk { return spareChunks[sizeClass(size)].take() }

// spareSet holds objects set aside when a count of the program's
// allocations begins, which rt takes instead of allocating while it runs.
type spareSet[T any] struct {
	OwnMutex
	s []*T
}

// fill makes spares until the set holds n.
func (p *spareSet[T]) fill(n int, make func() *T) {
	p.Lock()
	defer p.Unlock()
	for len(p.s) < n {
		p.s = append(p.s, make())
	}
}

// take returns a spare, or nil if none is left.
func (p *spareSet[T]) take() *T {
	p.Lock()
	defer p.Unlock()
	n := len(p.s)
	if n == 0 {
		return nil
	}
	x := p.s[n-1]
	p.s = p.s[:n-1]
	return x
}

// give keeps x as a spare if the set holds fewer than n, and reports
// whether it did.
func (p *spareSet[T]) give(x *T, n int) bool {
	p.Lock()
	defer p.Unlock()
	if len(p.s) >= n {
		return false
	}
	p.s = append(p.s, x)
	return true
}

// freeChunk returns a chunk the writer is done with.
func freeChunk(c *chunk) {
	pending.Add(-int64(len(c.recs)))
	c.n.Store(0)
	c.next.Store(nil)
	putChunk(c)
}

// pending counts the records in chunks not yet freed. Above maxPending,
// goroutines wait for the writer (see throttle) so that memory stays
// bounded when they record faster than it encodes.
var pending struct {
	_ [64]byte // on a cache line of its own (see seq)
	OwnInt64
	_ [56]byte
}

var maxPending int64 = 1 << 21 // records (64 MiB); a variable for tests

// A goroutine's word is its key bound and its committed count:
//
//	k<<cntBits | committed mod 2^cntBits
//
// k is a lower bound of the key of every record the goroutine has not
// committed yet, or idleK when it holds none and will pick its next key
// from the global seq (see open). Only the goroutine writes an idle word;
// the writer may only turn an open word idle (steal). The count is exact
// because a goroutine never has 2^cntBits records unread (throttleWait
// holds it well below); the key leaves 40 bits for seq, 10^12
// synchronization events.
const (
	cntBits = 22
	cntMask = 1<<cntBits - 1
	idleK   = 1<<(64-cntBits) - 1
)

func packWord(k, n uint64) uint64 { return k<<cntBits | n&cntMask }
func wordK(w uint64) uint64       { return w >> cntBits }
func isIdle(w uint64) bool        { return w>>cntBits == idleK }

// seq is the global sequence: each synchronization event takes the next
// value. The writer renumbers the events it writes, so values left unused
// (an event dropped at Finish, a reservation redone after a steal) leave
// no gap in the file.
//
// Every goroutine's synchronization adds to it, so it sits on a cache line
// of its own: the linker had put it beside goidOff, which every hook reads,
// and on syncheavy 6% of perf's samples were on those reads missing.
var seq struct {
	_ [64]byte
	OwnUint64
	_ [56]byte
}

// raiseEvery is how many plain events a goroutine records between loads
// of the global seq that move its key up, so that a goroutine recording
// without synchronizing does not hold the writer's frontier back.
const raiseEvery = 64

// put appends one record to g's buffer.
func (g *gstate) put(op trace.Op, flags trace.Flags, site uint32, obj uint64) {
	if namesMemory(op) {
		g.markTouched(obj) // before the event (touched.go)
	}
	if g.wi == len(g.wc.recs) {
		g.nextChunk()
	}
	g.wc.recs[g.wi] = rec{obj: obj, site: site, op: op, flags: flags}
	g.wi++
	g.written++
	if op < opKey && positional(op, site) {
		g.nev++
	}
}

// positional reports whether an event counts in its goroutine's position
// (sched.Positional); only controlled mode has statements under test, and
// only accesses read ctl (as their hooks do: a goroutine's End may run
// while a test switches controlled mode off).
func positional(op trace.Op, site uint32) bool {
	return sched.Positional(op, (op == trace.OpRead || op == trace.OpWrite) && ctl && siteOf(site).atOp(op))
}

// putKey appends a key marker for key k unless the records before already
// have that key.
func (g *gstate) putKey(k uint64) {
	if k != g.kout {
		g.put(opKey, 0, 0, k)
		g.kout = k
	}
}

// putEvent appends the records of one event: its key marker if needed, the
// event, and its value if it has one.
func (g *gstate) putEvent(op trace.Op, flags trace.Flags, site uint32, obj, val uint64) {
	g.putKey(g.k)
	g.put(op, flags, site, obj)
	if val != 0 && trace.StoresValue(op, flags) {
		g.put(opVal, 0, 0, val)
	}
}

func (g *gstate) nextChunk() {
	size := len(g.wc.recs) * 16
	if size > bigChunk {
		size = bigChunk
	}
	g.moveTo(newChunk(size))
	if size == bigChunk {
		if pending.Load() > maxPending/64 {
			// Some 8 big chunks wait: a round now (wakeWriter). Less
			// waits for the next tick, so that a burst of recording
			// starts no goroutine of rt's.
			wakeWriter()
		}
		if pending.Load() > maxPending/8 {
			// The writer falls behind: write what can be written, at
			// the next plain event.
			g.help = true
			g.tick = 0
		}
	}
	if pending.Load() > maxPending {
		g.throttle = true
		g.tick = 0
	}
}

// moveTo makes g write on in c, linked after its current chunk, which
// keeps the records written there.
func (g *gstate) moveTo(c *chunk) {
	old := g.wc // its next is nil: only g sets it, here (stolen resets it)
	old.n.Store(int32(g.wi))
	if g.cc == old && g.ci == g.wi {
		// Nothing uncommitted in old: once next is set, the writer may
		// free it, so g must not look at it again.
		g.cc, g.ci = c, 0
	}
	old.next.Store(c)
	g.wc, g.wi = c, 0
}

// shed moves g on to a small chunk, as nextChunk moves it on to a larger
// one, when everything it wrote is committed: the writer frees the old
// chunk once it has read it, and a goroutine about to wait long (Shed)
// holds 32 records meanwhile, not up to bigChunk.
func (g *gstate) shed() {
	if len(g.wc.recs) == firstChunk || g.cc != g.wc || g.ci != g.wi {
		return // small already, or records not committed
	}
	g.moveTo(newChunk(firstChunk))
}

// Shed is called by a goroutine about to wait for long (a parallel test
// pausing until its parent's function returns: rttest.Parallel), so that
// it keeps a small buffer meanwhile (gstate.shed).
func Shed() {
	if !on || !live.Load() {
		return
	}
	cur().shed()
}

// open makes g hold the frontier before it records an event (only needed
// when its word is idle). It first publishes its old key, a valid bound,
// and only then loads the global seq: the writer, which loads the seq
// before it reads the words, either sees g's bound or has loaded a seq no
// larger than the one g loads (sync/atomic is sequentially consistent).
// With raise set, g moves its key up to that seq.
//
// Every record is written after an open since the writer last saw g's word
// idle, so open is where the writer's timer is armed again after it went
// quiet (writer.go): after the store of the word, one load of a flag that
// is nearly always true while the program records.
func (g *gstate) open(raise bool) {
	g.last = packWord(g.k, g.last)
	g.word.Store(g.last)
	if !wflags.armed.Load() {
		armWriter()
	}
	if raise {
		g.raiseTo(seq.Load())
	}
}

// raiseTo moves g's key for plain events up to seq s. Any key between
// g's latest synchronization and a seq loaded during the hook is a valid
// place for the events the hook records (package comment).
func (g *gstate) raiseTo(s uint64) {
	if k := keyOf(s, kindAccess); k > g.k {
		g.k = k
	}
}

// commit publishes the records written since the last commit; with idle,
// g also stops holding the frontier. It fails only if the writer stole
// g's word (see stolen) or tracing stopped.
func (g *gstate) commit(idle bool) {
	if !g.publish(idle) {
		g.stolen(idle)
	}
}

// publish makes the records written so far the committed ones, unless the
// writer stole g's word (the compare-and-swap fails).
func (g *gstate) publish(idle bool) bool {
	k := g.k
	if idle {
		k = idleK
	}
	w := packWord(k, g.written)
	if !g.word.CompareAndSwap(g.last, w) {
		return false
	}
	g.last = w
	g.cc, g.ci = g.wc, g.wi
	g.committed, g.kcommit, g.nevc = g.written, g.kout, g.nev
	return true
}

// stolen handles a failed commit. The writer turned g's word idle while g
// was writing records: it has read the committed ones and may since have
// written events up to the seq it loaded before, so the uncommitted
// records (this hook's, and frame events before it: see frame) need new keys. g opens
// again (loading a seq at least as large as the writer's), and writes
// them again over themselves: its plain events at its new key, its
// synchronization events with new seqs. New keys are taken within the
// hook, which keeps them valid (package comment); the hooks of atomics
// hold their stripe lock across the commit, so their order per address
// stays the real one.
func (g *gstate) stolen(idle bool) {
	for {
		cur := g.word.Load()
		g.last = cur
		// Take the uncommitted records out and go back to the commit.
		g.redo = g.redo[:0]
		for c, i := g.cc, g.ci; c != g.wc || i != g.wi; i++ {
			if c != g.wc && i == len(c.recs) {
				c, i = c.next.Load(), -1
				continue
			}
			g.redo = append(g.redo, c.recs[i])
		}
		g.wc, g.wi = g.cc, g.ci
		g.dropStale()
		g.written, g.kout, g.nev = g.committed, g.kcommit, g.nevc
		if !live.Load() {
			return // tracing stopped: the records are dropped
		}
		g.open(true)
		var nsync uint64
		for i := range g.redo {
			if op := g.redo[i].op; op < opKey && !keyedAtLoad(op) {
				nsync++
			}
		}
		s := seq.Add(nsync) - nsync + 1
		for i := range g.redo {
			r := &g.redo[i]
			switch {
			case r.op == opKey:
				// Keys are written anew.
			case isTrailer(r.op):
				g.put(r.op, r.flags, r.site, r.obj)
				if r.op == opVal && i > 0 && g.redo[i-1].op.IsRange() {
					g.countRange(g.redo[i-1].op, g.redo[i-1].site, trace.Span(r.obj))
				}
			case keyedAtLoad(r.op):
				g.putKey(g.k)
				g.put(r.op, r.flags, r.site, r.obj)
			default:
				g.raiseTo(s)
				s++
				g.putKey(g.k)
				g.put(r.op, r.flags, r.site, r.obj)
			}
		}
		if g.publish(idle) {
			return
		}
	}
}

// dropStale frees the chunks after g.wc, the chunk a steal's redo starts
// in: their records are the stolen ones, being written again from g.wc
// on. The redo may be shorter than they were (key markers merge), so it
// may end in g.wc; the old link must not stay, or g would go on in a
// chunk the writer may free once it has read g.wc to its end, and the
// writer would follow the link to the stale records (TestStealRedoShorter).
// The writer has not gone past g.wc: a chunk with records after the
// commit point (g.ci < len) is not read to its end, and one that ends at
// it has no next (nextChunk moves the commit point on before linking).
func (g *gstate) dropStale() {
	nx := g.wc.next.Load()
	if nx == nil {
		return
	}
	g.wc.next.Store(nil)
	for nx != nil {
		c := nx
		nx = c.next.Load()
		freeChunk(c)
	}
}

// park stops g holding the frontier (before a hook blocks), if it does.
func (g *gstate) park() {
	if isIdle(g.last) {
		return
	}
	if g.publish(true) { // with any frame events left (gstate.frame)
		return
	}
	if g.written != g.committed {
		g.stolen(true) // frame events to redo
		return
	}
	g.last = g.word.Load() // stolen: idle already, nothing uncommitted
}

// throttleWait waits, idle, while the writer is far behind and has not
// yet written g's own records (every goroutine holds a chunk, so pending
// alone may stay high). It writes them itself when it can.
func (g *gstate) throttleWait() {
	g.throttle = false
	g.park()
	// In a synctest bubble, time.Sleep runs on the bubble's fake clock: it
	// would advance the program's time while rt waits, and sleepers left
	// when the bubble's main goroutine returns are a deadlock to synctest.
	// There the goroutine helps with one round and goes on (memory is not
	// bounded by waiting in a bubble); the rounds, on the runtime's clock
	// (clock.go), steal from a goroutine blocked unseen after stealAfter.
	if inBubble() {
		helpWrite()
		return
	}
	for i := 0; pending.Load() > maxPending/2 && g.out.Load() < g.written && live.Load(); i++ {
		// Another round at once only after one that wrote: a round that
		// wrote nothing waits for a goroutine holding the frontier (one
		// blocked in untraced code is stolen from after stealAfter), and
		// each round looks at every goroutine: throttled goroutines that
		// ran rounds back to back spent half of a worker pool's test
		// (1000 workers) there.
		if n, ok := helpWrite(); ok && n > 0 {
			continue
		}
		if i < 100 {
			runtime.Gosched()
		} else {
			time.Sleep(100 * time.Microsecond)
		}
	}
}

// helpWrite runs a round of the writer in the calling goroutine, unless
// one is running, and reports whether it did and how many events the
// round wrote. Goroutines that fill big
// chunks while the writer falls behind call it (at their next plain
// event, with nothing uncommitted): on a busy machine the writer's
// callback may wait long for a processor, while the goroutine that
// filled a chunk has one and its data in cache.
func helpWrite() (written int, ok bool) {
	if !wmu.TryLock() {
		return 0, false
	}
	if !finished {
		written = round(roundNormal)
	}
	wmu.Unlock()
	return written, true
}

// plain records one plain event (read, write, function entry or exit).
func (g *gstate) plain(op trace.Op, flags trace.Flags, site uint32, obj, val uint64) {
	g.prepPlain()
	if g.k != g.kout || val != 0 {
		g.putEvent(op, flags, site, obj, val)
		g.commit(false)
		return
	}
	// put and commit, by hand: the hottest path.
	if op == trace.OpRead || op == trace.OpWrite {
		g.markTouched(obj) // before the event (touched.go)
	}
	if g.wi == len(g.wc.recs) {
		g.nextChunk()
	}
	g.wc.recs[g.wi] = rec{obj: obj, site: site, op: op, flags: flags}
	g.wi++
	g.written++
	if (op == trace.OpRead || op == trace.OpWrite) && ctl && siteOf(site).atOp(op) {
		g.nev++ // an access at a statement under test (positional)
	}
	w := packWord(g.k, g.written)
	if g.word.CompareAndSwap(g.last, w) {
		g.last = w
		g.cc, g.ci = g.wc, g.wi
		g.committed, g.nevc = g.written, g.nev
		return
	}
	g.stolen(false)
}

// prepPlain makes g ready to record plain events: open, with its key
// raised every raiseEvery events and after a goroutine born in untraced
// code appeared (so that events after it are placed after its Begin),
// and with a lock's pending acquisition recorded first (acquireLock).
// The rare cases share one test: they set tick to 0. Allocations of
// goroutines without state (untracedMask) are written first too: their
// object may have reached g through synchronization racekit does not see
// (an untraced goroutine's response handed back inside an HTTP client's
// call), and g's next access to it must not meet the accesses of the dead
// object that was at its address.
func (g *gstate) prepPlain() {
	if g.shown < g.depth {
		g.showFrames()
	}
	if g.tick--; g.tick <= 0 || isIdle(g.last) || untracedMask.Load() != 0 {
		g.prepSlow()
	}
}

func (g *gstate) prepSlow() {
	if g.throttle {
		g.throttleWait()
	} else if g.help && allocsCounted.Load() == 0 { // not while a count holds the writer (holdWriter)
		g.help = false
		helpWrite()
	}
	if gen := generation.Load(); gen != g.gen {
		g.newGeneration(gen)
	}
	if g.hasAllocs() {
		g.flushAllocs()
	}
	g.tick = raiseEvery
	if isIdle(g.last) {
		g.open(true)
	} else {
		g.raiseTo(seq.Load())
	}
	if g.lockPend.on {
		// Before this event, and before any frame it shows (showFrames
		// marks them shown first, so its first FuncEnter comes here).
		g.flushPending()
	}
}

// isPlain reports whether op is recorded without a global seq: only data
// accesses and function boundaries, which create no happens-before edge
// and need not be ordered against other goroutines' events beyond their
// goroutine's synchronization.
func isPlain(op trace.Op) bool { return plainOps[op] }

var plainOps = [256]bool{trace.OpRead: true, trace.OpWrite: true, trace.OpFuncEnter: true, trace.OpFuncExit: true,
	trace.OpReadRange: true, trace.OpWriteRange: true}

// keyedAtLoad reports whether op takes no seq of its own but is keyed as a
// plain event, at a seq loaded after the operation it records: a plain
// event, or an acquire (Lock, RLock, a channel receive, Wait, ...). An
// acquire only receives edges, from releases of its object. The release an
// acquire observes took its seq before its operation, which came before
// the acquire's operation, which came before the load: the release sorts
// first. A release that sorts after it added to seq after the load, so its
// operation came after the acquire's and the acquire cannot have observed
// it. So the order is the one a seq of its own would give, without an
// atomic add on the counter every goroutine shares.
func keyedAtLoad(op trace.Op) bool { return loadOps[op] }

var loadOps = func() [256]bool {
	t := plainOps
	t[trace.OpAcquire], t[trace.OpSyncAcquire] = true, true
	return t
}()

// pendingAcquire is an exclusive lock's acquisition a sampled run records
// with the goroutine's next event (acquireLock).
type pendingAcquire struct {
	on   bool
	site uint32
	obj  uint64
}

// putPending writes g's pending acquisition at g's key (not committed):
// an acquire takes no seq (see keyedAtLoad), and the caller has raised the
// key to a seq loaded since the lock was taken.
func (g *gstate) putPending() {
	g.putEvent(trace.OpAcquire, 0, g.lockPend.site, g.lockPend.obj, 0)
	g.lockPend.on = false
}

// flushPending records g's pending acquisition on its own.
func (g *gstate) flushPending() {
	if isIdle(g.last) {
		g.open(true)
	} else {
		g.raiseTo(seq.Load())
	}
	g.putPending()
	g.commit(false)
}

// stayOpen reports whether g keeps holding the frontier after recording a
// synchronization event of op, saving the next plain event the trip
// through open. It goes idle after the events that hooks record before an
// operation that may block (a release of a sync object: channel send and
// receive, select, I/O; a MethodBegin: a call into untraced code; End);
// the hooks of the other blocking operations park first (MutexLock,
// WaitGroupWait, CondWait, Once). A goroutine that blocks anyway while it
// holds the frontier is stolen from after stealAfter.
func stayOpen(op trace.Op) bool {
	switch op {
	case trace.OpSyncRelease, trace.OpMethodBegin, trace.OpEnd:
		return false
	}
	return true
}

// sync records one synchronization event, with its addresses for a
// MethodBegin. It takes the next global seq (an acquire: a loaded one,
// keyedAtLoad), and g goes idle after it unless stayOpen.
func (g *gstate) sync(op trace.Op, flags trace.Flags, site uint32, obj, val uint64, addrs []uint64) {
	// An allocation shows no frame: its stack is in no report, and showing
	// them (and their FuncExits) cost a run of small constructors more than
	// the allocations themselves.
	show := g.shown < g.depth && op != trace.OpAlloc && !(sampling && sample.Frameless(op))
	if g.lockPend.on && show {
		g.flushPending() // before the frames this event shows
	}
	if show {
		g.showFrames()
	}
	if g.hasAllocs() {
		g.flushAllocs() // before an operation that may publish them
	}
	if op == trace.OpAlloc {
		g.forget(obj, val) // no edge: the epoch goes on for other words
	} else {
		g.newEpoch(op) // a new epoch for dedup
	}
	if g.throttle {
		g.throttleWait()
	}
	if isIdle(g.last) {
		g.open(false) // the seq taken next is fresh: no raise needed
	}
	if keyedAtLoad(op) {
		g.raiseTo(seq.Load()) // after the operation (see keyedAtLoad)
		if g.lockPend.on {
			g.putPending()
		}
		g.putEvent(op, flags, site, obj, val)
		g.commit(false)
		return
	}
	s := seq.Add(1)
	if g.lockPend.on {
		// The pending acquisition goes just before this event: s-1 is the
		// value a load at the add would have seen.
		g.raiseTo(s - 1)
		g.putPending()
	}
	g.raiseTo(s)
	g.putEvent(op, flags, site, obj, val)
	for _, a := range addrs {
		g.put(opAddr, 0, 0, a)
	}
	g.commit(!stayOpen(op))
}
