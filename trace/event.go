// Package trace is racekit's event model: the one stream every filter and
// detector reads, whether it came from an instrumented Go run, a file, or the
// generator.
//
// An Event is one operation of one goroutine (Op, G, Obj, Value, Site). Its
// metadata (sites, goroutines, object names) lives in a Meta that grows as the
// stream is read, because a live run registers sites as it reaches them.
//
// Three encodings carry the stream:
//   - the binary .rkt format (Writer, NewReader): blocks of delta/varint
//     encoded events, each with a CRC, readable up to the last whole block of
//     a file cut short by a crash;
//   - RAPID's STD text format (T1|r(V)|12), for exchange with RAPID;
//   - racekit's text format, a superset of STD that expresses every Op,
//     for hand-written traces in tests.
//
// Open sniffs which one a file holds. All readers implement Reader: call
// Next until io.EOF; Meta is complete once Next has returned io.EOF.
//
// # Range events
//
// OpReadRange and OpWriteRange are one event for a copy, a slice's
// elements or a value wider than a few words, with a Span as Value; they
// stand for the word accesses the span covers. Readers and writers of
// formats without range ops hand such an event on as those words
// (RangeExpander, WriteWords), so that detectors see only word accesses
// unless they ask for ranges whole (package detect, RangeHandler).
//
// # Also here
//
//   - Meta names package-level variables by GlobalName, which rt.Globals
//     records from every instrumented file; Meta.Location finds the
//     variable for any address inside one (docs/frontend.md, "Reports").
//   - The Reader and Writer stream interfaces, Copy between them, the
//     in-memory Trace, the Builder that tests write traces with, and
//     FormatError, what every decoder returns for malformed input.
package trace

import "fmt"

// Op is the kind of an event. The numbering is part of the .rkt format:
// never renumber, only append.
type Op uint8

const (
	OpInvalid Op = iota

	// Data accesses. Obj is the address, Value the value read or written
	// (see FlagValueUnknown).
	OpRead
	OpWrite

	// Mutual exclusion. Obj is the lock. FlagReadLock marks RWMutex.RLock /
	// RUnlock (shared mode); without it the lock is held exclusively.
	OpAcquire
	OpRelease

	// Goroutine life. For Fork and Join, Obj is the child goroutine's ID.
	// Begin is the first event of a goroutine and End its last.
	OpFork
	OpJoin
	OpBegin
	OpEnd

	// Happens-before edges through a synchronization object (the SND/RCV of
	// the papers): channel send/receive/close, WaitGroup Done vs Wait,
	// Once.Do, Cond Signal vs Wait. A SyncRelease is ordered before every
	// later SyncAcquire of the same Obj. They are not locks: no mutual
	// exclusion, no lockset.
	OpSyncRelease
	OpSyncAcquire

	// sync/atomic operations on the word at Obj, with its Value. They
	// synchronize (a store releases, a load acquires, a read-modify-write
	// does both) and never race with each other.
	OpAtomicLoad
	OpAtomicStore
	OpAtomicRMW

	// A call into untraced code (RDIT's BarrierPair). MethodBegin's Obj names
	// the callee and Addrs holds the addresses reachable from its receiver
	// and arguments (D in the thesis); MethodEnd closes the innermost open
	// MethodBegin of the goroutine.
	OpMethodBegin
	OpMethodEnd

	// Function boundaries of traced code; Obj names the function. They give
	// stacks in reports, the sampling unit (LiteRace) and default atomic
	// regions (PECAN).
	OpFuncEnter
	OpFuncExit

	// Explicit atomic-region boundaries (PECAN); Obj names the region.
	OpRegionBegin
	OpRegionEnd

	// Allocation of a new object: the Value bytes at Obj are fresh memory.
	// Accesses before it to those addresses were to an earlier object that
	// the garbage collector freed; they never race with accesses after it.
	// Not a synchronization: it creates no happens-before edge.
	OpAlloc

	// The goroutine was blocked when the run ended, in the operation at
	// Site on Obj (a lock, WaitGroup or Cond), Value its BlockKind: a
	// leak or a deadlock the run left behind. rt writes one per such
	// goroutine after every other event of a finished trace. Not a
	// synchronization: it creates no edge.
	OpBlock

	// Plain reads or writes of a span of memory in one operation (a copy,
	// a whole array or struct, a slice's elements): Obj is the first
	// address, Value a Span (element size and count). A span stands for
	// the word accesses Span.Words lists, and .rkt readers hand detectors
	// those words (ExpandRange), never the span: one event records a copy
	// of any length, where a word per event made rt cap an access at 256
	// words and miss races beyond.
	OpReadRange
	OpWriteRange

	numOps
)

