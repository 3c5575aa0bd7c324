package text

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/racekit/racekit/trace"
)

const (
	// The read buffer starts at minBufferSize and grows to readBufferSize
	// as long as reads fill it (a big input), and beyond for a line longer
	// than it. Reads of more than 1 MiB pass through the bufio.Reader of
	// tracefile.Open without a copy.
	minBufferSize  = 4 << 10
	readBufferSize = 2 << 20
	// bufPad is the capacity kept beyond the read buffer's length, so that
	// load8 may load 8 bytes at any token of a line, and peekLine 32 at
	// any line.
	bufPad = 32
	// maxLineLength bounds one line, so that a binary file read as text
	// fails with an error instead of exhausting memory.
	maxLineLength = 16 << 20
	// maxGIDGap bounds how far an explicit goroutine ID (#!g id=) may lie
	// beyond the goroutine table, which Meta stores densely.
	maxGIDGap = 1 << 16
)

// STDReader reads RAPID's STD format, line by line: one event per line.
// It implements trace.Reader and trace.Warner. For analysis, wrap it in a
// RAPIDReader, which gives STD's threads RAPID's meaning (tracefile.Open
// does).
type STDReader struct{ r reader }

// NewSTDReader returns a reader of the STD trace in rd; name (a file name)
// is used in errors.
func NewSTDReader(rd io.Reader, name string) *STDReader {
	return &STDReader{r: newReader(rd, name, false)}
}

// Next reads the next event; it returns io.EOF after the last one and a
// *trace.FormatError on malformed input.
func (r *STDReader) Next(e *trace.Event) error { return r.r.next(e) }

// Meta returns the tables of the events read so far.
func (r *STDReader) Meta() *trace.Meta { return r.r.meta }

// Warnings says what the reader skipped: a last line that is cut off.
func (r *STDReader) Warnings() []string { return r.r.warnings }

// TextReader reads racekit's text format (.rktx). It implements
// trace.Reader and trace.Warner.
type TextReader struct{ r reader }

// NewTextReader returns a reader of the racekit text trace in rd; name (a
// file name) is used in errors.
func NewTextReader(rd io.Reader, name string) *TextReader {
	return &TextReader{r: newReader(rd, name, true)}
}

// Next reads the next event; it returns io.EOF after the last one and a
// *trace.FormatError on malformed input.
func (r *TextReader) Next(e *trace.Event) error { return r.r.next(e) }

// Meta returns the tables of the events and directives read so far.
func (r *TextReader) Meta() *trace.Meta { return r.r.meta }

// Warnings says what the reader skipped: a last line that is cut off.
func (r *TextReader) Warnings() []string { return r.r.warnings }

// Parse reads a whole racekit text trace from src, for tests and examples.
// name is used in errors. Unlike the readers, it reports a malformed last
// line without a newline as an error, not as a cut-off line: a trace written
// by hand has no excuse.
func Parse(name, src string) (*trace.Trace, error) {
	r := NewTextReader(strings.NewReader(src), name)
	r.r.strictEnd = true
	t := &trace.Trace{M: r.Meta()}
	for {
		var e trace.Event
		err := r.Next(&e)
		if errors.Is(err, io.EOF) {
			return t, nil
		}
		if err != nil {
			return t, err
		}
		t.Events = append(t.Events, e.Clone())
	}
}

// reader is the parser of both formats; ext enables racekit's extensions.
type reader struct {
	src    io.Reader
	srcErr error // the error that ended src: io.EOF, or a read failure

	// buf[start:end] is read and not yet parsed. cap(buf) is len(buf)+bufPad.
	buf        []byte
	start, end int
	full       bool // the last read filled buf

	name     string
	ext      bool
	meta     *trace.Meta
	err      error // sticky: io.EOF or the first error
	warnings []string
	line     int    // 1-based number of the current line
	off      int64  // byte offset of the next line
	lineOff  int64  // byte offset of the current line
	seq      uint64 // Seq of the next event

	threads tokenTable[trace.GID]
	nextG   trace.GID
	// The previous line's thread, which most lines repeat: its key (zero
	// if that is not the whole token) and goroutine.
	lastKey key
	lastG   trace.GID

	objs    tokenTable[uint64]  // name token -> object ID
	taken   map[uint64]struct{} // racekit text: every object ID in use
	nextObj uint64

	labels tokenTable[trace.SiteID] // location label -> site

	lines lineCache

	addrs    []uint64 // Addrs of the current call event
	addrToks []token  // the address tokens of the current call line

	slowOnly  bool // tests: parse every line with the general parser
	strictEnd bool // a malformed last line is an error even without '\n'
}

