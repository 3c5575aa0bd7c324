package text

import (
	"bufio"
	"fmt"
	"io"
	"strconv"

	"github.com/racekit/racekit/trace"
)

// TextWriter writes racekit's text format. It implements trace.Writer and
// loses nothing a TextReader can give back: every event field an op uses
// (op, flags, value, object, Addrs, site, Seq) and the metadata (sites
// with their functions and IDs, goroutines with their IDs, names, parents
// and creation sites, object names).
//
// It writes what a hand-written trace would say and adds a directive only
// where the reader's defaults would come out different: #!site for a site
// with a function or a position its label cannot carry, #!g for a
// goroutine whose ID, parent, site or name the first mention does not
// imply, #!addr for a named object whose ID is not the one the reader
// would pick, #!seq for a gap in Seq. To know where the defaults hold, it
// replays the reader's assignment of IDs as it writes. Definitions no
// event used are written as directives by Close.
type TextWriter struct {
	bw   *bufio.Writer
	err  error // sticky
	meta *trace.Meta
	buf  []byte
	dir  []byte   // a directive line being built
	toks []string // tokens of a call's Addrs
	seq  uint64   // the Seq the reader will give the next event

	// What the reader knows, and the IDs it would assign next.
	gTok     map[trace.GID]string // rendered token per goroutine
	gUsed    map[string]struct{}  // raw thread tokens
	nextG    trace.GID            // the smallest GID the reader has not defined
	lastG    trace.GID
	lastGTok string
	// autoG: this event's thread is new and left to the reader, which
	// will define it only at the event's line, after any #!g written for
	// the event's child: that #!g must then name its ID.
	autoG bool

	objTok  map[uint64]string   // rendered token per object; its keys are the reader's IDs in use
	objUsed map[string]struct{} // raw object name tokens
	nextObj uint64              // the reader's next ID for a name, but for skipping IDs in use

	siteTok   []string                    // rendered label per site ID, "" while unknown to the reader
	labelUsed map[string]struct{}         // raw labels
	siteIndex map[trace.Site]trace.SiteID // the reader's Meta.InternSite index
	nextSite  trace.SiteID
}

// NewTextWriter returns a writer of racekit text to w. Call Close to write
// the remaining definitions and flush.
func NewTextWriter(w io.Writer) *TextWriter {
	return &TextWriter{
		bw:        bufio.NewWriterSize(w, 64<<10),
		meta:      trace.NewMeta(),
		gTok:      make(map[trace.GID]string),
		gUsed:     make(map[string]struct{}),
		objTok:    make(map[uint64]string),
		objUsed:   make(map[string]struct{}),
		nextObj:   firstObjID,
		siteTok:   []string{""},
		labelUsed: make(map[string]struct{}),
		siteIndex: map[trace.Site]trace.SiteID{{}: trace.NoSite},
		nextSite:  1,
	}
}

// DefineSite records a site; it is written when first used.
func (w *TextWriter) DefineSite(id trace.SiteID, s trace.Site) error {
	if err := w.meta.DefineSite(id, s); err != nil {
		return err
	}
	w.siteTok = append(w.siteTok, "")
	return nil
}

// DefineGoroutine records a goroutine; it is written when first mentioned.
func (w *TextWriter) DefineGoroutine(g trace.Goroutine) error { return w.meta.DefineGoroutine(g) }

// DefineName records an object's name; it is written when first used.
func (w *TextWriter) DefineName(obj uint64, name string) error {
	w.meta.SetName(obj, name)
	return nil
}

