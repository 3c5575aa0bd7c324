package text

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/bits"
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

// decorClass classifies the bytes of a decor for fastLine: ')' ends it,
// '=' starts a value, '(' and '|' send the line to the general parser.
var decorClass = func() (t [256]uint8) {
	t[')'], t['='], t['('], t['|'] = decorClose, decorEq, decorBad, decorBad
	return t
}()

const (
	decorPlain uint8 = iota
	decorClose
	decorEq
	decorBad
)

// fastLine parses the common line, THREAD|OP(TOKEN[=VALUE])|LOC, without
// quotes or call and with nothing for the general parser to trim. It
// finds the fields' ends a word (8 bytes) at a time, and checks only the
// bytes that the general parser would treat differently from a token's:
// the ends of each token (whitespace, which it trims, and '"' or '#',
// which start a quoted token or a comment), the op's bytes, and those of
// the decor and the location. The words it loads are also the keys of the
// tokens (see key). It reports false, before resolving any token, for
// anything else, and parseLine then does the whole job (and reports
// errors): on the lines it accepts, the two give the same event
// (FuzzFastPath checks it).
func (r *reader) fastLine(b []byte, e *trace.Event) bool {
	n := lineLen(b)
	// Whitespace is trimmed, and anything up to ' ' sends the line to the
	// general parser: the line, and each token checked below, starts and
	// ends with a byte above ' '.
	if n == 0 || b[0] <= ' ' || b[0] == '#' || b[n-1] <= ' ' || (r.ext && b[0] == '"') {
		return false
	}
	b = b[:n]

	// THREAD: up to the first '|', most often within the first 8 bytes,
	// which are then its key.
	var tkey key
	x := load8(b, min(n, 8))
	p1 := firstByte(x, '|')
	if p1 < 8 {
		tkey = key{k0: x & lowBytes(p1), n: p1 + 1}
	} else if p1 = bytes.IndexByte(b, '|'); p1 > 0 {
		tkey = keyOf(b[:p1])
	}
	if p1 <= 0 || b[p1-1] <= ' ' {
		return false
	}

	// OP: r( and w( are most lines; others are lowercase letters.
	rest := b[p1+1:]
	var info *opInfo
	k := 1
	if len(rest) >= 2 && rest[1] == '(' && (rest[0] == 'r' || rest[0] == 'w') {
		info = &ops[0]
		if rest[0] == 'w' {
			info = &ops[1]
		}
	} else if info, k = r.fastOp(rest); info == nil {
		return false
	}
	rest = rest[k:]

	var (
		value  uint64
		objTok []byte
		okey   key
		child  []byte
	)
	flags := info.flags
	if len(rest) > 0 && rest[0] == '(' {
		// (DECOR): up to the first ')', which must be followed by '|' or
		// the end of the line. It holds no '(' or '|', and at most one
		// '=', for a value.
		d := rest[1:]
		j, eq, y := decorEnd(d)
		if j <= 0 || j >= len(d) || d[0] <= ' ' || d[j-1] <= ' ' || (r.ext && d[0] == '"') {
			return false
		}
		tok := d[:j]
		rest = d[j+1:]
		if eq >= 0 {
			// Only racekit text has values, and only r, w and atomics.
			v, ok := parseUint(d[eq+1 : j])
			if !r.ext || info.kind != kindValue || !ok || eq == 0 || d[eq-1] <= ' ' {
				return false
			}
			tok, value = d[:eq], v
		} else if info.kind == kindValue {
			flags |= trace.FlagValueUnknown
		}
		switch info.kind {
		case kindThread:
			child = tok
		case kindObj, kindValue:
			objTok = tok
			if len(tok) == j && j < 8 {
				okey = key{k0: y, n: j + 1}
			} else {
				okey = keyOf(tok)
			}
		default:
			return false
		}
	} else if info.kind != kindNone {
		return false
	}

	// |LOC, or (racekit text) nothing.
	loc, lkey, ok := r.fastLoc(rest)
	if !ok {
		return false
	}

	// The line is well formed: resolve its tokens.
	var obj uint64
	if objTok != nil {
		obj = r.objectKey(objTok, okey, false)
	}
	site := trace.NoSite
	if len(loc) > 0 {
		site = r.siteKey(loc, lkey)
	}
	if info.kind == kindThread {
		r.addrs = r.addrs[:0]
		return r.finish(e, info, flags, b[:p1], child, obj, value, site) == nil
	}
	g, err := r.threadKey(b[:p1], tkey, trace.NoParent, trace.NoSite)
	if err != nil {
		return false
	}
	e.Seq, e.G, e.Op, e.Flags, e.Site, e.Obj, e.Value = r.seq, g, info.op, flags, site, obj, value
	if e.Addrs != nil {
		e.Addrs = nil
	}
	return true
}

