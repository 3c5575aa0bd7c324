package text

import (
	"strconv"
	"strings"

	"github.com/racekit/racekit/trace"
)

// dirArg is one argument of a directive: positional (key == "") or
// key=value.
type dirArg struct {
	key    string
	val    []byte
	quoted bool
}

// directive executes a "#!" line.
func (r *reader) directive(b []byte) error {
	i := 2
	for i < len(b) && !isSpace(b[i]) {
		i++
	}
	name := string(b[2:i])
	if !r.ext {
		return r.errorf("directive #!%s is not STD; read this file as racekit text (.rktx)", name)
	}
	args, err := r.dirArgs(b[i:])
	if err != nil {
		return err
	}
	switch name {
	case "site":
		return r.siteDirective(args)
	case "addr":
		return r.addrDirective(args)
	case "g":
		return r.goroutineDirective(args)
	case "seq":
		return r.seqDirective(args)
	}
	return r.errorf("unknown directive #!%s; expected #!site, #!addr, #!g or #!seq", name)
}

// dirArgs splits directive arguments at whitespace. An argument is a bare
// word, a quoted string, KEY=word or KEY="quoted string"; a bare word
// starting with '#' starts a comment, which ends the arguments.
func (r *reader) dirArgs(b []byte) ([]dirArg, error) {
	var args []dirArg
	for {
		b = trimLeft(b)
		if len(b) == 0 || b[0] == '#' {
			return args, nil
		}
		var a dirArg
		if b[0] == '"' {
			v, n, err := r.quoted(b)
			if err != nil {
				return nil, err
			}
			a.val, a.quoted, b = v, true, b[n:]
		} else {
			i := 0
			for i < len(b) && !isSpace(b[i]) && b[i] != '=' {
				i++
			}
			if i < len(b) && b[i] == '=' {
				a.key, b = string(b[:i]), b[i+1:]
				if len(b) > 0 && b[0] == '"' {
					v, n, err := r.quoted(b)
					if err != nil {
						return nil, err
					}
					a.val, a.quoted, b = v, true, b[n:]
				} else {
					i = 0
					for i < len(b) && !isSpace(b[i]) {
						i++
					}
					a.val, b = b[:i], b[i:]
				}
			} else {
				a.val, b = b[:i], b[i:]
			}
		}
		if len(b) > 0 && !isSpace(b[0]) {
			return nil, r.errorf("directive arguments must be separated by spaces, got %s", quoteLine(b))
		}
		args = append(args, a)
	}
}

// splitArgs separates positional arguments from keyed ones and checks both
// against what a directive accepts.
func (r *reader) splitArgs(dir string, args []dirArg, minPos, maxPos int, usage string, keys ...string) ([]dirArg, map[string][]byte, error) {
	var pos []dirArg
	kv := map[string][]byte{}
	for _, a := range args {
		if a.key == "" {
			pos = append(pos, a)
			continue
		}
		known := false
		for _, k := range keys {
			known = known || k == a.key
		}
		if !known {
			return nil, nil, r.errorf("unknown key %q in #!%s; usage: %s", a.key, dir, usage)
		}
		if _, dup := kv[a.key]; dup {
			return nil, nil, r.errorf("key %q given twice in #!%s", a.key, dir)
		}
		kv[a.key] = a.val
	}
	if len(pos) < minPos || len(pos) > maxPos {
		return nil, nil, r.errorf("usage: %s", usage)
	}
	return pos, kv, nil
}

const (
	siteUsage = "#!site LABEL [POS [FUNC]] [file=FILE] [line=N] [col=N] [func=FUNC] [callee=FUNC [callee-file=FILE] [callee-line=N]] [call-end=LINE:COL [call=FUNC]] [wide=1] [inline=1]"
	addrUsage = "#!addr TOKEN ID [NAME]"
	gUsage    = "#!g THREAD [id=N] [parent=N] [site=LABEL] [name=NAME]"
	seqUsage  = "#!seq N"
)

// siteDirective: #!site LABEL [POS [FUNC]] [file=] [line=] [col=] [func=]
// [callee= [callee-file=] [callee-line=]] defines a new site (the next site
// ID) and binds location label LABEL to it. The position is POS (or LABEL
// itself) parsed like any location; keys override its parts. callee names
// the site's trace.Site.Callee; call-end and call give its trace.Site.Call,
// wide=1 its trace.Site.Wide, inline=1 its trace.Site.Inline.
func (r *reader) siteDirective(args []dirArg) error {
	pos, kv, err := r.splitArgs("site", args, 1, 3, siteUsage, "file", "line", "col", "func", "callee", "callee-file", "callee-line", "call-end", "call", "wide", "inline")
	if err != nil {
		return err
	}
	label := string(pos[0].val)
	if label == "" {
		return r.errorf("empty location label in #!site")
	}
	if _, used := r.labels.get(pos[0].val); used {
		return r.errorf("location label %q is already in use; put #!site before its first use", label)
	}
	pl := label
	if len(pos) > 1 {
		pl = string(pos[1].val)
	}
	s := trace.ParseSiteLabel(pl)
	if len(pos) > 2 {
		s.Func = string(pos[2].val)
	}
	if v, ok := kv["file"]; ok {
		s.File = string(v)
	}
	for _, k := range [...]string{"line", "col", "callee-line"} {
		v, ok := kv[k]
		if !ok {
			continue
		}
		n, err := strconv.Atoi(string(v))
		if err != nil {
			return r.errorf("bad %s=%q in #!site: expected an integer", k, v)
		}
		switch k {
		case "line":
			s.Line = n
		case "col":
			s.Col = n
		default:
			s.Callee.Line = n
		}
	}
	s.Callee.Func, s.Callee.File = string(kv["callee"]), string(kv["callee-file"])
	if s.Callee.Func == "" && (s.Callee.File != "" || s.Callee.Line != 0) {
		return r.errorf("callee-file or callee-line without callee in #!site; usage: %s", siteUsage)
	}
	if v, ok := kv["call-end"]; ok {
		l, c, found := strings.Cut(string(v), ":")
		line, err1 := strconv.Atoi(l)
		col, err2 := strconv.Atoi(c)
		if !found || err1 != nil || err2 != nil || line <= 0 || col < 0 {
			return r.errorf("bad call-end=%q in #!site: expected LINE:COL", v)
		}
		s.Call = trace.Call{Func: string(kv["call"]), EndLine: line, EndCol: col}
	} else if _, ok := kv["call"]; ok {
		return r.errorf("call without call-end in #!site; usage: %s", siteUsage)
	}
	for _, m := range [...]struct {
		key string
		set *bool
	}{{"wide", &s.Wide}, {"inline", &s.Inline}} {
		if v, ok := kv[m.key]; ok {
			if string(v) != "1" {
				return r.errorf("bad %s=%q in #!site: expected 1", m.key, v)
			}
			*m.set = true
		}
	}
	if v, ok := kv["func"]; ok {
		if len(pos) > 2 {
			return r.errorf("function given twice in #!site; usage: %s", siteUsage)
		}
		s.Func = string(v)
	}
	id := trace.SiteID(len(r.meta.Sites))
	if err := r.meta.DefineSite(id, s); err != nil {
		return r.errorf("%v", err)
	}
	r.labels.put(label, id)
	return nil
}