// NumOps is one more than the largest valid Op.
const NumOps = int(numOps)

var opNames = [...]string{
	OpInvalid:     "invalid",
	OpRead:        "r",
	OpWrite:       "w",
	OpAcquire:     "acq",
	OpRelease:     "rel",
	OpFork:        "fork",
	OpJoin:        "join",
	OpBegin:       "begin",
	OpEnd:         "end",
	OpSyncRelease: "snd",
	OpSyncAcquire: "rcv",
	OpAtomicLoad:  "aload",
	OpAtomicStore: "astore",
	OpAtomicRMW:   "armw",
	OpMethodBegin: "call",
	OpMethodEnd:   "ret",
	OpFuncEnter:   "enter",
	OpFuncExit:    "exit",
	OpRegionBegin: "rbegin",
	OpRegionEnd:   "rend",
	OpAlloc:       "alloc",
	OpBlock:       "block",
	OpReadRange:   "rrange",
	OpWriteRange:  "wrange",
}

// String returns the op's mnemonic in racekit's text format.
func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return fmt.Sprintf("op(%d)", uint8(o))
}

// Valid reports whether o is a defined op.
func (o Op) Valid() bool { return o > OpInvalid && o < numOps }

// IsAccess reports whether o is a plain data access (the only ops that race).
func (o Op) IsAccess() bool { return o == OpRead || o == OpWrite }

// IsRange reports whether o is a span of plain accesses (OpReadRange,
// OpWriteRange).
func (o Op) IsRange() bool { return o == OpReadRange || o == OpWriteRange }

// WordOp returns the word access a range op stands for per word (OpRead
// for OpReadRange, OpWrite for OpWriteRange), and o for any other op.
func (o Op) WordOp() Op {
	switch o {
	case OpReadRange:
		return OpRead
	case OpWriteRange:
		return OpWrite
	}
	return o
}

// RangeOp returns the range op of a word access (OpReadRange for OpRead,
// OpWriteRange for OpWrite), and o for any other op.
func (o Op) RangeOp() Op {
	switch o {
	case OpRead:
		return OpReadRange
	case OpWrite:
		return OpWriteRange
	}
	return o
}

// IsAtomic reports whether o is a sync/atomic operation.
func (o Op) IsAtomic() bool { return o >= OpAtomicLoad && o <= OpAtomicRMW }

// AtomicLockBit marks the lock private to an atomic word in traces of the
// Go front end (docs/semantics.md): each atomic operation on word a is
// recorded as Acquire(a|AtomicLockBit), the atomic op, a data access of
// a, Release(a|AtomicLockBit). No Go pointer has the bit set.
const AtomicLockBit = 1 << 62

// IsSync reports whether o creates or consumes a happens-before edge or a
// lock: the events that are never filtered or sampled away.
func (o Op) IsSync() bool {
	switch o {
	case OpAcquire, OpRelease, OpFork, OpJoin, OpBegin, OpEnd,
		OpSyncRelease, OpSyncAcquire, OpAtomicLoad, OpAtomicStore, OpAtomicRMW,
		OpMethodBegin, OpMethodEnd:
		return true
	}
	return false
}

// HasValue reports whether events of this op carry a Value (for OpAlloc,
// the object's size in bytes). A SyncRelease or SyncAcquire with
// FlagMessage carries one too (StoresValue).
func (o Op) HasValue() bool {
	return o.IsAccess() || o.IsAtomic() || o == OpAlloc || o == OpBlock || o.IsRange()
}

// BlockKind is the operation of an OpBlock event.
type BlockKind uint8

const (
	BlockLock     BlockKind = 1 + iota // sync.Mutex.Lock, sync.RWMutex.Lock
	BlockRLock                         // sync.RWMutex.RLock
	BlockWait                          // sync.WaitGroup.Wait
	BlockCondWait                      // sync.Cond.Wait
	BlockNilSend                       // a send statement on a nil channel
	BlockNilRecv                       // a receive (or range) from a nil channel
)

// String is the operation as goleak names a goroutine's state.
func (k BlockKind) String() string {
	switch k {
	case BlockLock:
		return "sync.Mutex.Lock"
	case BlockRLock:
		return "sync.RWMutex.RLock"
	case BlockWait:
		return "sync.WaitGroup.Wait"
	case BlockCondWait:
		return "sync.Cond.Wait"
	case BlockNilSend:
		return "chan send (nil chan)"
	case BlockNilRecv:
		return "chan receive (nil chan)"
	}
	return "a blocking operation"
}