// fastOp looks up, for fastLine, the op whose mnemonic (lowercase
// letters) starts rest; it returns nil for anything but an op of the
// format, and the mnemonic's length.
func (r *reader) fastOp(rest []byte) (*opInfo, int) {
	k := 0
	for k < len(rest) && k < 7 && 'a' <= rest[k] && rest[k] <= 'z' {
		k++
	}
	info := lookupOp(rest[:k])
	if info == nil || (!info.std && !r.ext) {
		return nil, 0
	}
	return info, k
}

// lineLen is the length of line b without its '\n' or "\r\n".
func lineLen(b []byte) int {
	n := len(b)
	if n > 0 && b[n-1] == '\n' {
		n--
		if n > 0 && b[n-1] == '\r' {
			n--
		}
	}
	return n
}

// decorEnd finds, for fastLine, the ')' that ends decor d (len(d) if there
// is none) and the '=' before it (-1 if none): a word at a time when the
// ')' is among the first 8 bytes (y then holds the bytes before it, the
// key of a short token), else a byte at a time. It returns j -1 for a
// decor left to the general parser: with '(', '|' or a second '='.
func decorEnd(d []byte) (j, eq int, y uint64) {
	eq = -1
	y = load8(d, min(len(d), 8))
	if j = firstByte(y, ')'); j < 8 {
		y &= lowBytes(j)
		if hasByte(y, '(') || hasByte(y, '|') {
			return -1, eq, y
		}
		if eq = firstByte(y, '='); eq == 8 {
			eq = -1
		} else if hasByte(y&^lowBytes(eq+1), '=') {
			return -1, eq, y
		}
		return j, eq, y
	}
	for j = 0; j < len(d); j++ {
		c := decorClass[d[j]]
		if c == decorClose {
			break
		}
		if c == decorBad || c == decorEq && eq >= 0 {
			return -1, eq, y
		}
		if c == decorEq {
			eq = j
		}
	}
	return j, eq, y
}

// fastLoc reads, for fastLine, the |LOC that ends a line, rest being
// what follows the decor, and returns the location with its key (empty
// if there is none: racekit text); false for anything the general parser
// must read.
func (r *reader) fastLoc(rest []byte) (loc []byte, lkey key, ok bool) {
	if len(rest) == 0 {
		return nil, key{}, r.ext
	}
	if rest[0] != '|' {
		return nil, key{}, false
	}
	loc = rest[1:]
	if len(loc) > 0 {
		if loc[0] <= ' ' || (r.ext && loc[0] == '"') {
			return nil, key{}, false
		}
		// The key of a short location is all of it: look for '|' there.
		lkey = keyOf(loc)
		if lkey.whole() && lkey.hasByte('|') || !lkey.whole() && bytes.IndexByte(loc, '|') >= 0 {
			return nil, key{}, false
		}
	}
	return loc, lkey, true
}

// lowBytes is a mask of the low n bytes of a word (n < 8).
func lowBytes(n int) uint64 { return 1<<(8*uint(n&7)) - 1 }

// firstByte returns the index of the first byte c in x's 8 bytes, or 8.
func firstByte(x uint64, c byte) int {
	const lo7 = 0x7f7f7f7f7f7f7f7f
	v := x ^ 0x0101010101010101*uint64(c)
	// Exactly the zero bytes of v get their high bit set.
	z := ^((v&lo7 + lo7) | v | lo7)
	return bits.TrailingZeros64(z) >> 3
}

// hasByte reports whether x holds byte c (c is not 0).
func hasByte(x uint64, c byte) bool {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	v := x ^ lo*uint64(c)
	// (v - lo) & ^v & hi is nonzero if and only if v has a zero byte.
	return (v-lo)&^v&hi != 0
}

