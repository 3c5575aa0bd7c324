package instrument

import (
	"sort"
	"strconv"
	"strings"
)

// The rewriter edits source text rather than reprinting an AST, like
// cmd/cover: everything it does not touch (comments, layout, line breaks)
// stays byte for byte, so the compiled code keeps the user's line numbers.
//
// Edits are insertions (text at an offset) and replacements (a range
// collapsed into new text). Every edit belongs to a syntax node and carries
// the node's span [lo, hi]: when a range is collapsed, exactly the edits of
// nodes inside it are rendered into the replacement. At one offset, the
// closing texts of nodes that end there come first (innermost first), then
// the opening texts of nodes that start there (outermost first), then a
// replacement starting there. Two wraps of the same node nest in the order
// they were added: the first is the outer one, except that a wrapInner is
// inside the others.

type editKind uint8

// The order of edits at one offset.
const (
	closing editKind = iota
	open
	replacement
)

type edit struct {
	pos, end int // end: replacements only
	kind     editKind
	text     string
	lo, hi   int // span of the node the edit belongs to
	seq      int
	inner    bool // wrapInner: innermost of the node's wraps
}

type editor struct {
	src   []byte
	edits []edit
	seq   int
}

// wrap surrounds the node spanning [lo, hi) with before and after.
func (e *editor) wrap(lo, hi int, before, after string) {
	if before != "" {
		e.add(edit{pos: lo, kind: open, text: before, lo: lo, hi: hi})
	}
	if after != "" {
		e.add(edit{pos: hi, kind: closing, text: after, lo: lo, hi: hi})
	}
}

// wrapOuter wraps [lo, hi) as a node that spans one byte more, so that it
// is outside every other wrap of [lo, hi), and stays when [lo, hi) is
// collapsed: a variadic call's written-out slice around its one argument,
// which may be a hooked call (rewriter.variadicSlice). hi must not be the
// end of the enclosing node.
func (e *editor) wrapOuter(lo, hi int, before, after string) {
	e.add(edit{pos: lo, kind: open, text: before, lo: lo, hi: hi + 1})
	e.add(edit{pos: hi, kind: closing, text: after, lo: lo, hi: hi + 1})
}

// wrapInner is wrap for a wrap that must be the node's innermost, whenever
// it is added: an allocation's (rt.New(new(T), s)), which must come before
// any hook that records an access to the new object (a std method's effect
// on its receiver, rt.W1(rt.New(new(big.Int), s), s2).SetInt64(1)).
func (e *editor) wrapInner(lo, hi int, before, after string) {
	e.add(edit{pos: lo, kind: open, text: before, lo: lo, hi: hi, inner: true})
	e.add(edit{pos: hi, kind: closing, text: after, lo: lo, hi: hi, inner: true})
}

// insertAt inserts text at pos on behalf of the node spanning [lo, hi)
// (an opening: it goes after the closings at pos).
func (e *editor) insertAt(pos int, text string, lo, hi int) {
	e.add(edit{pos: pos, kind: open, text: text, lo: lo, hi: hi})
}

// appendAt inserts text at pos as a closing of the node spanning [lo, hi).
func (e *editor) appendAt(pos int, text string, lo, hi int) {
	e.add(edit{pos: pos, kind: closing, text: text, lo: lo, hi: hi})
}

func (e *editor) add(x edit) {
	x.seq = e.seq
	e.seq++
	e.edits = append(e.edits, x)
}

// inside reports whether edit x belongs to a node within [lo, hi].
func inside(x *edit, lo, hi int) bool { return x.lo >= lo && x.hi <= hi }

// render returns src[lo:hi] with the edits of nodes inside [lo, hi]
// applied.
func (e *editor) render(lo, hi int) string {
	var sel []*edit
	for i := range e.edits {
		if inside(&e.edits[i], lo, hi) {
			sel = append(sel, &e.edits[i])
		}
	}
	sortEdits(sel)
	var b strings.Builder
	p := lo
	for _, x := range sel {
		if x.pos < p {
			continue // inside a replacement already emitted
		}
		b.Write(e.src[p:x.pos])
		p = x.pos
		b.WriteString(x.text)
		if x.kind == replacement {
			p = x.end
		}
	}
	if p < hi {
		b.Write(e.src[p:hi])
	}
	return b.String()
}

