package rkt

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"

	"github.com/racekit/racekit/trace"
)

// Reader decodes a .rkt stream. It implements trace.Reader and
// trace.Warner.
//
// It holds one block at a time. Definitions are applied to Meta as the
// records are decoded, so when Next returns an event, Meta holds exactly
// the definitions written before that event (and all of them after
// io.EOF).
//
// Next returns io.EOF after the last event of a complete file, and also
// after the last whole block of a file that was cut short or lacks its end
// block; Warnings then says so. Malformed input gives a *trace.FormatError
// whose Offset is that of the damaged block, or of the damaged record
// within a block whose checksum is good (the message then names the
// block's offset too). An error of the underlying io.Reader is returned
// wrapped, with the offset. Errors are sticky.
type Reader struct {
	name string
	br   *bufio.Reader
	off  int64 // file offset of the next byte br returns
	meta *trace.Meta

	buf        []byte // payload of the current events block
	p          int    // position of the next record in buf
	payloadOff int64  // file offset of buf[0]
	blockOff   int64  // file offset of the current block
	st         state

	block      []byte // backing store of buf, reused
	addrs      []uint64
	events     uint64
	goroutines int // goroutine definitions read

	version uint64              // the file's format version
	ranges  trace.RangeExpander // the words of the last range event still to return
	// keepRanges: range events are returned whole (KeepRanges).
	keepRanges bool
	// keepAtomics: FlagGoAtomic records are returned whole (KeepGoAtomics).
	keepAtomics bool
	// atoms holds the events of the last FlagGoAtomic record;
	// atoms[atomNext:] are still to return (atomNext 0: none).
	atoms    [trace.GoAtomicSeqs]trace.Event
	atomNext int
	started  bool
	done     bool // io.EOF from now on
	cut      bool // done without an end block: the run crashed
	err      error
	warnings []string
}

// NewReader returns a Reader of the .rkt stream r; name identifies it in
// errors and warnings (usually the file name).
func NewReader(r io.Reader, name string) *Reader {
	return &Reader{name: name, br: bufio.NewReaderSize(r, 64<<10), meta: trace.NewMeta()}
}

// Meta returns the tables defined by the records read so far.
func (r *Reader) Meta() *trace.Meta { return r.meta }

// Warnings describes damage the reader recovered from: a file cut off
// inside a block, or without its end block.
func (r *Reader) Warnings() []string { return r.warnings }

// Events returns the number of event records decoded so far (a range
// event counts once, whatever the words it stands for).
func (r *Reader) Events() uint64 { return r.events }

// Next decodes the next event into e. e.Addrs points into a buffer that the
// next call overwrites.
//
// A range event (trace.OpReadRange, OpWriteRange) comes out as the word
// accesses it stands for (trace.Span), one per call, all with its Seq.
// KeepRanges makes Next return range events (OpReadRange, OpWriteRange)
// as they are, for a consumer that takes them whole (detect.RangeHandler),
// instead of the word accesses they stand for. Call it before the first
// Next.
func (r *Reader) KeepRanges() bool {
	r.keepRanges = true
	return true
}

// KeepGoAtomics makes Next return an atomic operation recorded with
// trace.FlagGoAtomic as that one event, for a consumer that takes it whole
// (detect.GoAtomicHandler), instead of the four events it stands for
// (trace.GoAtomicEvents). Call it before the first Next.
func (r *Reader) KeepGoAtomics() bool {
	r.keepAtomics = true
	return true
}