// token is a token of a line, and whether it was quoted.
type token struct {
	b      []byte
	quoted bool
}

func newReader(rd io.Reader, name string, ext bool) reader {
	return reader{
		src:     rd,
		buf:     make([]byte, minBufferSize, minBufferSize+bufPad),
		name:    name,
		ext:     ext,
		meta:    trace.NewMeta(),
		threads: newTokenTable[trace.GID](),
		objs:    newTokenTable[uint64](),
		taken:   make(map[uint64]struct{}),
		nextObj: firstObjID,
		labels:  newTokenTable[trace.SiteID](),
		lines:   newLineCache(),
	}
}

func (r *reader) errorf(format string, args ...any) error {
	return &trace.FormatError{File: r.name, Offset: r.lineOff, Line: r.line, Msg: fmt.Sprintf(format, args...)}
}

// shapeErr reports a line that is not THREAD|OP(DECOR)|LOC at all.
func (r *reader) shapeErr(line []byte) error {
	if r.ext {
		return r.errorf("expected THREAD|OP(DECOR)[|LOC], got %s", quoteLine(line))
	}
	return r.errorf("expected THREAD|OP(DECOR)|LOC, got %s", quoteLine(line))
}

// quoteLine quotes a line for an error message, cut to a readable length.
func quoteLine(b []byte) string {
	const max = 80
	if len(b) > max {
		return strconv.Quote(string(b[:max])) + "..."
	}
	return strconv.Quote(string(b))
}

func (r *reader) next(e *trace.Event) error {
	if r.err != nil {
		return r.err
	}
	for {
		var (
			slot *lineSlot
			key  lineKey
			klen int
		)
		if !r.slowOnly && r.lines.on(r.line+1) {
			var hit bool
			if hit, slot, key, klen = r.cachedLine(e); hit {
				r.seq++
				return nil
			}
		}
		b, rerr := r.readLine()
		if rerr != nil && rerr != io.EOF {
			// Report a failed read before the partial line it leaves.
			msg := "read failed"
			if rerr == errLineTooLong {
				msg, rerr = fmt.Sprintf("line longer than %d bytes; is this a text trace?", maxLineLength), nil
			}
			r.err = &trace.FormatError{File: r.name, Offset: r.off, Line: r.line + 1, Msg: msg, Err: rerr}
			return r.err
		}
		if len(b) > 0 {
			r.line++
			r.lineOff = r.off
			r.off += int64(len(b))
			if !r.slowOnly && r.fastLine(b, e) {
				if slot != nil {
					slot.store(key, klen, e)
				}
				r.seq++
				return nil
			}
			ok, err := r.parseLine(b, e)
			if err != nil {
				if rerr == io.EOF && !r.strictEnd {
					// The last line has no newline and does not parse: the
					// writer was cut off (crashed) in the middle of it.
					name := r.name
					if name == "" {
						name = "<input>"
					}
					r.warnings = append(r.warnings, fmt.Sprintf("%s:%d: last line is incomplete (file cut off?); ignored", name, r.line))
					r.err = io.EOF
					return io.EOF
				}
				r.err = err
				return err
			}
			if ok {
				r.seq++
				return nil
			}
		}
		if rerr == io.EOF {
			r.err = io.EOF
			return io.EOF
		}
	}
}

var errLineTooLong = errors.New("line too long")

// readLine returns the next line with its '\n', or with src's error (io.EOF
// at the end) the rest of the input, a last line without '\n' (maybe
// empty). The slice is valid until the next call.
func (r *reader) readLine() ([]byte, error) {
	if i := bytes.IndexByte(r.buf[r.start:r.end], '\n'); i >= 0 {
		b := r.buf[r.start : r.start+i+1]
		r.start += i + 1
		return b, nil
	}
	return r.readLineSlow()
}

// readLineSlow reads more input until a line is complete.
func (r *reader) readLineSlow() ([]byte, error) {
	scanned := r.end - r.start // bytes of the line known to hold no '\n'
	for r.srcErr == nil {
		if err := r.fill(); err != nil {
			return nil, err
		}
		if i := bytes.IndexByte(r.buf[r.start+scanned:r.end], '\n'); i >= 0 {
			b := r.buf[r.start : r.start+scanned+i+1]
			r.start += scanned + i + 1
			return b, nil
		}
		scanned = r.end - r.start
	}
	b := r.buf[r.start:r.end]
	r.start = r.end
	return b, r.srcErr
}

