package rt

import (
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/racekit/racekit/trace"
)

// gstate is what rt knows of one goroutine.
type gstate struct {
	goid    uint64
	gid     trace.GID
	traceNo uint32       // traceCount when it was made
	epoch   uint32       // advanced by each synchronization event of the goroutine
	seen    *seenTable   // accesses recorded in the current epoch (see dedup)
	rseen   *rangeSeen   // range events recorded in the current epoch (rangeRepeat)
	allocs  []allocRange // allocations not yet written (mallochook.go)
	// The leaf of touched bits g marked last, and its number (addr >>
	// leafShift, +1: 0 is none): markTouched's cache (touched.go).
	tleaf    *touchedLeaf
	tleafNum uint64

	// untraced: born in untraced code (the testing framework, net/http);
	// depth: its traced frames (see Enter). gp: the runtime's g of such a
	// goroutine (nil if unknown), which tells the writer it has ended
	// (retire).
	untraced bool
	depth    int32
	mapInit  bool     // the sync.Map an untraced method is on had had its first operation (maphook.go)
	valueTyp trace.Op // what an untraced atomic.Value method does to the Value's type word (atomichook.go)
	// atomicSeen: atomic words whose untraced Load this goroutine
	// recorded, and their count of stores then (atomichook.go), by address.
	atomicSeen [8]atomicSeen
	gp         unsafe.Pointer
	// outChans: channels traced code returned to untraced code on this
	// goroutine (ChanOut), acquired at each entry from untraced code.
	outChans []uint64
	samp     sampleState    // LiteRace's dispatch state (sample.go)
	edges    edgeState      // its view of the objects it synchronizes on (sync.go's edge)
	lockPend pendingAcquire // a lock's acquisition not yet recorded (acquireLock)
	msgs     msgPending     // its channel operations begun and not completed (chanmsg.go)
	// fills: the buffers of Read calls under way, innermost last (FillW).
	fills [maxFills]fillPend
	nfill int
	// sorts: the sorts begun (SortPre) and not ended (SortPost), and a
	// snapshot buffer to reuse.
	sorts    []sortSnap
	sortFree []byte
	// cbLocks: std calls under way that call back holding a mutex
	// (CallbackLock), innermost last.
	cbLocks []cbLock
	// shown: the frames whose FuncEnter is recorded; the fns of the
	// others, up to depth, in pend (unsampled frames: showFrames).
	shown int32
	pend  []uint32
	// left: the depths of frames whose function returned and runs its
	// deferred calls: their FuncExit is recorded (Ret), their depth goes
	// at LeaveRet.
	left []int32

	// The goroutine's own side of its buffer (buf.go).
	gen       uint32 // generation last seen
	k         uint64 // key of its next plain event
	last      uint64 // the value it last stored in word
	written   uint64 // records written
	wc        *chunk // chunk being written, and the next index in it
	wi        int
	cc        *chunk // first record not committed
	ci        int
	kout      uint64 // key of the records written (as of the last key marker)
	committed uint64 // records committed, and kout then
	kcommit   uint64
	// Positional events (sched.Positional) written and committed: the
	// position of the goroutine's next event, which controlled mode gives
	// each scheduling point (sched.Point.Ev).
	nev, nevc int
	root      int   // born in untraced code: its rank among those goroutines
	redo      []rec // scratch for stolen
	tick      int32 // plain events until the next prepSlow
	throttle  bool  // wait for the writer before the next event
	help      bool  // run a writer round at the next plain event
	// What it is blocked on, while in a Lock, RLock, WaitGroup.Wait or
	// Cond.Wait that blocks (blockIn): the object, and site<<8|kind;
	// Finish reads them (writeBlocked).
	blockObj, blockAt OwnUint64

	// The shared word and the writer's fields each on cache lines of
	// their own: the goroutine's commits do not contend with the
	// writer's bookkeeping.
	_    [64]byte
	word OwnUint64 // key bound and committed count (buf.go)
	dead OwnBool   // ended: its last record is committed
	out  OwnUint64 // records the writer has read (for throttleWait)
	_    [64]byte

	// The writer's side (writer.go), under wmu.
	rc       *chunk // next record to read, in rc at ri
	ri       int
	kcur     uint64 // key set by the last key marker read
	consumed uint64 // records read
	avail    uint64 // committed records not read, as of this round
	head     uint64 // key of the next record
	wlast    uint64 // word as of the last round, and since when
	wsince   int64  // nanotime
	gone     bool   // dead as of this round
}

// newGstate makes the state of a goroutine, on that goroutine, and
// registers it with the writer. Its word is idle: its first event opens it.
func newGstate(goid uint64, gid trace.GID) *gstate { return newGstateBorn(goid, gid, false) }

// newGstateBorn is newGstate, for a goroutine born in untraced code if
// untraced: its fields are set before the writer can see the state (a
// round reads gp, retire's ended, from the goroutine that helps write).
func newGstateBorn(goid uint64, gid trace.GID, untraced bool) *gstate {
	c := newChunk(firstChunk)
	s := &gstate{goid: goid, gid: gid, traceNo: traceCount.Load(), wc: c, cc: c, rc: c, gen: generation.Load()}
	if untraced {
		s.untraced = true
		if goidOff != 0 && !ctl {
			s.gp = getg()
		}
	}
	s.last = packWord(idleK, 0)
	s.word.Store(s.last)
	chanKnown(goid)
	regMu.Lock()
	reg = append(reg, s)
	regMu.Unlock()
	return s
}