func (r *Reader) Next(e *trace.Event) error {
	if r.atomNext != 0 {
		*e = r.atoms[r.atomNext]
		r.atomNext = (r.atomNext + 1) % trace.GoAtomicSeqs
		return nil
	}
	if r.ranges.Pending() {
		r.ranges.Next(e)
		return nil
	}
	// Blocks and definitions, up to the next event record.
	for r.p >= len(r.buf) || trace.Op(r.buf[r.p]&hdrOpMask) == trace.OpInvalid {
		if err := r.skipToEvent(); err != nil {
			return err
		}
	}
	buf, p := r.buf, r.p
	h := buf[p]
	op := trace.Op(h & hdrOpMask)
	rec := p
	var goFlags trace.Flags // FlagGoAtomic and FlagCASFailed of a record of version 4's codes
	if !op.Valid() {
		if op, goFlags = r.goAtomicCode(rec, h); goFlags == 0 {
			return r.err
		}
	}
	p++
	st := &r.st
	var v uint64

	g := st.g
	if h&hdrSameG == 0 || !st.gChecked {
		if g, p = r.recordG(buf, p, rec, h); p < 0 {
			return r.err
		}
	}

	seq := st.seq + 1
	if h&hdrSeqNext == 0 {
		// Rare: events are mostly numbered one after the other.
		if v, p = uvarint(buf, p); p < 0 {
			return r.varintErr(rec, p, "seq")
		}
		seq += v
	}
	st.seq = seq
	if goFlags != 0 {
		st.seq += trace.GoAtomicSeqs - 1
	}

	if p < len(buf) && buf[p] < 0x80 {
		v = uint64(buf[p])
		p++
	} else if v, p = uvarintSlow(buf, p); p < 0 {
		return r.varintErr(rec, p, "site")
	}
	gi := byte(g)
	site := int64(st.site[gi]) + int64(unzigzag(v))
	if site < 0 || site >= int64(len(r.meta.Sites)) {
		return r.recordErr(rec, fmt.Sprintf("event uses site %d, which is not defined", site))
	}
	st.site[gi] = trace.SiteID(site)

	// Object differences often take two bytes: inline that case too.
	if p < len(buf) && buf[p] < 0x80 {
		v = uint64(buf[p])
		p++
	} else if p+1 < len(buf) && buf[p+1] < 0x80 {
		v = uint64(buf[p]&0x7F) | uint64(buf[p+1])<<7
		p += 2
	} else if v, p = uvarintSlow(buf, p); p < 0 {
		return r.varintErr(rec, p, "object")
	}
	c := opClass[op]
	obj := st.obj[c] + unzigzag(v)
	st.obj[c] = obj

	var flags trace.Flags
	if h&hdrOpFlag != 0 {
		flags = opFlag[op]
		if flags == 0 || (flags == trace.FlagMessage && r.version < 2) {
			return r.recordErr(rec, fmt.Sprintf("flag bit set on %s", op))
		}
	}
	var value uint64
	if op.HasValue() && flags == 0 || flags == trace.FlagMessage {
		if p < len(buf) && buf[p] < 0x80 {
			value = uint64(buf[p])
			p++
		} else if value, p = uvarintSlow(buf, p); p < 0 {
			return r.varintErr(rec, p, "value")
		}
	}
	if flags == trace.FlagMessage && r.version >= 5 {
		if value, p = r.msgWord(buf, p, rec, value); p < 0 {
			return r.err
		}
	}
	var addrs []uint64
	if flags == trace.FlagMessage || rareOp[op] {
		if addrs, p = r.rareOperands(buf, p, rec, op, flags, obj, value); p < 0 {
			return r.err
		}
	}
	r.p = p
	r.events++
	// Field by field: building the struct on the stack and copying it
	// stalls on store forwarding, which costs a third of the decode.
	e.Seq, e.G, e.Op, e.Flags, e.Site = seq, g, op, flags, trace.SiteID(site)
	e.Obj, e.Value, e.Addrs = obj, value, addrs
	if op.IsRange() && !r.keepRanges {
		r.ranges.Start(e)
	}
	if goFlags != 0 {
		return r.goAtomic(e, rec, op, obj, goFlags)
	}
	return nil
}

// skipToEvent reads what comes before the next event record: the next
// block when the current one is done, or else the definition record at
// r.p.
func (r *Reader) skipToEvent() error {
	if r.p >= len(r.buf) {
		return r.nextBlock()
	}
	return r.definition()
}

