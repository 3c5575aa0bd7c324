package rkt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"slices"

	"github.com/racekit/racekit/trace"
)

// headroom is reserved in front of the pending payload for the block's kind
// byte and length, so that a block goes out in one Write without copying.
const headroom = 1 + 5

// maxEventFixed bounds an event record without its addresses: header, G,
// Seq gap, site, object, value and address count.
const maxEventFixed = 1 + 5 + 10 + 10 + 10 + 10 + 10

var errClosed = errors.New("rkt: write after Close")

// Writer encodes a trace into the .rkt format. It implements trace.Writer.
// Definitions and events are buffered into a block that is written, in one
// Write call, when it reaches the block size, on Flush and on Close.
//
// Invalid input (an event that fails trace.Event.Validate, or that uses a
// goroutine or site not defined before it; a definition out of order) is
// rejected with an error and nothing is written for it, so every file a
// Writer produces is readable. An error of the underlying io.Writer is
// sticky: every later call returns it. A Writer is not safe for concurrent
// use.
type Writer struct {
	w         io.Writer
	blockSize int
	buf       []byte // headroom, then the pending block's payload
	st        state

	events     uint64 // events written so far
	sites      int    // site IDs defined, counting the unknown site 0
	gdef       []bool // per GID: defined
	goroutines int    // goroutines defined
	scratch    []uint64
	headerDone bool
	closed     bool
	err        error // sticky write error

	checkpoints bool // Flush ends the file with an end block (SetCheckpoints)
	endLen      int  // bytes of the end block Flush left at the file's end; 0: none
}

// NewWriter returns a Writer to w with blocks of DefaultBlockSize.
func NewWriter(w io.Writer) *Writer { return NewWriterSize(w, DefaultBlockSize) }

// NewWriterSize returns a Writer to w that ends a block once its payload
// reaches blockSize bytes. Smaller blocks lose less of a crashed run and
// cost a few bytes each; blockSize <= 0 means DefaultBlockSize, and sizes
// above MaxBlockLen are lowered to it.
func NewWriterSize(w io.Writer, blockSize int) *Writer {
	if blockSize <= 0 {
		blockSize = DefaultBlockSize
	}
	blockSize = min(blockSize, MaxBlockLen)
	wr := &Writer{
		w:         w,
		blockSize: blockSize,
		buf:       make([]byte, headroom, headroom+min(blockSize, DefaultBlockSize)+maxEventFixed),
		sites:     1,
	}
	wr.st.reset()
	return wr
}

// Events returns the number of events written so far.
func (w *Writer) Events() uint64 { return w.events }

func (w *Writer) check() error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return errClosed
	}
	return nil
}

// reserve makes room for a record of at most n bytes, ending the pending
// block first if the record would push it past MaxBlockLen.
func (w *Writer) reserve(n int, what func() string) error {
	if n > MaxBlockLen {
		return fmt.Errorf("rkt: %s needs up to %d bytes, more than a block holds (%d)", what(), n, MaxBlockLen)
	}
	if len(w.buf)-headroom+n > MaxBlockLen {
		return w.flushBlock()
	}
	return nil
}

// recordDone ends the block once it has reached the block size.
func (w *Writer) recordDone() error {
	if len(w.buf)-headroom >= w.blockSize {
		return w.flushBlock()
	}
	return nil
}

