package rt

import (
	"strconv"
	"unsafe"

	"github.com/racekit/racekit/trace"
)

// Dedup. Between two synchronization events of a goroutine (one epoch),
// repeating an access it already made to the same word adds nothing a
// happens-before detector can use: the repeat has the same vector clock, so
// it races with exactly the accesses the first one races with (a write
// covers a later read). rt drops such repeats, which makes loops over the
// same data cheap. An allocation ends the epoch only for the words of the
// new object (forget); each word of a multi-word access (a range, a copy) is
// dropped or recorded on its own, and copy records its writes before its
// reads, so a copy within one slice records each word once. What is lost is only the site of the repeat: hb then
// reports the race on that word at the first access's site. The epoch also
// ends when a goroutine born in untraced code appears (detectors order it
// after everything, starting a new epoch everywhere), and after each GC
// cycle: a global generation counts both. A GC frees objects whose
// addresses a goroutine may hold in its table, and the allocator hands
// them out again; an allocation by another goroutine is not seen by the
// goroutine's table (forget clears its own only), so without the cycle a
// goroutine that read a dead object, and in the same epoch (atomic loads
// between, which only acquire) read a new one at its address, had the
// second read dropped, and its race with the new object's next write was
// missed (e2e TestRaceGCReusedAddress). The patched runtime adds to the
// generation at the first allocation after a cycle's mark termination,
// before any freed memory is handed out (generationWord). RACEKIT_DEDUP=0
// records every access.

var (
	dedup      bool
	generation OwnUint32
)

// generationWord is the generation's word, which the patched runtime adds
// to (instrument/runtimehook.go: racekitGCGen): OwnUint32 is its
// uint32 alone.
func generationWord() *uint32 { return (*uint32)(unsafe.Pointer(&generation)) }

// dedupAcquires (RACEKIT_DEDUP=release) keeps the epoch going across an
// operation that only acquires: a lock's acquisition, a load of an atomic
// word, a channel operation's completion, a join, a sync object's acquire.
// Such an operation leaves the goroutine's own clock component as it was
// (clock.Tracker ticks only where it publishes C_t), so an access repeated
// after it is one FastTrack skips by its same-epoch rules, and it races
// with nothing the first access does not race with: whatever is ordered
// after the first is ordered after a release of the goroutine's, which
// comes after the repeat too. Go's race detector (ThreadSanitizer v3 since
// Go 1.19) skips such a repeat as well: its thread epoch moves at releases
// only, and an access its shadow holds at that epoch is not checked again.
// The predictive detectors and hb (every site pair) see a lock's critical
// section or each site, so racekit sets it for FastTrack alone (cmd/racekit
// recordEnvFor). A regex engine that loads an atomic clock at each
// position of its input (chroma's lexers) recorded its state again at
// every position.
var dedupAcquires bool

// newEpoch ends g's dedup epoch at a synchronization event op, unless
// dedupAcquires keeps it (acquireOnly).
func (g *gstate) newEpoch(op trace.Op) {
	if !dedupAcquires || !acquireOnly(op) {
		g.epoch++
	}
}

// acquireOnly reports whether a synchronization event only acquires: the
// operations after which clock.Tracker.Sync does not tick the goroutine (a
// channel operation's completion is a SyncAcquire with its message; its
// begin, a SyncRelease, published).
func acquireOnly(op trace.Op) bool {
	switch op {
	case trace.OpAcquire, trace.OpSyncAcquire, trace.OpAtomicLoad, trace.OpJoin:
		return true
	}
	return false
}

// A goroutine's table is direct-mapped by word. It starts small, so that
// the many goroutines that make few accesses cost little, and grows as the
// goroutine records more: a loop nest that sweeps a matrix many times in
// one epoch (a worker between two synchronizations) repeats a working set
// far wider than a small table, and each conflict records the word again.
// Tables past the second size count against seenBudget, bytes held by
// live goroutines: a program with many such goroutines keeps the second
// size for the rest.
const (
	forgetMax  = 64 // words an allocation clears from the table (forget)
	smallSeen  = 32
	seenBudget = 128 << 20
)

// seenSizes: a table of seenSizes[i].size entries is replaced by the next
// size once the goroutine has recorded seenSizes[i+1].after accesses (the
// first growth) or conflicts (the others).
var seenSizes = [...]struct{ size, after int }{
	{smallSeen, 0},
	{2048, 4096},
	{1 << 14, 1 << 13},
	{1 << 17, 1 << 14},
}

// seenBytes is what the tables past the second size hold.
var seenBytes OwnInt64

// maxSeenLevel is the largest size a table grows to, an index in
// seenSizes: RACEKIT_DEDUP_MAX=N keeps tables at N entries or fewer (the
// overhead benchmark's baseline for the larger sizes).
var maxSeenLevel = len(seenSizes) - 1

func setDedupMax(v string) {
	maxSeenLevel = len(seenSizes) - 1
	n, err := strconv.Atoi(v)
	if v == "" || err != nil {
		return
	}
	for maxSeenLevel > 0 && seenSizes[maxSeenLevel].size > n {
		maxSeenLevel--
	}
}

