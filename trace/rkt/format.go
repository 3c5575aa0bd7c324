package rkt

import (
	"hash/crc32"

	"github.com/racekit/racekit/trace"
)

// Magic is the first eight bytes of every .rkt file. The non-ASCII first
// byte keeps it from being taken for a text trace, and the CR LF, ^Z and LF
// that follow detect a file mangled by line-ending conversion.
const Magic = "\x89RKT\r\n\x1a\n"

// Version is the format version this package writes. Readers read it and
// every earlier version (MinVersion on): version 2 added channel events with
// trace.FlagMessage (header bit 0x80 on SyncRelease and SyncAcquire, and a
// value), which version 1 files never hold; version 3 added the range ops
// (trace.OpReadRange, trace.OpWriteRange), which a reader hands on as the
// word accesses they stand for; version 4 added one record for
// an atomic operation with trace.FlagGoAtomic (header op codes 24 to 27),
// which a reader hands on as the four events it stands for; version 5
// added the callee definition (a site's trace.Site.Callee); version 6 the
// call definition (a site's trace.Site.Call) and the wide definition (its
// trace.Site.Wide); version 7 sparse spans (trace.MakeSparseSpan) as the
// value of a range op; version 8 the inline definition (a site's
// trace.Site.Inline).
const Version = 8

// MinVersion is the oldest format version a Reader reads.
const MinVersion = 1

const (
	// MaxBlockLen is the largest payload a block may declare; a reader
	// treats a larger length as corruption.
	MaxBlockLen = 4 << 20
	// DefaultBlockSize is the payload size at which NewWriter's Writer ends
	// a block.
	DefaultBlockSize = 64 << 10
	// MaxGIDGap bounds goroutine IDs: a goroutine definition's ID must be
	// below the number of goroutines defined before it plus MaxGIDGap. So
	// a damaged or hostile file cannot make a reader allocate a goroutine
	// table much larger than the file; GIDs are dense, so real traces never
	// come near the bound.
	MaxGIDGap = 1 << 16
)

// Block kinds.
const (
	blockEvents = 1
	blockEnd    = 2
)

// Bits of a record's header byte.
const (
	hdrOpMask  = 0x1F
	hdrSameG   = 0x20
	hdrSeqNext = 0x40
	hdrOpFlag  = 0x80
)

// Header op codes of version 4 past the trace.Ops: an atomic operation
// with trace.FlagGoAtomic, one record for the four events it stands for
// (trace.GoAtomicEvents). The record is that of its atomic op (class data;
// the flag bit is trace.FlagValueUnknown) and takes trace.GoAtomicSeqs
// Seqs: the next record's Seq is compared with its Seq+3.
const (
	hdrGoLoad      = 24 // AtomicLoad, its data access a Read
	hdrGoStore     = 25 // AtomicStore
	hdrGoRMW       = 26 // AtomicRMW
	hdrGoCASFailed = 27 // AtomicLoad, its data access a Write (trace.FlagCASFailed)
)

// goAtomicCode is the header op code of e, an atomic op with
// trace.FlagGoAtomic.
func goAtomicCode(e *trace.Event) byte {
	switch {
	case e.Flags&trace.FlagCASFailed != 0:
		return hdrGoCASFailed
	case e.Op == trace.OpAtomicLoad:
		return hdrGoLoad
	case e.Op == trace.OpAtomicStore:
		return hdrGoStore
	}
	return hdrGoRMW
}

// goAtomicOp is the op and flags header op code c stands for, if it is
// one of the codes above.
func goAtomicOp(c byte) (trace.Op, trace.Flags, bool) {
	switch c {
	case hdrGoLoad:
		return trace.OpAtomicLoad, trace.FlagGoAtomic, true
	case hdrGoStore:
		return trace.OpAtomicStore, trace.FlagGoAtomic, true
	case hdrGoRMW:
		return trace.OpAtomicRMW, trace.FlagGoAtomic, true
	case hdrGoCASFailed:
		return trace.OpAtomicLoad, trace.FlagGoAtomic | trace.FlagCASFailed, true
	}
	return 0, 0, false
}

// Definition record kinds (header byte >> 5, with op bits 0).
const (
	defSite      = 1
	defGoroutine = 2
	defName      = 3
	defCallee    = 4 // version 5
	defCall      = 5 // version 6
	defWide      = 6 // version 6
	defInline    = 7 // version 8
)

// Object classes: each keeps its own previous Obj, so that an access
// encodes its address as a small difference even when lock or function
// events come in between.
const (
	classData = iota
	classSync
	classCode
	classGoroutine
	numClasses
)