// msgWord decodes the rest of a version 5 channel message (state.appendMsg)
// whose first uvarint was v, from buf[p:], and returns the trace.ChanMsg
// word and the position after it; on error it sets r.err and returns a
// negative position.
func (r *Reader) msgWord(buf []byte, p, rec int, v uint64) (uint64, int) {
	k, pay := trace.MsgKind(v&7), v>>3
	if !k.Ranged() {
		return uint64(k)<<trace.MsgKindShift | pay, p
	}
	if pay > trace.MsgWide {
		r.recordErr(rec, fmt.Sprintf("message width %d out of range", pay))
		return 0, -1
	}
	d, p := uvarint(buf, p)
	if p < 0 {
		r.varintErr(rec, p, "message number")
		return 0, -1
	}
	lo := r.st.msgLo + unzigzag(d)
	if lo > trace.MsgMaxLo {
		r.recordErr(rec, fmt.Sprintf("message number %d out of range", lo))
		return 0, -1
	}
	r.st.msgLo = lo
	return uint64(k)<<trace.MsgKindShift | lo<<trace.MsgLoShift | pay, p
}

// goAtomicCode returns the op and the flags (trace.FlagGoAtomic, and
// maybe trace.FlagCASFailed) of the record at rec, with header byte h,
// whose op code is none of trace.Op's: one of version 4's codes of Go's
// atomic operations. For any other code it sets r.err and returns flags 0.
func (r *Reader) goAtomicCode(rec int, h byte) (trace.Op, trace.Flags) {
	op, goFlags, ok := goAtomicOp(h & hdrOpMask)
	if !ok || r.version < 4 {
		r.recordErr(rec, fmt.Sprintf("invalid op %d", h&hdrOpMask))
		return op, 0
	}
	return op, goFlags
}

// recordG returns the goroutine of the record at rec, whose header byte
// is h, checked to be defined: decoded from buf[p:], or the previous
// record's, not checked yet. It returns the position after it; on error it
// sets r.err and returns a negative position.
func (r *Reader) recordG(buf []byte, p, rec int, h byte) (trace.GID, int) {
	st := &r.st
	if h&hdrSameG != 0 {
		// The block's first event, with the implicit goroutine 0. (Once
		// checked, a goroutine stays defined: tables only grow.)
		if !r.meta.GoroutineDefined(st.g) {
			r.recordErr(rec, fmt.Sprintf("event uses goroutine %d, which is not defined", st.g))
			return 0, -1
		}
		st.gChecked = true
		return st.g, p
	}
	var v uint64
	if p < len(buf) && buf[p] < 0x80 {
		v = uint64(buf[p])
		p++
	} else if v, p = uvarintSlow(buf, p); p < 0 {
		r.varintErr(rec, p, "goroutine")
		return 0, -1
	}
	if v > math.MaxUint32 {
		r.recordErr(rec, fmt.Sprintf("goroutine %d out of range", v))
		return 0, -1
	}
	g := trace.GID(v)
	if !r.meta.GoroutineDefined(g) {
		r.recordErr(rec, fmt.Sprintf("event uses goroutine %d, which is not defined", g))
		return 0, -1
	}
	st.g, st.gChecked = g, true
	return g, p
}

// rareOp marks the ops whose records Next leaves to rareOperands, with
// those that carry a channel message: range events, MethodBegin (an
// address set), Fork and Join (a goroutine).
var rareOp = [32]bool{trace.OpReadRange: true, trace.OpWriteRange: true, trace.OpMethodBegin: true, trace.OpFork: true, trace.OpJoin: true}

// rareOperands checks the operands of the record at rec (a rareOp, or one
// with a channel message), which Next has decoded up to buf[p:], and
// decodes a MethodBegin's address set. It returns the addresses and the
// position after them; on error it sets r.err and returns a negative
// position.
func (r *Reader) rareOperands(buf []byte, p, rec int, op trace.Op, flags trace.Flags, obj, value uint64) ([]uint64, int) {
	if flags == trace.FlagMessage || op.IsRange() {
		if op.IsRange() && r.version < 3 {
			r.recordErr(rec, fmt.Sprintf("%s in a version %d file", op, r.version))
			return nil, -1
		}
		if op.IsRange() && r.version < 7 && trace.Span(value).Sparse() {
			r.recordErr(rec, fmt.Sprintf("%s of a sparse span in a version %d file", op, r.version))
			return nil, -1
		}
		if err := (&trace.Event{Op: op, Flags: flags, Value: value}).Validate(); err != nil {
			r.recordErr(rec, err.Error())
			return nil, -1
		}
	}
	var addrs []uint64
	switch op {
	case trace.OpMethodBegin:
		addrs, p = r.decodeAddrs(buf, p, rec)
	case trace.OpFork, trace.OpJoin:
		if obj > math.MaxUint32 {
			r.recordErr(rec, fmt.Sprintf("%s of goroutine %d out of range", op, obj))
			return nil, -1
		}
	}
	return addrs, p
}