// fill moves the unparsed input to the front of the buffer, growing it if
// the input fills it, and reads more after it. It sets srcErr when src ends
// or fails.
func (r *reader) fill() error {
	if r.start > 0 {
		r.end = copy(r.buf, r.buf[r.start:r.end])
		r.start = 0
	}
	if r.end == len(r.buf) || r.full && len(r.buf) < readBufferSize {
		if r.end > maxLineLength {
			return errLineTooLong
		}
		n := 2 * len(r.buf)
		if n < readBufferSize && r.full {
			n = readBufferSize
		}
		n = min(n, maxLineLength+1)
		buf := make([]byte, n, n+bufPad)
		copy(buf, r.buf[:r.end])
		r.buf = buf
	}
	for range 100 {
		n, err := r.src.Read(r.buf[r.end:])
		if n < 0 || n > len(r.buf)-r.end {
			r.srcErr = errors.New("reader returned an invalid count")
			return nil
		}
		r.end += n
		r.full = r.end == len(r.buf)
		if err != nil {
			r.srcErr = err
			return nil
		}
		if n > 0 {
			return nil
		}
	}
	r.srcErr = io.ErrNoProgress
	return nil
}

// opKind says what an op's decor holds.
type opKind uint8

const (
	kindObj    opKind = iota // OP(OBJ)
	kindValue                // OP(OBJ[=VALUE])
	kindThread               // OP(THREAD)
	kindNone                 // OP, OP()
	kindCall                 // call(METHOD[;ADDR,...])
)

type opInfo struct {
	op    trace.Op
	flags trace.Flags
	kind  opKind
	std   bool   // part of RAPID's STD
	decor string // what the decor holds, for errors
}

// ops holds every op mnemonic's meaning; lookupOp indexes it.
var ops = [...]opInfo{
	{trace.OpRead, 0, kindValue, true, "VAR"},
	{trace.OpWrite, 0, kindValue, true, "VAR"},
	{trace.OpAcquire, 0, kindObj, true, "LOCK"},
	{trace.OpRelease, 0, kindObj, true, "LOCK"},
	{trace.OpFork, 0, kindThread, true, "THREAD"},
	{trace.OpJoin, 0, kindThread, true, "THREAD"},
	{trace.OpBegin, 0, kindNone, true, ""},
	{trace.OpEnd, 0, kindNone, true, ""},
	{trace.OpAcquire, trace.FlagReadLock, kindObj, false, "LOCK"},
	{trace.OpRelease, trace.FlagReadLock, kindObj, false, "LOCK"},
	{trace.OpSyncRelease, 0, kindObj, false, "OBJ"},
	{trace.OpSyncAcquire, 0, kindObj, false, "OBJ"},
	{trace.OpAtomicLoad, 0, kindValue, false, "ADDR"},
	{trace.OpAtomicStore, 0, kindValue, false, "ADDR"},
	{trace.OpAtomicRMW, 0, kindValue, false, "ADDR"},
	{trace.OpMethodBegin, 0, kindCall, false, "METHOD;ADDR,..."},
	{trace.OpMethodEnd, 0, kindObj, false, "METHOD"},
	{trace.OpFuncEnter, 0, kindObj, false, "FUNC"},
	{trace.OpFuncExit, 0, kindObj, false, "FUNC"},
	{trace.OpRegionBegin, 0, kindObj, false, "REGION"},
	{trace.OpRegionEnd, 0, kindObj, false, "REGION"},
	{trace.OpAlloc, 0, kindValue, false, "ADDR=SIZE"},
	{trace.OpBlock, 0, kindValue, false, "OBJ=KIND"},
}

// lookupOp maps an op mnemonic to its meaning, or nil. A switch on
// string(b) does not allocate.
func lookupOp(b []byte) *opInfo {
	i := -1
	switch string(b) {
	case "r":
		i = 0
	case "w":
		i = 1
	case "acq":
		i = 2
	case "rel":
		i = 3
	case "fork":
		i = 4
	case "join":
		i = 5
	case "begin":
		i = 6
	case "end":
		i = 7
	case "racq":
		i = 8
	case "rrel":
		i = 9
	case "snd":
		i = 10
	case "rcv":
		i = 11
	case "aload":
		i = 12
	case "astore":
		i = 13
	case "armw":
		i = 14
	case "call":
		i = 15
	case "ret":
		i = 16
	case "enter":
		i = 17
	case "exit":
		i = 18
	case "rbegin":
		i = 19
	case "rend":
		i = 20
	case "alloc":
		i = 21
	case "block":
		i = 22
	default:
		return nil
	}
	return &ops[i]
}