// StoresValue reports whether an event of op with flags has a Value that
// encodings must keep: an op with a value whose value is known, or a
// channel event with FlagMessage.
func StoresValue(op Op, flags Flags) bool {
	if op.HasValue() {
		return flags&FlagValueUnknown == 0
	}
	return flags&FlagMessage != 0 && (op == OpSyncRelease || op == OpSyncAcquire)
}

// Flags qualify an event.
type Flags uint8

const (
	// FlagReadLock marks an Acquire/Release of a lock in shared (read) mode.
	FlagReadLock Flags = 1 << iota
	// FlagValueUnknown marks an access whose value did not fit in 64 bits or
	// was not recorded; Value is then meaningless.
	FlagValueUnknown
	// FlagMessage marks a SyncRelease or SyncAcquire of a channel operation
	// that carries its message identity in Value (a ChanMsg word, see
	// chanmsg.go): detectors then pair the k-th send with the k-th receive
	// instead of merging every release of the object.
	FlagMessage
	// FlagGoAtomic marks an atomic operation (AtomicLoad, AtomicStore,
	// AtomicRMW) that stands for the four events the Go front end records
	// for it, Seqs Seq to Seq+3 (GoAtomicEvents): one record in a trace
	// instead of four. rt writes it; readers hand on the four events.
	FlagGoAtomic
	// FlagCASFailed marks a FlagGoAtomic AtomicLoad whose data access is a
	// write: a CompareAndSwap that failed (it only read the word, but Go's
	// race detector records every CompareAndSwap as a write).
	FlagCASFailed

	flagsDefined = FlagReadLock | FlagValueUnknown | FlagMessage | FlagGoAtomic | FlagCASFailed
)

// GoAtomicSeqs is the number of events, and Seqs, a FlagGoAtomic event
// stands for.
const GoAtomicSeqs = 4

// GoAtomicDataOp is the op of the data access that e, an atomic operation
// with FlagGoAtomic, stands for: a Read for a load, else a Write (a failed
// CompareAndSwap's too, FlagCASFailed).
func GoAtomicDataOp(e *Event) Op {
	if e.Op == OpAtomicLoad && e.Flags&FlagCASFailed == 0 {
		return OpRead
	}
	return OpWrite
}

// GoAtomicEvents sets out to the events e, an atomic operation with
// FlagGoAtomic, stands for: an Acquire of the word's private lock
// (Obj|AtomicLockBit), the operation, its data access of the word (a Read
// for a load, else a Write) with the operation's value, the lock's
// Release; Seqs e.Seq to e.Seq+3, all at e's goroutine and site.
func GoAtomicEvents(e *Event, out *[GoAtomicSeqs]Event) {
	f := e.Flags &^ (FlagGoAtomic | FlagCASFailed)
	data := GoAtomicDataOp(e)
	lock := e.Obj | AtomicLockBit
	out[0] = Event{Seq: e.Seq, G: e.G, Op: OpAcquire, Site: e.Site, Obj: lock}
	out[1] = Event{Seq: e.Seq + 1, G: e.G, Op: e.Op, Flags: f, Site: e.Site, Obj: e.Obj, Value: e.Value}
	out[2] = Event{Seq: e.Seq + 2, G: e.G, Op: data, Flags: f, Site: e.Site, Obj: e.Obj, Value: e.Value}
	out[3] = Event{Seq: e.Seq + 3, G: e.G, Op: OpRelease, Site: e.Site, Obj: lock}
}

// GID identifies a goroutine within one trace: small, dense, assigned in
// order of first appearance. (It is not the Go runtime's goid.)
type GID uint32

// SiteID indexes Meta.Sites. Site 0 is the unknown site.
type SiteID uint32

// NoSite is the site of an event whose source position is not known.
const NoSite SiteID = 0

// Event is one operation of one goroutine. Events are passed by pointer and
// reused by readers: copy what must outlive the next call to Next,
// including Addrs.
type Event struct {
	Seq   uint64 // position in the observed global order; increasing, maybe with gaps after filtering
	G     GID    // goroutine performing the op
	Op    Op
	Flags Flags
	Site  SiteID
	Obj   uint64   // address, lock, sync object, child goroutine, function or region: see Op
	Value uint64   // value read or written, for ops where HasValue
	Addrs []uint64 // MethodBegin only: addresses reachable from the untraced call's receiver and arguments
}

// IsWrite reports whether the event writes its object (for data accesses).
func (e *Event) IsWrite() bool { return e.Op == OpWrite }