// DefineSite defines site id, which must be the next unused site ID
// (1 for the first call: site 0 is the unknown site).
func (w *Writer) DefineSite(id trace.SiteID, s trace.Site) error {
	if err := w.check(); err != nil {
		return err
	}
	if int(id) != w.sites {
		return fmt.Errorf("rkt: site %d defined out of order (expected %d)", id, w.sites)
	}
	if s.Line < 0 || s.Line > math.MaxInt32 || s.Col < 0 || s.Col > math.MaxInt32 {
		return fmt.Errorf("rkt: site %d (%s): line and column must be in [0, 2^31)", id, s)
	}
	c := s.Callee
	if c.Line < 0 || c.Line > math.MaxInt32 {
		return fmt.Errorf("rkt: site %d (%s): callee line must be in [0, 2^31)", id, s)
	}
	k := s.Call
	if k.EndLine < 0 || k.EndLine > math.MaxInt32 || k.EndCol < 0 || k.EndCol > math.MaxInt32 {
		return fmt.Errorf("rkt: site %d (%s): call's end line and column must be in [0, 2^31)", id, s)
	}
	n := 1 + 5 + 10 + len(s.File) + 5 + 5 + 10 + len(s.Func)
	if !c.IsZero() {
		n += 1 + 5 + 10 + len(c.Func) + 10 + len(c.File) + 5
	}
	if !k.IsZero() {
		n += 1 + 5 + 10 + len(k.Func) + 5 + 5
	}
	if s.Wide {
		n += 1 + 5
	}
	if s.Inline {
		n += 1 + 5
	}
	if err := w.reserve(n, func() string { return "site " + s.String() }); err != nil {
		return err
	}
	b := append(w.buf, defSite<<5)
	b = appendUvarint(b, uint64(id))
	b = appendString(b, s.File)
	b = appendUvarint(b, uint64(s.Line))
	b = appendUvarint(b, uint64(s.Col))
	b = appendString(b, s.Func)
	if !c.IsZero() {
		b = append(b, defCallee<<5)
		b = appendUvarint(b, uint64(id))
		b = appendString(b, c.Func)
		b = appendString(b, c.File)
		b = appendUvarint(b, uint64(c.Line))
	}
	if !k.IsZero() {
		b = append(b, defCall<<5)
		b = appendUvarint(b, uint64(id))
		b = appendString(b, k.Func)
		b = appendUvarint(b, uint64(k.EndLine))
		b = appendUvarint(b, uint64(k.EndCol))
	}
	if s.Wide {
		b = append(b, defWide<<5)
		b = appendUvarint(b, uint64(id))
	}
	if s.Inline {
		b = append(b, defInline<<5)
		b = appendUvarint(b, uint64(id))
	}
	w.buf = b
	w.sites++
	return w.recordDone()
}

// DefineGoroutine defines goroutine g.ID. Its site must be defined, and
// its ID unused and below the number of goroutines defined so far plus
// MaxGIDGap.
func (w *Writer) DefineGoroutine(g trace.Goroutine) error {
	if err := w.check(); err != nil {
		return err
	}
	switch {
	case g.ID == trace.NoParent:
		return fmt.Errorf("rkt: goroutine ID %d is reserved", g.ID)
	case int(g.ID) < len(w.gdef) && w.gdef[g.ID]:
		return fmt.Errorf("rkt: goroutine %d defined twice", g.ID)
	case int(g.ID) >= w.goroutines+MaxGIDGap:
		return fmt.Errorf("rkt: goroutine ID %d is not below the %d goroutines defined so far plus %d; GIDs must be dense", g.ID, w.goroutines, MaxGIDGap)
	case int(g.Site) >= w.sites:
		return fmt.Errorf("rkt: goroutine %d: site %d is not defined", g.ID, g.Site)
	}
	if err := w.reserve(1+5+5+5+10+len(g.Name), func() string { return fmt.Sprintf("goroutine %d", g.ID) }); err != nil {
		return err
	}
	b := append(w.buf, defGoroutine<<5)
	b = appendUvarint(b, uint64(g.ID))
	b = appendUvarint(b, uint64(g.Parent+1)) // NoParent encodes as 0
	b = appendUvarint(b, uint64(g.Site))
	w.buf = appendString(b, g.Name)
	for len(w.gdef) <= int(g.ID) {
		w.gdef = append(w.gdef, false)
	}
	w.gdef[g.ID] = true
	w.goroutines++
	return w.recordDone()
}

// DefineName binds obj to name. A second name for the same object is
// written but readers ignore it, as trace.Meta.SetName does.
func (w *Writer) DefineName(obj uint64, name string) error {
	if err := w.check(); err != nil {
		return err
	}
	if err := w.reserve(1+10+10+len(name), func() string { return fmt.Sprintf("name of %#x", obj) }); err != nil {
		return err
	}
	b := append(w.buf, defName<<5)
	b = appendUvarint(b, obj)
	w.buf = appendString(b, name)
	return w.recordDone()
}