// traceCount counts the traces started: a state held across a hook pair
// (SendPreG, SendPost) is of an earlier trace when a test started another
// meanwhile.
var traceCount OwnUint32

// The registry: every goroutine the writer reads from.
var (
	regMu OwnMutex
	reg   []*gstate
)

// goidOff is the offset of goid inside the runtime's g, or 0 when unknown
// (then goid parses runtime.Stack).
var goidOff uintptr

// The goroutine table: a direct-mapped cache indexed by goid, backed by a
// map under defMu. Only a goroutine itself installs its entry in the cache, and
// an entry is used only after its goid is checked, so a collision costs a
// trip to the map, never a wrong identity.
const gtabSize = 1 << 12

var (
	gtab [gtabSize]OwnPointer[gstate]
	gmap = map[uint64]*gstate{}
)

// goid returns the current goroutine's runtime ID.
func goid() uint64 {
	if goidOff != 0 {
		return *(*uint64)(unsafe.Add(getg(), goidOff))
	}
	return goidSlow()
}

// goidSlow parses "goroutine N [" from the current goroutine's stack.
func goidSlow() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	const prefix = "goroutine "
	if len(b) < len(prefix) || string(b[:len(prefix)]) != prefix {
		return 0
	}
	var id uint64
	for _, c := range b[len(prefix):] {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
	}
	return id
}

// maxGoidOff bounds the search for goid inside g: it is at 152 in Go 1.26
// on 64-bit platforms, and the runtime's g is larger than the bound (a
// -race build's checkptr rejects pointers past the end of an allocation).
const maxGoidOff = 256

// probeGoid finds goidOff: the offsets of g at which every one of several
// goroutines holds its own goid. It leaves goidOff 0 unless exactly one
// offset qualifies.
func probeGoid() {
	if !haveGetg || unsafe.Sizeof(uintptr(0)) != 8 {
		return
	}
	cands := make([]bool, maxGoidOff/8)
	for i := range cands {
		cands[i] = true
	}
	check := func() {
		g := getg()
		id := goidSlow()
		if g == nil || id == 0 {
			clear(cands)
			return
		}
		for i := range cands {
			if *(*uint64)(unsafe.Add(g, uintptr(i)*8)) != id {
				cands[i] = false
			}
		}
	}
	check()
	// Goroutines with other goids rule out fields that held the main
	// goroutine's goid by chance.
	for i := 0; i < 4; i++ {
		done := make(chan struct{})
		go func() {
			check()
			close(done)
		}()
		<-done
	}
	found := -1
	for i, ok := range cands {
		if ok {
			if found >= 0 {
				return
			}
			found = i
		}
	}
	if found > 0 {
		goidOff = uintptr(found) * 8
	}
	probeStack()
	probeStatus()
}

// The runtime's goroutine states that rt reads (runtime2.go), and its scan
// bit, set while the garbage collector scans a goroutine's stack.
const (
	gRunning = 2
	gWaiting = 4
	gDead    = 6
	gScan    = 0x1000
)

// statusOff is the offset in g of its status (atomicstatus), 0 if unknown:
// the word before the goid in Go 1.26's g, checked by probeStatus.
var statusOff uintptr

func gStatus(gp unsafe.Pointer) uint32 { return statusAt(gp, statusOff) }

func statusAt(gp unsafe.Pointer, off uintptr) uint32 {
	return atomic.LoadUint32((*uint32)(unsafe.Add(gp, off))) &^ gScan
}

// probeStatus sets statusOff if the word before the goid reads as running
// on this goroutine, waiting on one blocked in a receive, and dead on it
// once it has returned (unless its g already runs another goroutine).
func probeStatus() {
	if goidOff < 8 {
		return
	}
	off := goidOff - 8
	if statusAt(getg(), off) != gRunning {
		return
	}
	gps := make(chan unsafe.Pointer)
	release := make(chan bool)
	go func() {
		gps <- getg()
		<-release
	}()
	gp := <-gps
	id := *(*uint64)(unsafe.Add(gp, goidOff))
	waited := false
	for i := 0; i < 10000 && !waited; i++ {
		if waited = statusAt(gp, off) == gWaiting; !waited {
			runtime.Gosched()
		}
	}
	close(release)
	for i := 0; i < 10000 && waited; i++ {
		if *(*uint64)(unsafe.Add(gp, goidOff)) != id {
			return // reused before it was seen dead: not checked
		}
		if statusAt(gp, off) == gDead {
			statusOff = off
			return
		}
		runtime.Gosched()
	}
}

