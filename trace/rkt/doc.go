// Package rkt reads and writes racekit's binary trace format, .rkt: a
// stream of events in blocks of delta/varint encoded records, each block
// with its own CRC, so that a file cut short by a crashing program is still
// readable up to its last whole block.
//
// Writer implements trace.Writer; it is what the runtime linked into an
// instrumented program uses, so this package imports only the standard
// library and package trace. Reader implements trace.Reader and
// trace.Warner: it reads one block at a time into a reused buffer (memory is
// bounded by MaxBlockLen plus the metadata tables), decodes without
// allocating per event, and reports a cut-off file through Warnings rather
// than as an error. Malformed input gives a *trace.FormatError naming the
// input and the byte offset of the damaged block or record; it never panics
// and never returns wrong events without an error.
//
// # Format, version 5
//
// This section is a public contract: files written today must stay readable.
// "uvarint" is the unsigned LEB128 varint of encoding/binary (at most 10
// bytes; a longer one, or a 10th byte above 1, is invalid). "zigzag(d)" maps
// a two's-complement difference d of 64-bit values to
// (d << 1) ^ (d >> 63), so that small negative and positive differences both
// encode in few bytes; differences are computed modulo 2^64 and every 64-bit
// value round-trips. "string" is a uvarint byte length followed by the bytes.
//
// A file is a header followed by blocks:
//
//	file   = header block* [end-block]
//	header = magic version
//	magic  = 89 52 4B 54 0D 0A 1A 0A      ("\x89RKT\r\n\x1a\n", see Magic)
//	version= uvarint                      (8; readers read 1 to 8 and reject any other)
//	block  = kind uvarint(len(payload)) payload crc
//	crc    = CRC-32C (Castagnoli) of kind, the length bytes and payload,
//	         4 bytes little-endian
//
// The payload length is at most MaxBlockLen (4 MiB); a larger declared
// length is corruption. Block kinds:
//
//	1  events block: a sequence of records (below), possibly empty
//	2  end block: payload = uvarint(total number of events in the file);
//	   it is the last block, and nothing may follow it
//
// Any other kind is an error. A file without an end block was not finished
// by its writer (the run crashed or was killed): a reader returns the events
// of its whole blocks and warns. A file whose bytes stop inside a block, or
// whose tail after the last whole block is all zero bytes (what some file
// systems leave after a crash), is read the same way.
//
// # Records
//
// An events block holds records, each starting with a header byte h:
//
//	h & 0x1F        op: 0 for a definition record, else a trace.Op (1..21
//	                in versions 1 and 2, 1..23 in version 3; any other
//	                value is an error; 20, Alloc, and 21, Block, came
//	                late in version 1: readers built before them reject
//	                them as invalid ops; 22 and 23, ReadRange and
//	                WriteRange, are version 3's); in version 4 also 24
//	                to 27, an atomic operation with trace.FlagGoAtomic
//	                (below)
//	h & 0x20        same goroutine as the previous event of the block
//	h & 0x40        Seq is the previous event's Seq + 1
//	h & 0x80        the op's flag: trace.FlagReadLock for Acquire and
//	                Release, trace.FlagValueUnknown for ops with a value
//	                (Read, Write, AtomicLoad/Store/RMW, Alloc, Block;
//	                never for ReadRange and WriteRange, whose value, a
//	                trace.Span, must be known and valid, and not sparse
//	                before version 7),
//	                trace.FlagMessage for SyncRelease and SyncAcquire
//	                (version 2 only: a version 1 file with it is damaged);
//	                must be 0 for other ops
//
// A definition record (h & 0x1F == 0) is selected by h >> 5:
//
//	1  site:      uvarint(id) string(file) uvarint(line) uvarint(col) string(func)
//	2  goroutine: uvarint(id) uvarint((parent+1) mod 2^32) uvarint(site) string(name)
//	3  name:      uvarint(obj) string(name)
//	4  callee:    uvarint(site) string(func) string(file) uvarint(line)
//	              (version 5: the site's trace.Site.Callee, the untraced
//	              function its events stand for; func is not empty)
//	5  call:      uvarint(site) string(func) uvarint(endline) uvarint(endcol)
//	              (version 6: the site's trace.Site.Call, a call of the
//	              traced function func, "" when not known statically;
//	              endline is not 0)
//	6  wide:      uvarint(site)
//	              (version 6: the site's trace.Site.Wide)
//	7  inline:    uvarint(site)
//	              (version 8: the site's trace.Site.Inline)
//
// Definitions apply, in file order, to trace.Meta: a site's id must be the
// next unused site ID (site 0, the unknown site, is implicit); a goroutine
// must not be defined twice, its ID must be below 2^32-1 and below the
// number of goroutines defined before it plus MaxGIDGap (65536), and its
// site must be defined; a callee's, call's, wide access's or inline function's site must be defined (not 0); lines and columns are below 2^31. A name of an already named object is kept
// in the file but ignored (the first name wins, as in trace.Meta.SetName).
//
// An event record (op != 0) continues with, in this order:
//
//	uvarint(G)                       absent when h & 0x20
//	uvarint(Seq - (prevSeq + 1))     absent when h & 0x40 (mod 2^64)
//	uvarint(zigzag(Site - lastSite[G mod 256]))
//	uvarint(zigzag(Obj - prevObj[class(op)]))
//	uvarint(Value)                   only when the op has a value and
//	                                 h & 0x80 (value unknown) is clear,
//	                                 or the op is SyncRelease or SyncAcquire
//	                                 and h & 0x80 (FlagMessage) is set: a
//	                                 trace.ChanMsg word, which must be valid;
//	                                 from version 5 on, such a word m is
//	                                 written uvarint(kind | payload<<3) (kind
//	                                 m>>61; payload a send's capacity, a
//	                                 range's width Hi-Lo, else 0) and, for the
//	                                 ranged kinds (sent, recvd, recv?),
//	                                 uvarint(zigzag(Lo - prevMsgLo)), where
//	                                 prevMsgLo is the Lo of the block's
//	                                 previous ranged message (0 at its start)
//	MethodBegin only: uvarint(n), then, for n > 0, the addresses in
//	ascending order: uvarint(zigzag(a[0] - prevObj[data])) and
//	uvarint(a[i] - a[i-1]) for i = 1..n-1
//
// The goroutine must be defined and the site must be defined (below the
// number of sites defined so far) before the event. For Fork and Join, Obj
// (the child goroutine) must be below 2^32. The object classes, each with
// its own prevObj, are:
//
//	data:      Read, Write, AtomicLoad, AtomicStore, AtomicRMW, Alloc,
//	           ReadRange, WriteRange
//	sync:      Acquire, Release, SyncRelease, SyncAcquire
//	code:      MethodBegin, MethodEnd, FuncEnter, FuncExit,
//	           RegionBegin, RegionEnd
//	goroutine: Fork, Join, Begin, End
//
// After each event, prevSeq = Seq, the previous goroutine = G,
// lastSite[G mod 256] = Site and prevObj[class(op)] = Obj (a MethodBegin's
// addresses do not change prevObj[data]).
//
// The encoder state resets at the start of every events block: previous
// goroutine 0, prevSeq = 2^64-1 (so that Seq 0 is "previous + 1"), every
// lastSite 0 and every prevObj 0. A block therefore decodes on its own,
// given the definitions of the blocks before it.
//
// Codes 24 to 27 (version 4) are one record for the four events rt
// records for an atomic operation (trace.GoAtomicEvents): 24 an
// AtomicLoad, 25 an AtomicStore, 26 an AtomicRMW, 27 an AtomicLoad whose
// data access is a write (trace.FlagCASFailed). The record is that of its
// atomic op (class data, the flag bit trace.FlagValueUnknown, the value
// when known); its address must not have trace.AtomicLockBit set. It takes
// four Seqs: prevSeq after it is its Seq + 3. A Reader hands it on as the
// four events, Seqs Seq to Seq+3; the end block counts it once.
//
// A Reader hands a ReadRange or WriteRange event on as the Read or Write
// events of the words its span stands for (trace.Span.Word), each with the
// range's Seq, G and Site and its value unknown; the end block counts the
// range once.
//
// What is not stored: Value of an event whose op has no value or whose
// value is unknown reads back as 0; a MethodBegin's Addrs read back sorted
// (it is a set; duplicates are kept) and an empty set reads back as nil.
//
// # Sizes
//
// An event costs its header byte, one byte for the goroutine when it
// changes, and one to three bytes each for the site, object and value
// differences. On the benchmark stream (8 goroutines interleaving locked
// and unlocked accesses to 4096 words, small values; see realisticStream in
// gen_test.go) that is about 4.7 bytes per event, blocks included.
package rkt