// WriteEvent encodes e. Its goroutine and site must have been defined.
// Value is not stored when the op has no value or FlagValueUnknown is set,
// and a MethodBegin's Addrs are stored sorted (e itself is not modified).
func (w *Writer) WriteEvent(e *trace.Event) error {
	if err := w.check(); err != nil {
		return err
	}
	if err := e.Validate(); err != nil {
		return fmt.Errorf("rkt: event seq %d: %v", e.Seq, err)
	}
	g := e.G
	if int(g) >= len(w.gdef) || !w.gdef[g] {
		return fmt.Errorf("rkt: event seq %d uses goroutine %d, which is not defined", e.Seq, g)
	}
	if int(e.Site) >= w.sites {
		return fmt.Errorf("rkt: event seq %d uses site %d, which is not defined", e.Seq, e.Site)
	}
	if len(e.Addrs) > 0 || len(w.buf)-headroom+maxEventFixed > MaxBlockLen {
		if err := w.reserve(maxEventFixed+10*len(e.Addrs), func() string { return fmt.Sprintf("event seq %d", e.Seq) }); err != nil {
			return err
		}
	}

	st := &w.st
	op := e.Op
	h := byte(op)
	last := e.Seq // the Seq the next record's is compared with
	if e.Flags&trace.FlagGoAtomic != 0 {
		h, last = goAtomicCode(e), e.Seq+trace.GoAtomicSeqs-1
	}
	if g == st.g {
		h |= hdrSameG
	}
	if e.Seq == st.seq+1 {
		h |= hdrSeqNext
	}
	if e.Flags&opFlag[op] != 0 {
		h |= hdrOpFlag
	}
	b := append(w.buf, h)
	if h&hdrSameG == 0 {
		b = appendUvarint(b, uint64(g))
		st.g = g
	}
	if h&hdrSeqNext == 0 {
		b = appendUvarint(b, e.Seq-(st.seq+1))
	}
	st.seq = last
	gi := byte(g)
	b = appendUvarint(b, zigzag(uint64(int64(e.Site)-int64(st.site[gi]))))
	st.site[gi] = e.Site
	c := opClass[op]
	b = appendUvarint(b, zigzag(e.Obj-st.obj[c]))
	st.obj[c] = e.Obj
	if e.Flags&trace.FlagMessage != 0 {
		b = st.appendMsg(b, e.Value)
	} else if trace.StoresValue(op, e.Flags) {
		b = appendUvarint(b, e.Value)
	}
	if op == trace.OpMethodBegin {
		b = w.appendAddrs(b, e.Addrs)
	}
	w.buf = b
	w.events++
	return w.recordDone()
}

func (w *Writer) appendAddrs(b []byte, addrs []uint64) []byte {
	b = appendUvarint(b, uint64(len(addrs)))
	if len(addrs) == 0 {
		return b
	}
	if !slices.IsSorted(addrs) {
		w.scratch = append(w.scratch[:0], addrs...)
		slices.Sort(w.scratch)
		addrs = w.scratch
	}
	b = appendUvarint(b, zigzag(addrs[0]-w.st.obj[classData]))
	for i := 1; i < len(addrs); i++ {
		b = appendUvarint(b, addrs[i]-addrs[i-1])
	}
	return b
}

// Flush writes the pending block, so that everything written so far is in
// the file even if the program then crashes, and then flushes the
// underlying writer if it has a Flush() error method (a *bufio.Writer).
// In checkpoint mode (SetCheckpoints) the file then ends with an end block.
func (w *Writer) Flush() error {
	if err := w.check(); err != nil {
		return err
	}
	if err := w.flushBlock(); err != nil {
		return err
	}
	if w.checkpoints {
		if err := w.checkpoint(); err != nil {
			return err
		}
	}
	return w.flushUnderlying()
}

