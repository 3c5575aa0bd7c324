package text

import (
	"bufio"
	"fmt"
	"io"
	"strconv"

	"github.com/racekit/racekit/trace"
)

// UnsupportedOpError is returned by STDWriter.WriteEvent for an event that
// STD cannot express, unless the writer is Lossy.
type UnsupportedOpError struct {
	Seq      uint64
	Op       trace.Op
	ReadLock bool // an Acquire/Release in read (shared) mode
}

func (e *UnsupportedOpError) Error() string {
	op := e.Op.String()
	if e.ReadLock {
		op = "r" + op // racq, rrel
	}
	return fmt.Sprintf("event seq %d: STD cannot express %s; use --lossy to drop it or racekit text format", e.Seq, op)
}

// STDWriter writes RAPID's STD format. It implements trace.Writer.
//
// STD has reads, writes, exclusive locks, fork, join, begin and end. Every
// other event (read-mode locks, sync release/acquire, atomics, BarrierPairs,
// function and region boundaries) is refused with an *UnsupportedOpError,
// or, if Lossy is set, dropped and counted in Dropped. Nothing is ever
// rewritten into an op it is not: an atomic written as a lock, or a read
// lock as an exclusive one, would invent mutual exclusion and change what
// RAPID reports. Values, Seq gaps and site functions are not written.
//
// Tokens: a thread is its goroutine's name, or T<gid>; an object is its
// name, or V<hex> (variables) or L<hex> (locks); a location is its site's
// String(), or the site ID when the site is unknown. A name that is not a
// valid STD token, or that another thread or object already uses, is
// replaced by the fallback (made unique with a ~N suffix), so that
// distinct goroutines and objects stay distinct.
type STDWriter struct {
	// Lossy makes WriteEvent drop the events STD cannot express instead
	// of failing.
	Lossy bool

	bw      *bufio.Writer
	err     error // sticky write error
	meta    *trace.Meta
	buf     []byte
	dropped [trace.NumOps]int64

	gTok    map[trace.GID]string
	objTok  map[uint64]string
	used    map[string]struct{} // thread and object tokens written
	siteTok []string            // per site, "" until written
}

// NewSTDWriter returns a writer of STD to w. Call Close to flush it.
func NewSTDWriter(w io.Writer) *STDWriter {
	return &STDWriter{
		bw:     bufio.NewWriterSize(w, 64<<10),
		meta:   trace.NewMeta(),
		gTok:   make(map[trace.GID]string),
		objTok: make(map[uint64]string),
		used:   make(map[string]struct{}),
	}
}

// Dropped returns how many events of each op a Lossy writer dropped.
// Read-mode lock events count under OpAcquire and OpRelease (exclusive
// ones are never dropped).
func (w *STDWriter) Dropped() map[trace.Op]int64 {
	m := make(map[trace.Op]int64)
	for op, n := range w.dropped {
		if n != 0 {
			m[trace.Op(op)] = n
		}
	}
	return m
}

// DefineSite records a site for the events that follow.
func (w *STDWriter) DefineSite(id trace.SiteID, s trace.Site) error { return w.meta.DefineSite(id, s) }

// DefineGoroutine records a goroutine (its name becomes its thread token).
func (w *STDWriter) DefineGoroutine(g trace.Goroutine) error { return w.meta.DefineGoroutine(g) }

// DefineName records an object's name (it becomes its token).
func (w *STDWriter) DefineName(obj uint64, name string) error {
	w.meta.SetName(obj, name)
	return nil
}

// WriteEvent writes e as one STD line.
func (w *STDWriter) WriteEvent(e *trace.Event) error {
	if w.err != nil {
		return w.err
	}
	if err := e.Validate(); err != nil {
		return fmt.Errorf("event seq %d: %v", e.Seq, err)
	}
	if e.Op.IsRange() {
		return trace.WriteWords(e, w.WriteEvent) // the format has no range ops
	}
	var decor string
	switch e.Op {
	case trace.OpRead, trace.OpWrite:
		decor = w.object(e.Obj, "V")
	case trace.OpAcquire, trace.OpRelease:
		if e.ReadLock() {
			return w.drop(e)
		}
		decor = w.object(e.Obj, "L")
	case trace.OpFork, trace.OpJoin:
		if e.Op == trace.OpFork && w.meta.Goroutine(e.G).Name == STDRootName {
			// The STD reader's fork of a thread that had none: STD
			// says it by leaving the fork out (STDReader).
			return nil
		}
		decor = w.thread(trace.GID(e.Obj))
	case trace.OpBegin, trace.OpEnd:
	default:
		return w.drop(e)
	}
	b := append(w.buf[:0], w.thread(e.G)...)
	b = append(b, '|')
	b = append(b, e.Op.String()...)
	if e.Op != trace.OpBegin && e.Op != trace.OpEnd {
		b = append(b, '(')
		b = append(b, decor...)
		b = append(b, ')')
	}
	b = append(b, '|')
	b = append(b, w.location(e.Site)...)
	b = append(b, '\n')
	w.buf = b
	if _, err := w.bw.Write(b); err != nil {
		w.err = err
	}
	return w.err
}

func (w *STDWriter) drop(e *trace.Event) error {
	if !w.Lossy {
		return &UnsupportedOpError{Seq: e.Seq, Op: e.Op, ReadLock: e.ReadLock()}
	}
	w.dropped[e.Op]++
	return nil
}

// Close flushes the output; it does not close the underlying writer.
func (w *STDWriter) Close() error {
	if w.err != nil {
		return w.err
	}
	w.err = w.bw.Flush()
	return w.err
}

func (w *STDWriter) thread(g trace.GID) string {
	if t, ok := w.gTok[g]; ok {
		return t
	}
	t := w.meta.Goroutine(g).Name
	if !stdSafe(t) || w.isUsed(t) {
		t = unique("T"+strconv.FormatUint(uint64(g), 10), w.used)
	}
	w.gTok[g] = t
	w.used[t] = struct{}{}
	return t
}

func (w *STDWriter) object(obj uint64, prefix string) string {
	if t, ok := w.objTok[obj]; ok {
		return t
	}
	t := w.meta.NameOf(obj)
	if !stdSafe(t) || w.isUsed(t) {
		t = unique(prefix+strconv.FormatUint(obj, 16), w.used)
	}
	w.objTok[obj] = t
	w.used[t] = struct{}{}
	return t
}

func (w *STDWriter) isUsed(t string) bool {
	_, ok := w.used[t]
	return ok
}

// location is a site's STD token: its String() with the characters STD
// cannot hold ('|', control characters) replaced by '_', or the site ID.
func (w *STDWriter) location(id trace.SiteID) string {
	if int(id) < len(w.siteTok) && w.siteTok[id] != "" {
		return w.siteTok[id]
	}
	t := strconv.FormatUint(uint64(id), 10)
	if id != trace.NoSite && int(id) < len(w.meta.Sites) {
		if s := stdLocation(w.meta.Sites[id].String()); s != "" {
			t = s
		}
	}
	for len(w.siteTok) <= int(id) && len(w.siteTok) < len(w.meta.Sites) {
		w.siteTok = append(w.siteTok, "")
	}
	if int(id) < len(w.siteTok) {
		w.siteTok[id] = t
	}
	return t
}

func stdLocation(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c < ' ' || c == 0x7f || c == '|' {
			b[i] = '_'
		}
	}
	return string(trimSpace(b))
}