// addrDirective: #!addr TOKEN ID [NAME] binds object token TOKEN to object
// ID, named NAME (default TOKEN; "" for no name).
func (r *reader) addrDirective(args []dirArg) error {
	pos, _, err := r.splitArgs("addr", args, 2, 3, addrUsage)
	if err != nil {
		return err
	}
	tok := string(pos[0].val)
	if tok == "" {
		return r.errorf("empty object token in #!addr")
	}
	if _, lit := hexLiteral(pos[0].val); lit && !pos[0].quoted {
		return r.errorf("#!addr %s: a bare 0x token is an object ID, not a name; quote it to use it as a name", tok)
	}
	id, ok := parseUint(pos[1].val)
	if !ok {
		return r.errorf("bad object ID %q in #!addr: expected a decimal or 0x-hex number below 2^64", pos[1].val)
	}
	if _, used := r.objs.get(pos[0].val); used {
		return r.errorf("object %q is already in use; put #!addr before its first use", tok)
	}
	if _, used := r.taken[id]; used {
		return r.errorf("object ID %#x is already in use", id)
	}
	name := tok
	if len(pos) > 2 {
		name = string(pos[2].val)
	}
	r.objs.put(tok, id)
	r.taken[id] = struct{}{}
	if name != "" {
		r.meta.SetName(id, name)
	}
	return nil
}

// goroutineDirective: #!g THREAD [id=N] [parent=N] [site=LABEL] [name=NAME]
// defines the goroutine of thread token THREAD completely: omitted fields
// are the next free GID, no parent, no site, and THREAD as its name.
func (r *reader) goroutineDirective(args []dirArg) error {
	pos, kv, err := r.splitArgs("g", args, 1, 1, gUsage, "id", "parent", "site", "name")
	if err != nil {
		return err
	}
	tok := string(pos[0].val)
	if tok == "" {
		return r.errorf("empty thread token in #!g")
	}
	if _, used := r.threads.get(pos[0].val); used {
		return r.errorf("thread %q is already in use; put #!g before its first use", tok)
	}
	// Every argument is checked before the goroutine takes an ID or a site
	// is interned: a malformed directive changes nothing.
	g := trace.Goroutine{Parent: trace.NoParent, Name: tok}
	if v, ok := kv["parent"]; ok {
		n, err := strconv.ParseUint(string(v), 10, 32)
		if err != nil {
			return r.errorf("bad parent=%q in #!g: expected a goroutine number", v)
		}
		g.Parent = trace.GID(n)
	}
	if v, ok := kv["id"]; ok {
		n, err := strconv.ParseUint(string(v), 10, 32)
		if err != nil || trace.GID(n) == trace.NoParent {
			return r.errorf("bad id=%q in #!g: expected a goroutine number", v)
		}
		if n > uint64(len(r.meta.Goroutines))+maxGIDGap {
			return r.errorf("id=%d in #!g is more than %d beyond the highest goroutine so far", n, maxGIDGap)
		}
		if r.meta.GoroutineDefined(trace.GID(n)) {
			return r.errorf("goroutine %d is already defined", n)
		}
		g.ID = trace.GID(n)
	} else if g.ID, err = r.newGID(); err != nil {
		return err
	}
	if v, ok := kv["site"]; ok {
		g.Site = r.site(v)
	}
	if v, ok := kv["name"]; ok {
		g.Name = string(v)
	}
	if err := r.meta.DefineGoroutine(g); err != nil {
		return r.errorf("%v", err)
	}
	r.threads.put(tok, g.ID)
	return nil
}

// seqDirective: #!seq N gives the next event Seq N (and the ones after it
// N+1, N+2, ...).
func (r *reader) seqDirective(args []dirArg) error {
	pos, _, err := r.splitArgs("seq", args, 1, 1, seqUsage)
	if err != nil {
		return err
	}
	n, ok := parseUint(pos[0].val)
	if !ok {
		return r.errorf("bad #!seq %q: expected a decimal or 0x-hex number below 2^64", pos[0].val)
	}
	r.seq = n
	return nil
}