// Stack memory. Go keeps pointers to a stack object out of the heap and
// out of other goroutines' stacks (the runtime moves a stack and adjusts
// only the pointers inside it), so no other goroutine's code can reach a
// goroutine's stack: an access there races with nothing. And a moved or
// freed stack leaves its memory to other goroutines' stacks, where one
// address holds unrelated variables over time, with no allocation rt could
// record (Go's race detector clears the shadow memory of each stack it
// allocates, stackalloc's racemalloc). So accesses and allocations at
// addresses inside the current goroutine's stack are not recorded
// (onStack). The runtime's g begins with its stack bounds, [lo, hi).
var stackKnown bool

// probeStack sets stackKnown if g's first two words bound a local
// variable's address on this goroutine and on another.
func probeStack() {
	if goidOff == 0 {
		return
	}
	var x uintptr
	check := func(p *uintptr) bool {
		g := getg()
		lo, hi := *(*uintptr)(g), *(*uintptr)(unsafe.Add(g, unsafe.Sizeof(uintptr(0))))
		a := uintptr(unsafe.Pointer(p))
		return lo < hi && lo <= a && a < hi
	}
	ok := check(&x)
	done := make(chan bool)
	go func() {
		var y uintptr
		done <- check(&y)
	}()
	stackKnown = <-done && ok
}

// onStack reports whether a is an address in the current goroutine's
// stack (false when stackKnown is not set).
func onStack(a uint64) bool {
	if !stackKnown {
		return false
	}
	return inStack(getg(), a)
}

// inStack reports whether a is inside the stack of the runtime g gp.
func inStack(gp unsafe.Pointer, a uint64) bool {
	return uint64(*(*uintptr)(gp)) <= a && a < uint64(*(*uintptr)(unsafe.Add(gp, unsafe.Sizeof(uintptr(0)))))
}

// cur returns the current goroutine's state, making one (a goroutine born
// in untraced code: Parent NoParent, a Begin event) on its first event.
func cur() *gstate {
	id := goid()
	slot := &gtab[id&(gtabSize-1)]
	if s := slot.Load(); s != nil && s.goid == id {
		return s
	}
	return curSlow(id, slot)
}

func curSlow(id uint64, slot *OwnPointer[gstate]) *gstate {
	defMu.Lock()
	s := gmap[id]
	if s != nil {
		defMu.Unlock()
		slot.Store(s)
		return s
	}
	gid := trace.GID(ngors)
	ngors++
	defs = append(defs, def{g: trace.Goroutine{ID: gid, Parent: trace.NoParent}})
	s = newGstateBorn(id, gid, true)
	s.root = nroots
	nroots++
	rootGoids = append(rootGoids, id)
	gmap[id] = s
	defMu.Unlock()
	slot.Store(s)
	s.sync(trace.OpBegin, 0, 0, 0, 0, nil)
	// Detectors order a goroutine born in untraced code after every
	// event so far, which starts a new epoch of every goroutine. The
	// generation moves after the Begin has its seq: a goroutine that sees
	// the new generation raises its key past the Begin (prepPlain).
	generation.Add(1)
	return s
}

// ended reports whether s's goroutine, born in untraced code, has ended:
// its g is dead, or runs another goroutine (goids are never reused). The
// runtime keeps every g it made (allgs), so gp stays valid. Without
// statusOff, a g that ended and is not yet reused is not seen.
func (s *gstate) ended() bool {
	if s.gp == nil {
		return false
	}
	return *(*uint64)(unsafe.Add(s.gp, goidOff)) != s.goid || statusOff != 0 && gStatus(s.gp) == gDead
}

// retire forgets the state of a goroutine born in untraced code that has
// ended: no End hook runs for one (it returned to untraced code, which
// ended it), and a test's HTTP server makes one per connection, each
// read by every round of the writer (x/net's http2 tests left some 220k).
// Its records are all committed, its word final: the writer takes it idle
// and drops the state once it has written them (forgetDrained). The trace
// keeps what it recorded, and no End, as before. The writer calls it.
func retire(s *gstate) {
	for {
		wd := s.word.Load()
		if isIdle(wd) || s.word.CompareAndSwap(wd, packWord(idleK, wd)) {
			break
		}
	}
	defMu.Lock()
	if gmap[s.goid] == s {
		delete(gmap, s.goid)
	}
	defMu.Unlock()
	gtab[s.goid&(gtabSize-1)].CompareAndSwap(s, nil)
	s.dropSeen()
	s.dead.Store(true)
}

// claim makes the current goroutine gid (a goroutine started by an
// instrumented go statement).
func claim(gid trace.GID) *gstate {
	s := newGstate(goid(), gid)
	install(s)
	return s
}

// install makes s the state of its goroutine (s.goid).
func install(s *gstate) {
	defMu.Lock()
	gmap[s.goid] = s
	defMu.Unlock()
	gtab[s.goid&(gtabSize-1)].Store(s)
}

// forget forgets the current goroutine, which is ending: its records are
// all committed, and the writer drops it once it has written them.
func forget(s *gstate) {
	defMu.Lock()
	delete(gmap, s.goid)
	defMu.Unlock()
	gtab[s.goid&(gtabSize-1)].CompareAndSwap(s, nil)
	s.park()
	s.dead.Store(true)
	s.dropSeen()
}