// ReadLock reports whether a lock event is in shared mode.
func (e *Event) ReadLock() bool { return e.Flags&FlagReadLock != 0 }

// ValueKnown reports whether Value holds the accessed value.
func (e *Event) ValueKnown() bool { return e.Op.HasValue() && e.Flags&FlagValueUnknown == 0 }

// Child returns the goroutine forked or joined by a Fork or Join event.
func (e *Event) Child() GID { return GID(e.Obj) }

// Validate checks the event's own fields (not its place in the trace).
func (e *Event) Validate() error {
	if len(e.Addrs) == 0 && e.Op.Valid() && e.Op != OpFork && e.Op != OpJoin {
		// The common events, checked first: of validate's checks, only
		// those of their flags apply (TestValidateFastPath). Ranges and
		// Go atomics were a third of the checks a trace's writer made.
		switch e.Flags {
		case 0:
			if !e.Op.IsRange() || Span(e.Value).Valid() {
				return nil
			}
		case FlagValueUnknown:
			if e.Op.HasValue() && !e.Op.IsRange() {
				return nil
			}
		case FlagMessage:
			if e.Op == OpSyncRelease || e.Op == OpSyncAcquire {
				return ChanMsg(e.Value).check(e.Op)
			}
		case FlagGoAtomic:
			if e.Op.IsAtomic() && e.Obj&AtomicLockBit == 0 {
				return nil
			}
		case FlagGoAtomic | FlagCASFailed:
			if e.Op == OpAtomicLoad && e.Obj&AtomicLockBit == 0 {
				return nil
			}
		}
	}
	return e.validate()
}

// validate is Validate's general case.
func (e *Event) validate() error {
	if !e.Op.Valid() {
		return fmt.Errorf("invalid op %d", uint8(e.Op))
	}
	if e.Flags&^flagsDefined != 0 {
		return fmt.Errorf("undefined flags %#x", uint8(e.Flags))
	}
	if e.Flags&FlagReadLock != 0 && e.Op != OpAcquire && e.Op != OpRelease {
		return fmt.Errorf("read-lock flag on %s", e.Op)
	}
	if e.Flags&FlagValueUnknown != 0 && !e.Op.HasValue() {
		return fmt.Errorf("value-unknown flag on %s", e.Op)
	}
	if e.Op.IsRange() && (e.Flags&FlagValueUnknown != 0 || !Span(e.Value).Valid()) {
		return fmt.Errorf("%s without a valid span (element size and count)", e.Op)
	}
	if e.Flags&FlagGoAtomic != 0 && !e.Op.IsAtomic() {
		return fmt.Errorf("Go atomic flag on %s", e.Op)
	}
	if e.Flags&FlagCASFailed != 0 && (e.Op != OpAtomicLoad || e.Flags&FlagGoAtomic == 0) {
		return fmt.Errorf("failed CompareAndSwap flag on %s without the Go atomic flag", e.Op)
	}
	if e.Flags&FlagGoAtomic != 0 && e.Obj&AtomicLockBit != 0 {
		return fmt.Errorf("%s of %#x: the address has AtomicLockBit set", e.Op, e.Obj)
	}
	if e.Flags&FlagMessage != 0 {
		if e.Op != OpSyncRelease && e.Op != OpSyncAcquire {
			return fmt.Errorf("message flag on %s", e.Op)
		}
		if err := ChanMsg(e.Value).check(e.Op); err != nil {
			return err
		}
	}
	if len(e.Addrs) != 0 && e.Op != OpMethodBegin {
		return fmt.Errorf("address set on %s", e.Op)
	}
	if (e.Op == OpFork || e.Op == OpJoin) && e.Obj > 0xFFFFFFFF {
		return fmt.Errorf("%s of goroutine %d out of range", e.Op, e.Obj)
	}
	return nil
}

// Clone returns a copy of e that owns its Addrs.
func (e *Event) Clone() Event {
	c := *e
	if e.Addrs != nil {
		c.Addrs = append([]uint64(nil), e.Addrs...)
	}
	return c
}

// AllocRange returns the addresses [lo, hi) an Alloc event makes fresh,
// and false for another op or an Alloc of unknown or zero size. A range
// that would pass 2^64 ends there.
func (e *Event) AllocRange() (lo, hi uint64, ok bool) {
	if e.Op != OpAlloc || e.Flags&FlagValueUnknown != 0 || e.Value == 0 {
		return 0, 0, false
	}
	lo, hi = e.Obj, e.Obj+e.Value
	if hi < lo {
		hi = ^uint64(0)
	}
	return lo, hi, true
}