// goAtomic completes e, the event of the FlagGoAtomic record at rec (op
// on obj), with its flags. Unless KeepGoAtomics, e becomes the first of
// the events it stands for (trace.GoAtomicEvents), and the next calls of
// Next return the others.
func (r *Reader) goAtomic(e *trace.Event, rec int, op trace.Op, obj uint64, goFlags trace.Flags) error {
	e.Flags |= goFlags
	if obj&trace.AtomicLockBit != 0 {
		return r.recordErr(rec, fmt.Sprintf("%s of %#x: the address has AtomicLockBit set", op, obj))
	}
	if r.keepAtomics {
		return nil
	}
	trace.GoAtomicEvents(e, &r.atoms)
	*e = r.atoms[0]
	r.atomNext = 1
	return nil
}

// decodeAddrs decodes a MethodBegin's address set into r.addrs. On error it
// sets r.err and returns a negative position.
func (r *Reader) decodeAddrs(buf []byte, p, rec int) ([]uint64, int) {
	n, p := uvarint(buf, p)
	if p < 0 {
		r.varintErr(rec, p, "address count")
		return nil, -1
	}
	if n == 0 {
		return nil, p
	}
	if n > uint64(len(buf)-p) { // each address takes at least a byte
		r.recordErr(rec, fmt.Sprintf("address count %d exceeds the rest of the block", n))
		return nil, -1
	}
	if uint64(cap(r.addrs)) < n {
		r.addrs = make([]uint64, n)
	}
	addrs := r.addrs[:n]
	var v uint64
	if v, p = uvarint(buf, p); p < 0 {
		r.varintErr(rec, p, "address")
		return nil, -1
	}
	a := r.st.obj[classData] + unzigzag(v)
	addrs[0] = a
	for i := 1; i < len(addrs); i++ {
		if v, p = uvarint(buf, p); p < 0 {
			r.varintErr(rec, p, "address")
			return nil, -1
		}
		if a+v < a {
			r.recordErr(rec, "address set is not ascending")
			return nil, -1
		}
		a += v
		addrs[i] = a
	}
	return addrs, p
}

// siteMark decodes, at p, the site of a mark record (wide access, inline
// function: what names it), which files of version since and later hold,
// and sets the mark with set; it returns the offset past the record.
func (r *Reader) siteMark(rec, p int, since uint64, what string, set func(trace.SiteID) error) (int, error) {
	if r.version < since {
		return p, r.recordErr(rec, fmt.Sprintf("%s definition in a version %d file", what, r.version))
	}
	v, p := uvarint(r.buf, p)
	if p < 0 {
		return p, r.varintErr(rec, p, what+"'s site")
	}
	if v == 0 || v >= uint64(len(r.meta.Sites)) {
		return p, r.recordErr(rec, fmt.Sprintf("%s at site %d, which is not defined", what, v))
	}
	_ = set(trace.SiteID(v)) // cannot fail: v checked above
	return p, nil
}