var opClass = [32]uint8{
	trace.OpRead:        classData,
	trace.OpWrite:       classData,
	trace.OpAtomicLoad:  classData,
	trace.OpAtomicStore: classData,
	trace.OpAtomicRMW:   classData,
	trace.OpAlloc:       classData,
	trace.OpReadRange:   classData,
	trace.OpWriteRange:  classData,
	trace.OpBlock:       classSync,
	trace.OpAcquire:     classSync,
	trace.OpRelease:     classSync,
	trace.OpSyncRelease: classSync,
	trace.OpSyncAcquire: classSync,
	trace.OpMethodBegin: classCode,
	trace.OpMethodEnd:   classCode,
	trace.OpFuncEnter:   classCode,
	trace.OpFuncExit:    classCode,
	trace.OpRegionBegin: classCode,
	trace.OpRegionEnd:   classCode,
	trace.OpFork:        classGoroutine,
	trace.OpJoin:        classGoroutine,
	trace.OpBegin:       classGoroutine,
	trace.OpEnd:         classGoroutine,
}

// opFlag is the event flag that header bit 0x80 stands for, per op (0: the
// bit must be clear).
var opFlag [32]trace.Flags

func init() {
	for op := trace.Op(1); op.Valid(); op++ {
		switch {
		case op == trace.OpAcquire || op == trace.OpRelease:
			opFlag[op] = trace.FlagReadLock
		case op.HasValue():
			opFlag[op] = trace.FlagValueUnknown
		case op == trace.OpSyncRelease || op == trace.OpSyncAcquire:
			opFlag[op] = trace.FlagMessage // version 2
		}
	}
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// state is the delta-coding context shared by encoder and decoder; it
// resets at every events block.
type state struct {
	seq uint64 // Seq of the previous event
	g   trace.GID
	// gChecked: the decoder has checked that g is defined (the encoder
	// does not use it).
	gChecked bool
	obj      [numClasses]uint64
	site     [256]trace.SiteID // last site per goroutine (G mod 256)
	msgLo    uint64            // the Lo of the previous ranged channel message (version 5)
}

func (s *state) reset() {
	*s = state{seq: ^uint64(0)}
}

func zigzag(d uint64) uint64   { return d<<1 ^ uint64(int64(d)>>63) }
func unzigzag(v uint64) uint64 { return v>>1 ^ -(v & 1) }

func appendUvarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func appendString(b []byte, s string) []byte {
	return append(appendUvarint(b, uint64(len(s))), s...)
}

// Results of uvarintSlow other than a position.
const (
	errVarintOverflow = -1 // more than 64 bits
	errVarintShort    = -2 // runs past the end of the block
)

// uvarint decodes the uvarint at buf[p:] and returns it with the position
// after it, or a negative position (errVarint*). The one-byte case is
// inlined into callers.
func uvarint(buf []byte, p int) (uint64, int) {
	if p < len(buf) {
		if b := buf[p]; b < 0x80 {
			return uint64(b), p + 1
		}
	}
	return uvarintSlow(buf, p)
}

//go:noinline
func uvarintSlow(buf []byte, p int) (uint64, int) {
	var v uint64
	if len(buf)-p >= 10 {
		// Common case, away from the block's end: a fixed-length window
		// lets the compiler drop the bounds checks.
		b := buf[p : p+10 : p+10]
		for i := 0; i < 10; i++ {
			c := b[i]
			if c < 0x80 {
				if i == 9 && c > 1 {
					return 0, errVarintOverflow
				}
				return v | uint64(c)<<(7*i), p + i + 1
			}
			v |= uint64(c&0x7F) << (7 * i)
		}
		return 0, errVarintOverflow
	}
	for i := 0; i < 10; i++ {
		if p+i >= len(buf) {
			return 0, errVarintShort
		}
		b := buf[p+i]
		if b < 0x80 {
			if i == 9 && b > 1 {
				return 0, errVarintOverflow
			}
			return v | uint64(b)<<(7*i), p + i + 1
		}
		v |= uint64(b&0x7F) << (7 * i)
	}
	return 0, errVarintOverflow
}

// appendMsg appends the channel message word v as version 5 writes it:
// uvarint(kind | payload<<3), where a ranged kind's payload is its width
// and uvarint(zigzag(Lo - the previous ranged message's Lo)) follows. A
// stream of messages then takes two or three bytes each, where the word
// itself (its kind in the top bits) took nine.
func (st *state) appendMsg(b []byte, v uint64) []byte {
	k := trace.ChanMsg(v).Kind()
	pay := v & trace.MsgMaxCap
	if !k.Ranged() {
		return appendUvarint(b, uint64(k)|pay<<3)
	}
	lo := pay >> trace.MsgLoShift
	b = appendUvarint(b, uint64(k)|(pay&trace.MsgWide)<<3)
	b = appendUvarint(b, zigzag(lo-st.msgLo))
	st.msgLo = lo
	return b
}