// seenEntry is what a goroutine recorded in one epoch at the addresses of
// one word: bit i of r (w) says an access at addr+i was recorded as a
// read (a write). An access is matched by its address alone, as detectors
// match events: one entry per word keeps the bytes of a word read in turn
// (a byte loop, a rolling hash) from pushing one another out.
type seenEntry struct {
	addr  uint64 // the word's address (a multiple of 8); 0: none
	epoch uint32
	r, w  uint8
}

// covers reports whether e holds an access at a that covers op: a write
// covers a read and a write, a read only a read.
func (e *seenEntry) covers(a uint64, op trace.Op) bool {
	bit := uint8(1) << (a & 7)
	if op == trace.OpWrite {
		return e.w&bit != 0
	}
	return (e.r|e.w)&bit != 0
}

type seenTable struct {
	entries []seenEntry // len is a power of two
	misses  int         // accesses recorded
	// conflicts: accesses recorded over an entry of the same epoch (the
	// working set is wider than the table); only they grow a table past
	// the second size, so that a goroutine with many short epochs (a
	// ping-pong, a request handler) keeps a small one.
	conflicts int
	level     int // index in seenSizes
}

// recorded reports whether the current goroutine g already recorded an
// access to addr that covers op in its current epoch, and remembers this
// one otherwise. Only g itself uses its table.
func (g *gstate) recorded(addr uint64, op trace.Op) bool {
	if gen := generation.Load(); gen != g.gen {
		g.newGeneration(gen)
	}
	t := g.seen
	if t == nil {
		t = &seenTable{entries: make([]seenEntry, smallSeen)}
		g.seen = t
	}
	e := &t.entries[(addr>>3)&uint64(len(t.entries)-1)]
	word, bit := addr&^7, uint8(1)<<(addr&7)
	conflict := false
	if e.addr == word && e.epoch == g.epoch {
		if e.covers(addr, op) {
			return true
		}
	} else {
		conflict = e.epoch == g.epoch && e.addr != 0
		*e = seenEntry{addr: word, epoch: g.epoch}
	}
	if op == trace.OpWrite {
		e.w |= bit
	} else {
		e.r |= bit
	}
	t.misses++
	if conflict {
		t.conflicts++
	}
	if t.level < maxSeenLevel {
		n := t.misses
		if t.level >= 1 {
			n = t.conflicts
		}
		if n == seenSizes[t.level+1].after {
			if countingAllocs() {
				// Not while the program counts its allocations (make
				// allocates): the next miss comes here again.
				t.misses--
				if t.level >= 1 {
					t.conflicts--
				}
			} else {
				t.grow()
			}
		}
	}
	return false
}

// grow replaces t's entries by the next size's, empty (the goroutine
// records each word once more), unless the budget is spent.
func (t *seenTable) grow() {
	next := seenSizes[t.level+1].size
	if t.level+1 >= 2 {
		add := int64(next-len(t.entries)) * int64(unsafe.Sizeof(seenEntry{}))
		if t.level == 1 {
			add = int64(next) * int64(unsafe.Sizeof(seenEntry{}))
		}
		if seenBytes.Add(add) > seenBudget {
			seenBytes.Add(-add)
			return
		}
	}
	t.level++
	t.entries = make([]seenEntry, next)
	t.conflicts = 0
}

// dropSeen lets g's table go at its end (forget), returning what it held
// to the budget.
func (g *gstate) dropSeen() {
	if t := g.seen; t != nil && t.level >= 2 {
		seenBytes.Add(-int64(len(t.entries)) * int64(unsafe.Sizeof(seenEntry{})))
	}
	g.seen = nil
}

// forget drops g's table entries of addresses in [a, a+size), an object
// just allocated there: the next access of each is to the new object,
// never a repeat (detectors forget the old object's accesses). An
// allocation adds no edge, so the epoch goes on for every other word; an
// object of more than forgetMax words ends the epoch instead (as wide as
// the table, or costlier to clear than to record its words again).
func (g *gstate) forget(a, size uint64) {
	if size != 0 {
		g.forgetRanges(a, size)
	}
	t := g.seen
	if t == nil || size == 0 {
		return
	}
	n := uint64(len(t.entries))
	lo, hi := a>>3, (a+size-1)>>3
	if hi-lo >= min(n, forgetMax) || a+size < a {
		g.epoch++
		return
	}
	for w := lo; w <= hi; w++ {
		if e := &t.entries[w&(n-1)]; e.addr == w<<3 {
			*e = seenEntry{} // the word overlaps the object: all of it, to be safe
		}
	}
}

// newGeneration notes that a goroutine born in untraced code appeared: g
// starts a new epoch, and its next plain event raises its key (prepSlow),
// so that it is placed after that goroutine's Begin.
func (g *gstate) newGeneration(gen uint32) {
	g.gen = gen
	g.epoch++
	g.tick = 0
}