// parseLine parses one line into e; it reports whether the line was an
// event (rather than blank, a comment or a directive).
func (r *reader) parseLine(b []byte, e *trace.Event) (bool, error) {
	if !r.slowOnly && r.fastLine(b, e) {
		return true, nil
	}
	b = trimSpace(b)
	if len(b) == 0 {
		return false, nil
	}
	if b[0] == '#' {
		if len(b) > 1 && b[1] == '!' {
			return false, r.directive(b)
		}
		return false, nil
	}
	line := b

	// THREAD
	thr, b, err := r.lineThread(b, line)
	if err != nil {
		return false, err
	}

	// OP
	info, name, b, err := r.lineOp(b, line)
	if err != nil {
		return false, err
	}

	// (DECOR)
	// Tokens are resolved only once the whole line is known to be well
	// formed, so that a malformed line (and a cut-off last line, which is
	// skipped) leaves no trace in the tables.
	var d decorFields
	if d, b, err = r.lineDecor(b, info, name, line); err != nil {
		return false, err
	}

	// |LOC
	loc, err := r.lineLoc(b, line)
	if err != nil {
		return false, err
	}

	// The line is well formed: resolve its tokens.
	var obj uint64
	if d.obj.b != nil {
		obj = r.object(d.obj.b, d.obj.quoted)
	}
	r.addrs = r.addrs[:0]
	for _, a := range r.addrToks {
		r.addrs = append(r.addrs, r.object(a.b, a.quoted))
	}
	site := r.site(loc)
	return true, r.finish(e, info, d.flags, thr, d.child, obj, d.value, site)
}

// lineThread reads the THREAD of line, which b (the trimmed line) starts
// with, and returns it with the rest of b after its '|'.
func (r *reader) lineThread(b, line []byte) (thr, rest []byte, err error) {
	if r.ext && b[0] == '"' {
		tok, n, err := r.quoted(b)
		if err != nil {
			return nil, nil, err
		}
		thr, b = tok, trimLeft(b[n:])
		if len(b) == 0 || b[0] != '|' {
			return nil, nil, r.shapeErr(line)
		}
		b = b[1:]
	} else {
		i := bytes.IndexByte(b, '|')
		if i < 0 {
			return nil, nil, r.shapeErr(line)
		}
		thr, b = trimRight(b[:i]), b[i+1:]
	}
	if len(thr) == 0 {
		return nil, nil, r.shapeErr(line)
	}
	return thr, b, nil
}

// lineOp reads the OP of line at the start of b (after THREAD's '|') and
// returns its meaning and its mnemonic, with the rest of b after it, its
// leading blanks trimmed.
func (r *reader) lineOp(b, line []byte) (info *opInfo, name, rest []byte, err error) {
	b = trimLeft(b)
	j := 0
	for j < len(b) && !stopOp[b[j]] {
		j++
	}
	info = lookupOp(b[:j])
	if info == nil {
		if j == 0 {
			return nil, nil, nil, r.shapeErr(line)
		}
		if r.ext {
			return nil, nil, nil, r.errorf("unknown op %q; expected one of %s", b[:j], textOps)
		}
		return nil, nil, nil, r.errorf("unknown op %q; expected one of %s", b[:j], stdOps)
	}
	if !info.std && !r.ext {
		return nil, nil, nil, r.errorf("op '%s' is not STD; read this file as racekit text (.rktx)", b[:j])
	}
	return info, b[:j], trimLeft(b[j:]), nil
}

// decorFields is what the (DECOR) of a line holds, its tokens not resolved yet
// (those of a call's addresses are in r.addrToks), and the event's flags.
type decorFields struct {
	obj   token
	value uint64
	child []byte // a fork's or join's thread
	flags trace.Flags
}

