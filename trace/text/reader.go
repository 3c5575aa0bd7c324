package text

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/racekit/racekit/trace"
)

const (
	// readBufferSize is the bufio buffer; lines longer than it are
	// assembled in reader.long.
	readBufferSize = 256 << 10
	// maxLineLength bounds one line, so that a binary file read as text
	// fails with an error instead of exhausting memory.
	maxLineLength = 16 << 20
	// maxGIDGap bounds how far an explicit goroutine ID (#!g id=) may lie
	// beyond the goroutine table, which Meta stores densely.
	maxGIDGap = 1 << 16
)

// STDReader reads RAPID's STD format. It implements trace.Reader.
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

// TextReader reads racekit's text format (.rktx). It implements
// trace.Reader.
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

// Parse reads a whole racekit text trace from src, for tests and examples.
// name is used in errors.
func Parse(name, src string) (*trace.Trace, error) {
	r := NewTextReader(strings.NewReader(src), name)
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
	br      *bufio.Reader
	name    string
	ext     bool
	meta    *trace.Meta
	err     error  // sticky: io.EOF or the first error
	long    []byte // a line longer than the bufio buffer
	line    int    // 1-based number of the current line
	off     int64  // byte offset of the next line
	lineOff int64  // byte offset of the current line
	seq     uint64 // Seq of the next event

	threads    tokenTable[threadRef]
	nextG      trace.GID
	lastThread threadRef // the previous line's thread: most lines repeat it

	objs    tokenTable[uint64]  // name token -> object ID
	taken   map[uint64]struct{} // racekit text: every object ID in use
	nextObj uint64

	labels tokenTable[trace.SiteID] // location label -> site

	addrs []uint64 // Addrs of the current call event

	slowOnly bool // tests: parse every line with the general parser
}

type threadRef struct {
	tok string
	g   trace.GID
}