const (
	stdOps  = "r, w, acq, rel, fork, join, begin, end"
	textOps = stdOps + ", racq, rrel, snd, rcv, aload, astore, armw, call, ret, enter, exit, rbegin, rend, alloc"
)

// Bytes that end a bare token inside a decor. '(' and '|' end it only to
// be reported.
var (
	stopOp     = stopSet("(| \t\r\n\v\f")
	stopDecor  = stopSet(")(|")
	stopValue  = stopSet(")(|=")
	stopMethod = stopSet(")(|;")
	stopAddr   = stopSet(")(|,")
)

func stopSet(s string) *[256]bool {
	var t [256]bool
	for i := 0; i < len(s); i++ {
		t[s[i]] = true
	}
	return &t
}

// object returns the ID of the object token tok. In racekit text a bare
// canonical hex literal is the ID itself; any other token is a name, given
// the next free ID at its first use.
func (r *reader) object(tok []byte, quoted bool) uint64 {
	return r.objectKey(tok, keyOf(tok), quoted)
}

// objectKey is object with tok's key.
func (r *reader) objectKey(tok []byte, k key, quoted bool) uint64 {
	if r.ext && !quoted {
		if id, ok := hexLiteral(tok); ok {
			if _, seen := r.taken[id]; !seen {
				r.taken[id] = struct{}{}
			}
			return id
		}
	}
	if id, ok := r.objs.getKey(tok, k); ok {
		return id
	}
	name := string(tok)
	id := r.newObjID()
	r.objs.put(name, id)
	r.meta.SetName(id, name)
	return id
}

// newObjID returns the next free ID for a named object. Only racekit text
// puts objects at IDs of its choosing (literals, #!addr), so only it needs
// to track the IDs in use.
func (r *reader) newObjID() uint64 {
	if !r.ext {
		id := r.nextObj
		r.nextObj += objIDStep
		return id
	}
	for {
		if _, used := r.taken[r.nextObj]; !used {
			break
		}
		r.nextObj += objIDStep
	}
	id := r.nextObj
	r.nextObj += objIDStep
	r.taken[id] = struct{}{}
	return id
}

// thread returns the GID of thread token tok, defining the goroutine (with
// the given parent and creation site) at its first mention.
func (r *reader) thread(tok []byte, parent trace.GID, site trace.SiteID) (trace.GID, error) {
	return r.threadKey(tok, keyOf(tok), parent, site)
}

// threadKey is thread with tok's key.
func (r *reader) threadKey(tok []byte, k key, parent trace.GID, site trace.SiteID) (trace.GID, error) {
	if k == r.lastKey {
		return r.lastG, nil
	}
	g, ok := r.threads.getKey(tok, k)
	if !ok {
		var err error
		if g, err = r.newGID(); err != nil {
			return 0, err
		}
		name := string(tok)
		if err := r.meta.DefineGoroutine(trace.Goroutine{ID: g, Parent: parent, Site: site, Name: name}); err != nil {
			return 0, r.errorf("%v", err)
		}
		r.threads.put(name, g)
	}
	r.lastKey, r.lastG = key{}, g
	if k.whole() {
		r.lastKey = k
	}
	return g, nil
}

func (r *reader) newGID() (trace.GID, error) {
	for r.meta.GoroutineDefined(r.nextG) {
		r.nextG++
	}
	if r.nextG >= trace.NoParent {
		return 0, r.errorf("too many threads")
	}
	g := r.nextG
	r.nextG++
	return g, nil
}

// site returns the site of a location label: the one bound to it by
// #!site, or the interned trace.ParseSiteLabel(label).
func (r *reader) site(label []byte) trace.SiteID {
	if len(label) == 0 {
		return trace.NoSite
	}
	return r.siteKey(label, keyOf(label))
}

// siteKey is site with the key of label, which is not empty.
func (r *reader) siteKey(label []byte, k key) trace.SiteID {
	if id, ok := r.labels.getKey(label, k); ok {
		return id
	}
	l := string(label)
	id := r.meta.InternSite(trace.ParseSiteLabel(l))
	r.labels.put(l, id)
	return id
}