// lineDecor reads the (DECOR) of line, for the op of info named name, at
// the start of b, and returns it with the rest of b after it, its leading
// blanks trimmed. Only an op without operands may go without one.
func (r *reader) lineDecor(b []byte, info *opInfo, name, line []byte) (decorFields, []byte, error) {
	d := decorFields{flags: info.flags}
	var err error
	r.addrToks = r.addrToks[:0]
	hasDecor := len(b) > 0 && b[0] == '('
	if !hasDecor && info.kind != kindNone {
		return d, nil, r.decorErr(info, name, line)
	}
	if !hasDecor {
		return d, b, nil
	}
	b = b[1:]
	switch info.kind {
	case kindNone:
		// RAPID reads begin(...) and end(...) too; the decor means nothing.
		i := bytes.IndexByte(b, ')')
		if i < 0 {
			return d, nil, r.shapeErr(line)
		}
		b = b[i:]
	case kindThread:
		var q bool
		d.child, b, q, err = r.decorToken(b, stopDecor)
		if err != nil {
			return d, nil, err
		}
		if len(d.child) == 0 && !q {
			return d, nil, r.decorErr(info, name, line)
		}
		if len(d.child) == 0 {
			return d, nil, r.errorf("empty thread name in %s", quoteLine(line))
		}
	case kindObj:
		b, err = r.objDecor(b, &d, info, name, line)
	case kindValue:
		b, err = r.valueDecor(b, &d, info, name, line)
	case kindCall:
		b, err = r.callDecor(b, &d, info, name, line)
	}
	if err != nil {
		return d, nil, err
	}
	if len(b) == 0 || b[0] != ')' {
		return d, nil, r.shapeErr(line)
	}
	return d, trimLeft(b[1:]), nil
}

// objDecor reads into d the OBJ of an OP(OBJ) decor from b, and (snd and
// rcv) a channel event's =MSG, and returns the rest of b.
func (r *reader) objDecor(b []byte, d *decorFields, info *opInfo, name, line []byte) ([]byte, error) {
	stop := stopDecor
	msg := info.op == trace.OpSyncRelease || info.op == trace.OpSyncAcquire
	if msg {
		stop = stopValue // snd(OBJ=MSG): a channel event's message
	}
	var err error
	d.obj, b, err = r.objectToken(b, stop, info, name, line)
	if err != nil {
		return nil, err
	}
	if msg && len(b) > 0 && b[0] == '=' {
		i := bytes.IndexByte(b, ')')
		if i < 0 {
			return nil, r.shapeErr(line)
		}
		m, perr := trace.ParseChanMsg(string(trimSpace(b[1:i])), info.op)
		if perr != nil {
			return nil, r.errorf("%v in %s", perr, quoteLine(line))
		}
		d.value, d.flags, b = uint64(m), d.flags|trace.FlagMessage, b[i:]
	}
	return b, nil
}

// valueDecor reads into d the OBJ[=VALUE] of a decor from b (a value only
// in racekit text; without one, the value is unknown), and returns the
// rest of b.
func (r *reader) valueDecor(b []byte, d *decorFields, info *opInfo, name, line []byte) ([]byte, error) {
	var err error
	d.obj, b, err = r.objectToken(b, stopValue, info, name, line)
	if err != nil {
		return nil, err
	}
	if len(b) > 0 && b[0] == '=' {
		if !r.ext {
			return nil, r.errorf("value in %s is not STD; read this file as racekit text (.rktx)", quoteLine(line))
		}
		i := bytes.IndexByte(b, ')')
		if i < 0 {
			return nil, r.shapeErr(line)
		}
		v, ok := parseUint(trimSpace(b[1:i]))
		if !ok {
			return nil, r.errorf("bad value %q in %s: expected a decimal or 0x-hex number below 2^64", trimSpace(b[1:i]), quoteLine(line))
		}
		d.value, b = v, b[i:]
	} else {
		d.flags |= trace.FlagValueUnknown
	}
	return b, nil
}

// callDecor reads into d the METHOD[;ADDR,...] of a call's decor from b,
// the addresses into r.addrToks, and returns the rest of b.
func (r *reader) callDecor(b []byte, d *decorFields, info *opInfo, name, line []byte) ([]byte, error) {
	var err error
	d.obj, b, err = r.objectToken(b, stopMethod, info, name, line)
	if err != nil {
		return nil, err
	}
	if len(b) > 0 && b[0] == ';' {
		b = trimLeft(b[1:])
		for len(b) > 0 && b[0] != ')' {
			var a token
			a, b, err = r.objectToken(b, stopAddr, info, name, line)
			if err != nil {
				return nil, err
			}
			r.addrToks = append(r.addrToks, a)
			if len(b) == 0 || b[0] != ',' {
				break
			}
			b = b[1:]
			if c := trimLeft(b); len(c) == 0 || c[0] == ')' {
				return nil, r.decorErr(info, name, line) // trailing comma
			}
		}
	}
	return b, nil
}