// definition decodes the definition record at r.p into Meta.
func (r *Reader) definition() error {
	buf, rec := r.buf, r.p
	kind := buf[rec] >> 5
	p := rec + 1
	var v uint64
	var err error
	switch kind {
	case defSite:
		var id uint64
		var s trace.Site
		var line, col uint64
		if id, p = uvarint(buf, p); p < 0 {
			return r.varintErr(rec, p, "site ID")
		}
		if s.File, p, err = r.str(buf, p, rec, "site file"); err != nil {
			return err
		}
		if line, p = uvarint(buf, p); p < 0 {
			return r.varintErr(rec, p, "site line")
		}
		if col, p = uvarint(buf, p); p < 0 {
			return r.varintErr(rec, p, "site column")
		}
		if s.Func, p, err = r.str(buf, p, rec, "site function"); err != nil {
			return err
		}
		if line > math.MaxInt32 || col > math.MaxInt32 {
			return r.recordErr(rec, fmt.Sprintf("site %d: line %d or column %d out of range", id, line, col))
		}
		if id != uint64(len(r.meta.Sites)) {
			return r.recordErr(rec, fmt.Sprintf("site %d defined out of order (expected %d)", id, len(r.meta.Sites)))
		}
		s.Line, s.Col = int(line), int(col)
		_ = r.meta.DefineSite(trace.SiteID(id), s) // cannot fail: id checked above
	case defGoroutine:
		var g trace.Goroutine
		var parent, site uint64
		if v, p = uvarint(buf, p); p < 0 {
			return r.varintErr(rec, p, "goroutine ID")
		}
		if parent, p = uvarint(buf, p); p < 0 {
			return r.varintErr(rec, p, "goroutine parent")
		}
		if site, p = uvarint(buf, p); p < 0 {
			return r.varintErr(rec, p, "goroutine site")
		}
		if g.Name, p, err = r.str(buf, p, rec, "goroutine name"); err != nil {
			return err
		}
		switch {
		case v >= uint64(trace.NoParent):
			return r.recordErr(rec, fmt.Sprintf("goroutine ID %d out of range", v))
		case v >= uint64(r.goroutines)+MaxGIDGap:
			return r.recordErr(rec, fmt.Sprintf("goroutine ID %d is not below the %d goroutines defined so far plus %d", v, r.goroutines, MaxGIDGap))
		case parent > math.MaxUint32:
			return r.recordErr(rec, fmt.Sprintf("goroutine %d: parent out of range", v))
		case site >= uint64(len(r.meta.Sites)):
			return r.recordErr(rec, fmt.Sprintf("goroutine %d: site %d is not defined", v, site))
		}
		g.ID, g.Parent, g.Site = trace.GID(v), trace.GID(parent)-1, trace.SiteID(site)
		if err := r.meta.DefineGoroutine(g); err != nil {
			return r.recordErr(rec, err.Error())
		}
		r.goroutines++
	case defName:
		var name string
		if v, p = uvarint(buf, p); p < 0 {
			return r.varintErr(rec, p, "named object")
		}
		if name, p, err = r.str(buf, p, rec, "name"); err != nil {
			return err
		}
		r.meta.SetName(v, name)
	case defCallee:
		if r.version < 5 {
			return r.recordErr(rec, fmt.Sprintf("callee definition in a version %d file", r.version))
		}
		var c trace.Frame
		var line uint64
		if v, p = uvarint(buf, p); p < 0 {
			return r.varintErr(rec, p, "callee's site")
		}
		if c.Func, p, err = r.str(buf, p, rec, "callee function"); err != nil {
			return err
		}
		if c.File, p, err = r.str(buf, p, rec, "callee file"); err != nil {
			return err
		}
		if line, p = uvarint(buf, p); p < 0 {
			return r.varintErr(rec, p, "callee line")
		}
		switch {
		case line > math.MaxInt32:
			return r.recordErr(rec, fmt.Sprintf("callee of site %d: line %d out of range", v, line))
		case c.Func == "":
			return r.recordErr(rec, fmt.Sprintf("callee of site %d has no function", v))
		case v == 0 || v >= uint64(len(r.meta.Sites)):
			return r.recordErr(rec, fmt.Sprintf("callee of site %d, which is not defined", v))
		}
		c.Line = int(line)
		_ = r.meta.SetCallee(trace.SiteID(v), c) // cannot fail: v checked above
	case defCall:
		if r.version < 6 {
			return r.recordErr(rec, fmt.Sprintf("call definition in a version %d file", r.version))
		}
		var c trace.Call
		var line, col uint64
		if v, p = uvarint(buf, p); p < 0 {
			return r.varintErr(rec, p, "call's site")
		}
		if c.Func, p, err = r.str(buf, p, rec, "called function"); err != nil {
			return err
		}
		if line, p = uvarint(buf, p); p < 0 {
			return r.varintErr(rec, p, "call's end line")
		}
		if col, p = uvarint(buf, p); p < 0 {
			return r.varintErr(rec, p, "call's end column")
		}
		switch {
		case line == 0 || line > math.MaxInt32 || col > math.MaxInt32:
			return r.recordErr(rec, fmt.Sprintf("call at site %d: end %d:%d out of range", v, line, col))
		case v == 0 || v >= uint64(len(r.meta.Sites)):
			return r.recordErr(rec, fmt.Sprintf("call at site %d, which is not defined", v))
		}
		c.EndLine, c.EndCol = int(line), int(col)
		_ = r.meta.SetCall(trace.SiteID(v), c) // cannot fail: v checked above
	case defWide:
		if p, err = r.siteMark(rec, p, 6, "wide access", r.meta.SetWide); err != nil {
			return err
		}
	case defInline:
		if p, err = r.siteMark(rec, p, 8, "inline function", r.meta.SetInline); err != nil {
			return err
		}
	default:
		return r.recordErr(rec, fmt.Sprintf("unknown definition kind %d (header byte %#02x)", kind, buf[rec]))
	}
	r.p = p
	return nil
}