// WriteEvent writes e as one line, preceded by the directives it needs.
func (w *TextWriter) WriteEvent(e *trace.Event) error {
	if w.err != nil {
		return w.err
	}
	if err := e.Validate(); err != nil {
		return fmt.Errorf("event seq %d: %v", e.Seq, err)
	}
	if e.Op.IsRange() {
		return trace.WriteWords(e, w.WriteEvent) // the format has no range ops
	}
	// Resolve tokens in the order the reader will: thread, decor objects
	// or thread, and the location last, so that a site the reader interns
	// at this line gets the ID it has here.
	w.autoG = false
	gt := w.thread(e.G, trace.NoParent, trace.NoSite)
	var decor, child string
	w.toks = w.toks[:0]
	switch e.Op {
	case trace.OpFork:
		child = w.thread(e.Child(), e.G, e.Site)
	case trace.OpJoin:
		child = w.thread(e.Child(), trace.NoParent, trace.NoSite)
	case trace.OpBegin, trace.OpEnd:
	default:
		decor = w.object(e.Obj)
		for _, a := range e.Addrs {
			w.toks = append(w.toks, w.object(a))
		}
	}
	loc := w.site(e.Site, true)
	if e.Seq != w.seq {
		w.directive(strconv.AppendUint(append(w.dir[:0], "#!seq "...), e.Seq, 10))
	}
	w.seq = e.Seq + 1
	if w.err != nil {
		return w.err
	}

	b := append(w.buf[:0], gt...)
	b = append(b, '|')
	if e.ReadLock() {
		b = append(b, 'r')
	}
	b = append(b, e.Op.String()...)
	switch e.Op {
	case trace.OpFork, trace.OpJoin:
		b = append(append(append(b, '('), child...), ')')
	case trace.OpBegin, trace.OpEnd:
	default:
		b = append(append(b, '('), decor...)
		if e.ValueKnown() {
			b = appendValue(append(b, '='), e.Value)
		} else if e.Flags&trace.FlagMessage != 0 {
			b = append(append(b, '='), trace.ChanMsg(e.Value).String()...)
		}
		for i, t := range w.toks {
			if i == 0 {
				b = append(b, ';')
			} else {
				b = append(b, ',')
			}
			b = append(b, t...)
		}
		b = append(b, ')')
	}
	if loc != "" {
		b = append(append(b, '|'), loc...)
	}
	w.buf = append(b, '\n')
	w.write(w.buf)
	return w.err
}

// Close writes the definitions no event used, then flushes. It does not
// close the underlying writer.
func (w *TextWriter) Close() error {
	w.autoG = false
	for int(w.nextSite) < len(w.meta.Sites) {
		w.site(w.nextSite, false)
	}
	for g := range w.meta.Goroutines {
		if w.meta.GoroutineDefined(trace.GID(g)) {
			w.defineThread(trace.GID(g), trace.NoParent, trace.NoSite, true)
		}
	}
	for _, n := range w.meta.Names {
		w.defineObject(n.Obj, true)
	}
	if w.err == nil {
		w.err = w.bw.Flush()
	}
	return w.err
}

func (w *TextWriter) write(b []byte) {
	if w.err == nil {
		_, w.err = w.bw.Write(b)
	}
}

func (w *TextWriter) directive(b []byte) {
	w.dir = append(b, '\n')
	w.write(w.dir)
}

// thread returns g's token, defining g for the reader at its first
// mention: a fork's child mentioned first by the fork gets the forking
// goroutine as parent and the fork's site by default.
func (w *TextWriter) thread(g, parent trace.GID, site trace.SiteID) string {
	if g == w.lastG && w.lastGTok != "" {
		return w.lastGTok
	}
	t := w.defineThread(g, parent, site, false)
	w.lastG, w.lastGTok = g, t
	return t
}

func (w *TextWriter) defineThread(g, parent trace.GID, site trace.SiteID, force bool) string {
	if t, ok := w.gTok[g]; ok {
		return t
	}
	want := trace.Goroutine{ID: g, Parent: trace.NoParent}
	if w.meta.GoroutineDefined(g) {
		want = w.meta.Goroutine(g)
	}
	raw := want.Name
	if raw == "" {
		raw = "T" + strconv.FormatUint(uint64(g), 10)
	}
	raw = unique(raw, w.gUsed)
	for {
		if _, used := w.gTok[w.nextG]; !used {
			break
		}
		w.nextG++
	}
	auto := trace.Goroutine{ID: w.nextG, Parent: parent, Site: site, Name: raw}
	if force || want != auto {
		var label string
		if want.Site != trace.NoSite {
			label = w.site(want.Site, true)
		}
		d := append(append(w.dir[:0], "#!g "...), render(raw)...)
		if want.ID != w.nextG || w.autoG {
			d = strconv.AppendUint(append(d, " id="...), uint64(want.ID), 10)
		}
		if want.Parent != trace.NoParent {
			d = strconv.AppendUint(append(d, " parent="...), uint64(want.Parent), 10)
		}
		if label != "" {
			d = append(append(d, " site="...), label...)
		}
		if want.Name != raw {
			d = append(append(d, " name="...), quoteIfNeeded(want.Name)...)
		}
		w.directive(d)
	} else {
		w.autoG = true
	}
	t := render(raw)
	w.gTok[g] = t
	w.gUsed[raw] = struct{}{}
	return t
}