func newReader(rd io.Reader, name string, ext bool) reader {
	return reader{
		br:      bufio.NewReaderSize(rd, readBufferSize),
		name:    name,
		ext:     ext,
		meta:    trace.NewMeta(),
		threads: newTokenTable[threadRef](),
		objs:    newTokenTable[uint64](),
		taken:   make(map[uint64]struct{}),
		nextObj: firstObjID,
		labels:  newTokenTable[trace.SiteID](),
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
			ok, err := r.parseLine(b, e)
			if err != nil {
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

// readLine returns the next line, with its '\n' if it has one. The slice
// is valid until the next call.
func (r *reader) readLine() ([]byte, error) {
	r.long = r.long[:0]
	for {
		b, err := r.br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			if len(r.long)+len(b) > maxLineLength {
				return nil, errLineTooLong
			}
			r.long = append(r.long, b...)
			continue
		}
		if len(r.long) > 0 {
			r.long = append(r.long, b...)
			b = r.long
		}
		return b, err
	}
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
	default:
		return nil
	}
	return &ops[i]
}

const (
	stdOps  = "r, w, acq, rel, fork, join, begin, end"
	textOps = stdOps + ", racq, rrel, snd, rcv, aload, astore, armw, call, ret, enter, exit, rbegin, rend"
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

// Byte classes of fastLine: structure bytes, and bytes that send a line
// to the general parser (whitespace, quotes, call separators).
const (
	classPlain uint8 = iota
	classPipe
	classOpen
	classClose
	classEq
	classOther
)

var lineClass = func() (t [256]uint8) {
	for _, c := range []byte(" \t\r\n\v\f\";,") {
		t[c] = classOther
	}
	t['|'], t['('], t[')'], t['='] = classPipe, classOpen, classClose, classEq
	return t
}()

// fastLine parses the common line, THREAD|OP(TOKEN[=VALUE])|LOC with no
// whitespace, quotes or call, in one pass over its bytes. It reports
// false, before resolving any token, for anything else, and parseLine
// then does the whole job (and reports errors): on the lines it accepts,
// the two give the same event.
func (r *reader) fastLine(b []byte, e *trace.Event) bool {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
		if n > 1 && b[n-2] == '\r' {
			b = b[:n-2]
		}
	}
	if len(b) == 0 || b[0] == '#' {
		return false
	}
	p1, p2, po, pc, pe := -1, -1, -1, -1, -1
	for i, c := range b {
		switch lineClass[c] {
		case classPlain:
		case classPipe:
			if p1 < 0 {
				p1 = i
			} else if p2 < 0 {
				p2 = i
			} else {
				return false
			}
		case classOpen:
			if po >= 0 {
				return false
			}
			po = i
		case classClose:
			if pc >= 0 {
				return false
			}
			pc = i
		case classEq:
			if pe >= 0 {
				return false
			}
			pe = i
		default:
			return false
		}
	}
	if p1 <= 0 {
		return false
	}
	end := len(b) // of the op field
	if p2 >= 0 {
		end = p2
	} else if !r.ext {
		return false
	}
	var name, decor []byte
	if po >= 0 {
		if po < p1 || pc != end-1 || pc < po {
			return false
		}
		name, decor = b[p1+1:po], b[po+1:pc]
	} else {
		if pc >= 0 {
			return false
		}
		name = b[p1+1 : end]
	}
	if pe >= 0 && (pe < po || pe > pc) {
		return false
	}
	info := lookupOp(name)
	if info == nil || (!info.std && !r.ext) {
		return false
	}
	var (
		obj, value uint64
		child      []byte
	)
	flags := info.flags
	switch info.kind {
	case kindNone:
		if po >= 0 {
			return false
		}
	case kindThread, kindObj:
		if po < 0 || len(decor) == 0 || pe >= 0 {
			return false
		}
		if info.kind == kindThread {
			child = decor
		} else {
			obj = r.object(decor, false)
		}
	case kindValue:
		if po < 0 {
			return false
		}
		if pe >= 0 {
			v, ok := parseUint(b[pe+1 : pc])
			if !r.ext || !ok || pe == po+1 {
				return false
			}
			decor, value = b[po+1:pe], v
		} else {
			flags |= trace.FlagValueUnknown
		}
		if len(decor) == 0 {
			return false
		}
		obj = r.object(decor, false)
	default:
		return false
	}
	site := trace.NoSite
	if p2 >= 0 {
		site = r.site(b[p2+1:])
	}
	r.addrs = r.addrs[:0]
	return r.finish(e, info, flags, b[:p1], child, obj, value, site) == nil
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
	var thr []byte
	if r.ext && b[0] == '"' {
		tok, n, err := r.quoted(b)
		if err != nil {
			return false, err
		}
		thr, b = tok, trimLeft(b[n:])
		if len(b) == 0 || b[0] != '|' {
			return false, r.shapeErr(line)
		}
		b = b[1:]
	} else {
		i := bytes.IndexByte(b, '|')
		if i < 0 {
			return false, r.shapeErr(line)
		}
		thr, b = trimRight(b[:i]), b[i+1:]
	}
	if len(thr) == 0 {
		return false, r.shapeErr(line)
	}

	// OP
	b = trimLeft(b)
	j := 0
	for j < len(b) && !stopOp[b[j]] {
		j++
	}
	info := lookupOp(b[:j])
	if info == nil {
		if j == 0 {
			return false, r.shapeErr(line)
		}
		if r.ext {
			return false, r.errorf("unknown op %q; expected one of %s", b[:j], textOps)
		}
		return false, r.errorf("unknown op %q; expected one of %s", b[:j], stdOps)
	}
	if !info.std && !r.ext {
		return false, r.errorf("op '%s' is not STD; read this file as racekit text (.rktx)", b[:j])
	}
	name := b[:j]
	b = trimLeft(b[j:])

	// (DECOR)
	var (
		obj   uint64
		value uint64
		child []byte
		err   error
	)
	flags := info.flags
	r.addrs = r.addrs[:0]
	hasDecor := len(b) > 0 && b[0] == '('
	if !hasDecor && info.kind != kindNone {
		return false, r.decorErr(info, name, line)
	}
	if hasDecor {
		b = b[1:]
		switch info.kind {
		case kindNone:
			// RAPID reads begin(...) and end(...) too; the decor means nothing.
			i := bytes.IndexByte(b, ')')
			if i < 0 {
				return false, r.shapeErr(line)
			}
			b = b[i:]
		case kindThread:
			var q bool
			child, b, q, err = r.decorToken(b, stopDecor)
			if err != nil {
				return false, err
			}
			if len(child) == 0 && !q {
				return false, r.decorErr(info, name, line)
			}
			if len(child) == 0 {
				return false, r.errorf("empty thread name in %s", quoteLine(line))
			}
		case kindObj:
			obj, b, err = r.objectToken(b, stopDecor, info, name, line)
			if err != nil {
				return false, err
			}
		case kindValue:
			obj, b, err = r.objectToken(b, stopValue, info, name, line)
			if err != nil {
				return false, err
			}
			if len(b) > 0 && b[0] == '=' {
				if !r.ext {
					return false, r.errorf("value in %s is not STD; read this file as racekit text (.rktx)", quoteLine(line))
				}
				i := bytes.IndexByte(b, ')')
				if i < 0 {
					return false, r.shapeErr(line)
				}
				v, ok := parseUint(trimSpace(b[1:i]))
				if !ok {
					return false, r.errorf("bad value %q in %s: expected a decimal or 0x-hex number below 2^64", trimSpace(b[1:i]), quoteLine(line))
				}
				value, b = v, b[i:]
			} else {
				flags |= trace.FlagValueUnknown
			}
		case kindCall:
			obj, b, err = r.objectToken(b, stopMethod, info, name, line)
			if err != nil {
				return false, err
			}
			if len(b) > 0 && b[0] == ';' {
				b = trimLeft(b[1:])
				for len(b) > 0 && b[0] != ')' {
					var a uint64
					a, b, err = r.objectToken(b, stopAddr, info, name, line)
					if err != nil {
						return false, err
					}
					r.addrs = append(r.addrs, a)
					if len(b) == 0 || b[0] != ',' {
						break
					}
					b = b[1:]
					if c := trimLeft(b); len(c) == 0 || c[0] == ')' {
						return false, r.decorErr(info, name, line) // trailing comma
					}
				}
			}
		}
		if len(b) == 0 || b[0] != ')' {
			return false, r.shapeErr(line)
		}
		b = trimLeft(b[1:])
	}

	// |LOC
	site := trace.NoSite
	switch {
	case len(b) == 0:
		if !r.ext {
			return false, r.errorf("expected THREAD|OP(DECOR)|LOC, got %s; STD requires a location (racekit text (.rktx) does not)", quoteLine(line))
		}
	case b[0] != '|':
		return false, r.shapeErr(line)
	default:
		loc := trimLeft(b[1:])
		if r.ext && len(loc) > 0 && loc[0] == '"' {
			tok, n, err := r.quoted(loc)
			if err != nil {
				return false, err
			}
			if len(trimLeft(loc[n:])) != 0 {
				return false, r.shapeErr(line)
			}
			loc = tok
		} else if bytes.IndexByte(loc, '|') >= 0 {
			return false, r.shapeErr(line)
		}
		site = r.site(loc)
	}

	return true, r.finish(e, info, flags, thr, child, obj, value, site)
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

// objectToken reads an object token of a decor and resolves it.
func (r *reader) objectToken(b []byte, stop *[256]bool, info *opInfo, name, line []byte) (uint64, []byte, error) {
	tok, rest, q, err := r.decorToken(b, stop)
	if err != nil {
		return 0, nil, err
	}
	if len(tok) == 0 {
		if q {
			return 0, nil, r.errorf("empty name in %s", quoteLine(line))
		}
		return 0, nil, r.decorErr(info, name, line)
	}
	return r.object(tok, q), rest, nil
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
	if r.ext && !quoted {
		if id, ok := hexLiteral(tok); ok {
			if _, seen := r.taken[id]; !seen {
				r.taken[id] = struct{}{}
			}
			return id
		}
	}
	if id, ok := r.objs.get(tok); ok {
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
	if string(tok) == r.lastThread.tok {
		return r.lastThread.g, nil
	}
	t, ok := r.threads.get(tok)
	if !ok {
		g, err := r.newGID()
		if err != nil {
			return 0, err
		}
		t = threadRef{tok: string(tok), g: g}
		if err := r.meta.DefineGoroutine(trace.Goroutine{ID: g, Parent: parent, Site: site, Name: t.tok}); err != nil {
			return 0, r.errorf("%v", err)
		}
		r.threads.put(t.tok, t)
	}
	r.lastThread = t
	return t.g, nil
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
	if id, ok := r.labels.get(label); ok {
		return id
	}
	l := string(label)
	id := r.meta.InternSite(trace.ParseSiteLabel(l))
	r.labels.put(l, id)
	return id
}