func sortEdits(sel []*edit) {
	sort.SliceStable(sel, func(i, j int) bool {
		a, b := sel[i], sel[j]
		if a.pos != b.pos {
			return a.pos < b.pos
		}
		if a.kind != b.kind {
			return a.kind < b.kind
		}
		if a.kind == closing {
			// Innermost first: the node that starts later or, starting
			// at one offset, ends sooner; of two wraps of one node the
			// one added last.
			if a.lo != b.lo {
				return a.lo > b.lo
			}
			if a.hi != b.hi {
				return a.hi < b.hi
			}
			if a.inner != b.inner {
				return a.inner
			}
			return a.seq > b.seq
		}
		// Outermost first: the node that ends later, or of two wraps of
		// one node the one added first.
		if a.hi != b.hi {
			return a.hi > b.hi
		}
		if a.inner != b.inner {
			return b.inner
		}
		return a.seq < b.seq
	})
}

// collapse replaces [lo, hi) by text; the edits of nodes inside it are
// dropped (the caller rendered what it needed of them into text).
func (e *editor) collapse(lo, hi int, text string) {
	e.collapseOwn(lo, hi, text, false)
}

// collapseChildren is collapse for a caller that rendered only the
// children of the node [lo, hi) into text: the node's own wraps stay
// around it (a fresh result's rt.New around a call that its BarrierPair
// rewrites to use temporaries, barrier.go's tempsCall).
func (e *editor) collapseChildren(lo, hi int, text string) {
	e.collapseOwn(lo, hi, text, true)
}

func (e *editor) collapseOwn(lo, hi int, text string, keepOwn bool) {
	kept := e.edits[:0]
	for _, x := range e.edits {
		own := keepOwn && x.lo == lo && x.hi == hi && x.kind != replacement && (x.pos == lo || x.pos == hi)
		if !inside(&x, lo, hi) || own {
			kept = append(kept, x)
		}
	}
	e.edits = kept
	e.add(edit{pos: lo, end: hi, kind: replacement, text: text, lo: lo, hi: hi})
}

// output renders the whole file.
func (e *editor) output() []byte { return []byte(e.render(0, len(e.src))) }

// gen builds the text of a replacement that moves pieces of source around,
// with /*line*/ comments so that each moved piece, and the source after the
// replacement, keep their positions in compiler messages, panics and debug
// information.
type gen struct {
	b    strings.Builder
	file string
	line int // the line the compiler will attribute to the next byte
	pos  func(off int) (line, col int)
}

func newGen(file string, pos func(int) (int, int), startOff int) *gen {
	l, _ := pos(startOff)
	return &gen{file: file, line: l, pos: pos}
}

// lit appends generated text (no newlines).
func (g *gen) lit(s string) { g.b.WriteString(s) }

// piece appends source text that starts at offset off.
func (g *gen) piece(off int, text string) {
	l, c := g.pos(off)
	if l != g.line {
		g.directive(l, c)
	}
	g.b.WriteString(text)
	if strings.Contains(text, "/*line ") {
		// A nested replacement placed its text itself; its lines need
		// not be the source's (a loop body's two copies), so the next
		// piece and the end say where they are.
		g.line = -1
	} else {
		g.line += strings.Count(text, "\n")
	}
}

// end restores the position of offset off (the end of the replaced range)
// for the text that follows the replacement.
func (g *gen) end(off int) string {
	l, c := g.pos(off)
	if l != g.line {
		g.directive(l, c)
	}
	return g.b.String()
}

// directive says where the next byte is. Column 0 is unknown: the source's
// own //line file:line (goyacc's output) gives no column, and the compiler
// refuses a column 0, so none is written.
func (g *gen) directive(l, c int) {
	g.b.WriteString("/*line " + g.file + ":" + strconv.Itoa(l))
	if c > 0 {
		g.b.WriteString(":" + strconv.Itoa(c))
	}
	g.b.WriteString("*/")
	g.line = l
}