// quoteIfNeeded is render, except that "" is written as "".
func quoteIfNeeded(s string) string {
	if s == "" {
		return `""`
	}
	return render(s)
}

// object returns obj's token: its name, or its hex ID if it has none.
func (w *TextWriter) object(obj uint64) string {
	if t, ok := w.objTok[obj]; ok {
		return t
	}
	return w.defineObject(obj, false)
}

func (w *TextWriter) defineObject(obj uint64, force bool) string {
	if t, ok := w.objTok[obj]; ok {
		return t
	}
	name := w.meta.NameOf(obj)
	if name == "" {
		t := string(appendHex(nil, obj))
		w.objTok[obj] = t
		return t
	}
	raw := unique(name, w.objUsed)
	for {
		if _, used := w.objTok[w.nextObj]; !used {
			break
		}
		w.nextObj += objIDStep
	}
	if force || obj != w.nextObj || raw != name {
		d := append(append(w.dir[:0], "#!addr "...), renderObj(raw)...)
		d = appendHex(append(d, ' '), obj)
		if raw != name {
			d = append(append(d, ' '), render(name)...)
		}
		w.directive(d)
	}
	t := renderObj(raw)
	w.objTok[obj] = t
	w.objUsed[raw] = struct{}{}
	return t
}

// site returns the label of site id for a use on the next line written
// (use) or for nothing (Close). The reader numbers sites in the order it
// first sees them, so sites below id that it has not seen yet are defined
// first with #!site. A site is written as a plain label when parsing the
// label gives it back and the reader would intern it as new; otherwise a
// #!site binds a fresh label to it.
func (w *TextWriter) site(id trace.SiteID, use bool) string {
	if id == trace.NoSite {
		return ""
	}
	if int(id) >= len(w.meta.Sites) {
		if w.err == nil {
			w.err = fmt.Errorf("site %d used but not defined", id)
		}
		return ""
	}
	for w.nextSite <= id {
		k := w.nextSite
		w.nextSite++
		s := w.meta.Sites[k]
		label := s.String()
		_, labelTaken := w.labelUsed[label]
		_, known := w.siteIndex[s]
		if use && k == id && s.Func == "" && s.Callee.IsZero() && s.Call.IsZero() && !s.Wide && !s.Inline && !labelTaken && !known && trace.ParseSiteLabel(label) == s {
			w.siteIndex[s] = k
			w.labelUsed[label] = struct{}{}
			w.siteTok[k] = render(label)
			break
		}
		raw := unique(label, w.labelUsed)
		pos := s
		pos.Func, pos.Callee, pos.Call, pos.Wide, pos.Inline = "", trace.Frame{}, trace.Call{}, false, false
		d := append(append(w.dir[:0], "#!site "...), render(raw)...)
		switch {
		case trace.ParseSiteLabel(raw) == pos:
		case trace.ParseSiteLabel(label) == pos:
			d = append(append(d, ' '), render(label)...)
		default:
			d = append(append(d, " file="...), quoteIfNeeded(s.File)...)
			d = strconv.AppendInt(append(d, " line="...), int64(s.Line), 10)
			d = strconv.AppendInt(append(d, " col="...), int64(s.Col), 10)
		}
		if s.Func != "" {
			d = append(append(d, " func="...), render(s.Func)...)
		}
		if c := s.Callee; !c.IsZero() {
			d = append(append(d, " callee="...), render(c.Func)...)
			if c.File != "" {
				d = append(append(d, " callee-file="...), quoteIfNeeded(c.File)...)
			}
			if c.Line != 0 {
				d = strconv.AppendInt(append(d, " callee-line="...), int64(c.Line), 10)
			}
		}
		if c := s.Call; !c.IsZero() {
			d = strconv.AppendInt(append(d, " call-end="...), int64(c.EndLine), 10)
			d = strconv.AppendInt(append(d, ':'), int64(c.EndCol), 10)
			if c.Func != "" {
				d = append(append(d, " call="...), render(c.Func)...)
			}
		}
		if s.Wide {
			d = append(d, " wide=1"...)
		}
		if s.Inline {
			d = append(d, " inline=1"...)
		}
		w.directive(d)
		if !known {
			w.siteIndex[s] = k
		}
		w.labelUsed[raw] = struct{}{}
		w.siteTok[k] = render(raw)
	}
	return w.siteTok[id]
}