func (r *Reader) str(buf []byte, p, rec int, what string) (string, int, error) {
	n, p := uvarint(buf, p)
	if p < 0 {
		return "", p, r.varintErr(rec, p, what)
	}
	if n > uint64(len(buf)-p) {
		return "", -1, r.recordErr(rec, fmt.Sprintf("%s of %d bytes runs past the end of the block", what, n))
	}
	return string(buf[p : p+int(n)]), p + int(n), nil
}

// nextBlock reads the next block. It returns nil when an events block is
// ready in r.buf, io.EOF at the end, or the (sticky) error.
func (r *Reader) nextBlock() error {
	if r.err != nil {
		return r.err
	}
	if r.done {
		return io.EOF
	}
	if !r.started {
		r.started = true
		if err := r.readHeader(); err != nil {
			return err
		}
	}
	r.buf, r.p = nil, 0
	off := r.off
	r.blockOff = off
	kind, err := r.br.ReadByte()
	if err == io.EOF {
		return r.finish(fmt.Sprintf("%s: no end block after %d events at offset %d; the writer did not finish (the run crashed, or its tracing stopped early: its output says why)", r.label(), r.events, off))
	}
	if err != nil {
		return r.ioErr(err)
	}
	r.off++
	if kind != blockEvents && kind != blockEnd {
		if kind == 0 {
			if zeros, ok, err := r.zeroTail(); err != nil {
				return err
			} else if ok {
				return r.finish(fmt.Sprintf("%s: cut off at offset %d after %d events: the last %d bytes are zeros; the run probably crashed", r.label(), off, r.events, zeros))
			}
		}
		return r.fail(off, fmt.Sprintf("unknown block kind %d", kind))
	}

	// The length: a uvarint read byte by byte, remembered for the CRC.
	var hdr [1 + binary.MaxVarintLen64]byte
	hdr[0] = kind
	hl := 1
	var n uint64
	for shift := 0; ; shift += 7 {
		b, err := r.br.ReadByte()
		if err == io.EOF {
			return r.cutOff(off)
		}
		if err != nil {
			return r.ioErr(err)
		}
		r.off++
		hdr[hl] = b
		hl++
		n |= uint64(b&0x7F) << shift
		if b < 0x80 {
			break
		}
		if hl == len(hdr) || n > MaxBlockLen {
			return r.fail(off, fmt.Sprintf("block length exceeds the maximum %d", MaxBlockLen))
		}
	}
	if n > MaxBlockLen {
		return r.fail(off, fmt.Sprintf("block length %d exceeds the maximum %d", n, MaxBlockLen))
	}

	total := int(n) + 4
	if cap(r.block) < total {
		r.block = make([]byte, total, max(total, 2*cap(r.block)))
	}
	data := r.block[:total]
	got, err := io.ReadFull(r.br, data)
	r.off += int64(got)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return r.cutOff(off)
	}
	if err != nil {
		return r.ioErr(err)
	}
	payload := data[:n]
	stored := binary.LittleEndian.Uint32(data[n:])
	crc := crc32.Update(crc32.Checksum(hdr[:hl], castagnoli), castagnoli, payload)
	if crc != stored {
		return r.fail(off, fmt.Sprintf("checksum mismatch in block of %d bytes (stored 0x%08x, computed 0x%08x): the file is corrupt", n, stored, crc))
	}

	if kind == blockEvents {
		r.buf = payload
		r.payloadOff = off + int64(hl)
		r.st.reset()
		return nil
	}
	// The end block.
	count, p := uvarint(payload, 0)
	if p != len(payload) {
		return r.fail(off, "malformed end block")
	}
	if count != r.events {
		return r.fail(off, fmt.Sprintf("end block counts %d events but the file holds %d", count, r.events))
	}
	if _, err := r.br.ReadByte(); err != io.EOF {
		if err != nil {
			return r.ioErr(err)
		}
		return r.fail(r.off, "data after the end block")
	}
	r.done = true
	return io.EOF
}