// lineLoc reads the |LOC of line from b, the rest of the line after its
// decor, and returns the location label: empty if there is none, which
// only racekit text allows.
func (r *reader) lineLoc(b, line []byte) ([]byte, error) {
	var loc []byte
	switch {
	case len(b) == 0:
		if !r.ext {
			return nil, r.errorf("expected THREAD|OP(DECOR)|LOC, got %s; STD requires a location (racekit text (.rktx) does not)", quoteLine(line))
		}
	case b[0] != '|':
		return nil, r.shapeErr(line)
	default:
		loc = trimLeft(b[1:])
		if r.ext && len(loc) > 0 && loc[0] == '"' {
			tok, n, err := r.quoted(loc)
			if err != nil {
				return nil, err
			}
			if len(trimLeft(loc[n:])) != 0 {
				return nil, r.shapeErr(line)
			}
			loc = tok
		} else if bytes.IndexByte(loc, '|') >= 0 {
			return nil, r.shapeErr(line)
		}
	}
	return loc, nil
}

// finish resolves the thread (and a fork's or join's child) of a parsed
// line and fills e.
func (r *reader) finish(e *trace.Event, info *opInfo, flags trace.Flags, thr, child []byte, obj, value uint64, site trace.SiteID) error {
	g, err := r.thread(thr, trace.NoParent, trace.NoSite)
	if err != nil {
		return err
	}
	if info.kind == kindThread {
		parent, csite := trace.NoParent, trace.NoSite
		if info.op == trace.OpFork {
			parent, csite = g, site
		}
		c, err := r.thread(child, parent, csite)
		if err != nil {
			return err
		}
		obj = uint64(c)
	}

	// Field by field: cheaper than a composite literal, and Addrs (a
	// pointer, with a write barrier) is written only when it changes.
	e.Seq, e.G, e.Op, e.Flags, e.Site, e.Obj, e.Value = r.seq, g, info.op, flags, site, obj, value
	if len(r.addrs) > 0 {
		e.Addrs = r.addrs
	} else if e.Addrs != nil {
		e.Addrs = nil
	}
	return nil
}

// decorErr reports a decor that is missing or empty.
func (r *reader) decorErr(info *opInfo, name, line []byte) error {
	return r.errorf("expected %s(%s), got %s", name, info.decor, quoteLine(line))
}

// decorToken reads a token of a decor from b, which starts after '(' or a
// separator, and returns it with the rest of b from the byte that ended it.
func (r *reader) decorToken(b []byte, stop *[256]bool) (tok, rest []byte, quoted bool, err error) {
	b = trimLeft(b)
	if r.ext && len(b) > 0 && b[0] == '"' {
		tok, n, err := r.quoted(b)
		if err != nil {
			return nil, nil, true, err
		}
		return tok, trimLeft(b[n:]), true, nil
	}
	i := 0
	for i < len(b) && !stop[b[i]] {
		i++
	}
	return trimRight(b[:i]), b[i:], false, nil
}

// objectToken reads an object token of a decor; it is not empty.
func (r *reader) objectToken(b []byte, stop *[256]bool, info *opInfo, name, line []byte) (token, []byte, error) {
	tok, rest, q, err := r.decorToken(b, stop)
	if err != nil {
		return token{}, nil, err
	}
	if len(tok) == 0 {
		if q {
			return token{}, nil, r.errorf("empty name in %s", quoteLine(line))
		}
		return token{}, nil, r.decorErr(info, name, line)
	}
	return token{tok, q}, rest, nil
}

// quoted reads the Go quoted string at the start of b and returns its
// value and length. Without escapes the value aliases b.
func (r *reader) quoted(b []byte) ([]byte, int, error) {
	esc := false
	for i := 1; i < len(b); i++ {
		switch b[i] {
		case '\\':
			esc = true
			i++
		case '"':
			if !esc {
				return b[1:i], i + 1, nil
			}
			s, err := strconv.Unquote(string(b[:i+1]))
			if err != nil {
				return nil, 0, r.errorf("bad quoted string %s: %v", quoteLine(b[:i+1]), err)
			}
			return []byte(s), i + 1, nil
		}
	}
	return nil, 0, r.errorf("unterminated quoted string %s", quoteLine(b))
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