// SetCheckpoints makes every later Flush a checkpoint: after the pending
// block, Flush writes an end block, so that the file is a finished trace
// if nothing more is written (a program that cannot tell which of its
// moments is its last: a test binary without TestMain). The next block
// written (or Close's end block) goes where that end block began,
// replacing it: the underlying writer must be an io.Seeker positioned at
// the end of what w wrote (an *os.File w alone writes to). A process that
// dies while a block that replaces it is written leaves a file without
// an end block, as an unfinished one.
func (w *Writer) SetCheckpoints(on bool) error {
	if _, ok := w.w.(io.Seeker); on && !ok {
		return errors.New("rkt: checkpoints need an io.Seeker")
	}
	w.checkpoints = on
	return nil
}

// checkpoint writes the end block Flush leaves in checkpoint mode, unless
// the file already ends with an up-to-date one.
func (w *Writer) checkpoint() error {
	if w.endLen > 0 {
		return nil
	}
	w.buf = appendUvarint(w.buf[:headroom], w.events)
	n, err := w.emitN(blockEnd)
	if err == nil {
		w.endLen = n
	}
	return err
}

// Close writes the pending block and the end block (with the event count),
// and flushes like Flush. It does not close the underlying writer. Calls
// after Close return an error, except Close itself, which returns nil.
func (w *Writer) Close() error {
	if w.closed && w.err == nil {
		return nil
	}
	if err := w.check(); err != nil {
		return err
	}
	if err := w.flushBlock(); err != nil {
		return err
	}
	w.buf = appendUvarint(w.buf[:headroom], w.events)
	if err := w.emit(blockEnd); err != nil {
		return err
	}
	w.closed = true
	return w.flushUnderlying()
}

func (w *Writer) flushUnderlying() error {
	if f, ok := w.w.(interface{ Flush() error }); ok {
		if err := f.Flush(); err != nil {
			w.err = fmt.Errorf("rkt: %w", err)
			return w.err
		}
	}
	return nil
}

// flushBlock writes the pending records (if any) as an events block and
// starts a new one; the header goes out first if it has not yet.
func (w *Writer) flushBlock() error {
	if len(w.buf) == headroom {
		if !w.headerDone {
			return w.writeHeader()
		}
		return nil
	}
	err := w.emit(blockEvents)
	w.st.reset()
	return err
}

func (w *Writer) writeHeader() error {
	var h [len(Magic) + 1]byte
	copy(h[:], Magic)
	h[len(Magic)] = Version
	w.headerDone = true
	if _, err := w.w.Write(h[:]); err != nil {
		w.err = fmt.Errorf("rkt: writing header: %w", err)
		return w.err
	}
	return nil
}

// emit writes w.buf[headroom:] as a block of the given kind and empties it.
func (w *Writer) emit(kind byte) error {
	_, err := w.emitN(kind)
	return err
}

// emitN is emit, and returns the number of bytes the block took. The
// block replaces a checkpoint's end block at the file's end.
func (w *Writer) emitN(kind byte) (int, error) {
	if !w.headerDone {
		if err := w.writeHeader(); err != nil {
			return 0, err
		}
	}
	if w.endLen > 0 {
		if _, err := w.w.(io.Seeker).Seek(-int64(w.endLen), io.SeekCurrent); err != nil {
			w.err = fmt.Errorf("rkt: replacing the checkpoint's end block: %w", err)
			return 0, w.err
		}
		w.endLen = 0
	}
	var hdr [headroom]byte
	hdr[0] = kind
	hl := 1 + binary.PutUvarint(hdr[1:], uint64(len(w.buf)-headroom))
	start := headroom - hl
	copy(w.buf[start:], hdr[:hl])
	crc := crc32.Checksum(w.buf[start:], castagnoli)
	w.buf = binary.LittleEndian.AppendUint32(w.buf, crc)
	n, err := w.w.Write(w.buf[start:])
	w.buf = w.buf[:headroom]
	if err != nil {
		w.err = fmt.Errorf("rkt: writing block: %w", err)
		return 0, w.err
	}
	return n, nil
}
