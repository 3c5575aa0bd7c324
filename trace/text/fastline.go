package text

// The fast path: the common event line parsed a word (8 bytes) at a time.

import (
	"bytes"
	"math/bits"

	"github.com/racekit/racekit/trace"
)

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
