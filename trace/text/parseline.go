package text

// The general parser of one line: every op, decor, quoting and comment,
// and the errors that name the file and position.

import (
	"bytes"
	"strconv"

	"github.com/racekit/racekit/trace"
)

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