func (r *Reader) readHeader() error {
	var h [len(Magic)]byte
	n, err := io.ReadFull(r.br, h[:])
	r.off += int64(n)
	switch {
	case err != nil && err != io.EOF && err != io.ErrUnexpectedEOF:
		return r.ioErr(err)
	case n == 0:
		return r.fail(0, "empty file, not a .rkt trace")
	case string(h[:n]) != Magic[:n]:
		return r.fail(0, "not a .rkt trace (bad magic number)")
	case n < len(Magic):
		return r.fail(0, fmt.Sprintf("file ends inside the .rkt header (after %d bytes)", n))
	}
	var version uint64
	for shift := 0; ; shift += 7 {
		b, err := r.br.ReadByte()
		if err == io.EOF {
			return r.fail(0, "file ends inside the .rkt header (no version)")
		}
		if err != nil {
			return r.ioErr(err)
		}
		r.off++
		version |= uint64(b&0x7F) << shift
		if b < 0x80 {
			break
		}
		if shift >= 63 {
			return r.fail(int64(len(Magic)), "bad format version number")
		}
	}
	if version < MinVersion || version > Version {
		return r.fail(int64(len(Magic)), fmt.Sprintf("unsupported .rkt format version %d (this reader reads versions %d to %d); use a matching racekit", version, MinVersion, Version))
	}
	r.version = version
	return nil
}

// zeroTail consumes the rest of the input after a zero kind byte and
// reports whether it was all zeros, and how many bytes that was.
func (r *Reader) zeroTail() (int64, bool, error) {
	zeros := int64(1)
	for {
		chunk, err := r.br.Peek(r.br.Buffered())
		for _, b := range chunk {
			if b != 0 {
				return 0, false, nil
			}
		}
		zeros += int64(len(chunk))
		r.br.Discard(len(chunk))
		if len(chunk) == 0 {
			if _, err = r.br.Peek(1); err == io.EOF {
				return zeros, true, nil
			}
			if err != nil {
				return 0, false, r.ioErr(err)
			}
		}
	}
}

func (r *Reader) cutOff(blockOff int64) error {
	return r.finish(fmt.Sprintf("%s: cut off at offset %d inside the block at offset %d, after %d events; the run probably crashed", r.label(), r.off, blockOff, r.events))
}

func (r *Reader) finish(warning string) error {
	r.warnings = append(r.warnings, warning)
	r.done, r.cut = true, true
	return io.EOF
}

// Cut reports whether the trace ended without an end block (the writer
// did not finish: the run crashed or was killed), once Next has returned
// io.EOF. A trace checkpointed while the tests ran ends with one even
// then.
func (r *Reader) Cut() bool { return r.cut }

func (r *Reader) label() string {
	if r.name == "" {
		return "<input>"
	}
	return r.name
}

func (r *Reader) fail(off int64, msg string) error {
	r.err = &trace.FormatError{File: r.name, Offset: off, Msg: msg}
	r.buf, r.p = nil, 0
	return r.err
}

func (r *Reader) recordErr(rec int, msg string) error {
	return r.fail(r.payloadOff+int64(rec), fmt.Sprintf("%s (record of the events block at offset %d)", msg, r.blockOff))
}

func (r *Reader) varintErr(rec, code int, field string) error {
	if code == errVarintOverflow {
		return r.recordErr(rec, "bad varint in "+field)
	}
	return r.recordErr(rec, field+" runs past the end of the block")
}

func (r *Reader) ioErr(err error) error {
	r.err = fmt.Errorf("%s: reading at offset %d: %w", r.label(), r.off, err)
	return r.err
}

var _ interface {
	trace.Reader
	trace.Warner
} = (*Reader)(nil)

var _ trace.Writer = (*Writer)(nil)
