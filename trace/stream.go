package trace

import (
	"errors"
	"fmt"
	"io"
)

// Reader is a stream of events. Next fills e with the next event and
// returns io.EOF after the last one; e (and e.Addrs) may be overwritten by
// the next call. Meta describes every site, goroutine and name that the
// events returned so far use, and is complete after io.EOF.
type Reader interface {
	Next(e *Event) error
	Meta() *Meta
}

// Writer consumes a stream of events with its metadata. Definitions must
// come before the first event that uses them.
type Writer interface {
	DefineSite(id SiteID, s Site) error
	DefineGoroutine(g Goroutine) error
	DefineName(obj uint64, name string) error
	WriteEvent(e *Event) error
	Close() error
}

// Warner is implemented by readers that recovered from damaged input (a
// file cut short by a crash): Warnings says what was skipped.
type Warner interface {
	Warnings() []string
}

// FormatError reports malformed input at a position a user can find.
type FormatError struct {
	File   string // input name
	Offset int64  // byte offset of the offending record, or -1
	Line   int    // 1-based line for text formats, 0 for binary
	Msg    string
	Err    error // underlying cause, if any
}

func (e *FormatError) Error() string {
	pos := e.File
	if pos == "" {
		pos = "<input>"
	}
	switch {
	case e.Line > 0:
		pos = fmt.Sprintf("%s:%d", pos, e.Line)
	case e.Offset >= 0:
		pos = fmt.Sprintf("%s: offset %d", pos, e.Offset)
	}
	if e.Err != nil {
		return pos + ": " + e.Msg + ": " + e.Err.Error()
	}
	return pos + ": " + e.Msg
}

func (e *FormatError) Unwrap() error { return e.Err }

// MetaCopier forwards the growth of a reader's Meta to a Writer. Call Sync
// before writing each event that came from the reader.
type MetaCopier struct {
	src                *Meta
	dst                Writer
	sites, gors, names int
}

// NewMetaCopier starts copying src's tables (everything in them so far is
// treated as new) to dst.
func NewMetaCopier(src *Meta, dst Writer) *MetaCopier {
	return &MetaCopier{src: src, dst: dst, sites: 1}
}

// Sync writes the definitions added to the source since the last call.
func (c *MetaCopier) Sync() error {
	m := c.src
	if len(m.Sites) == c.sites && len(m.Goroutines) == c.gors && len(m.Names) == c.names {
		return nil
	}
	for ; c.sites < len(m.Sites); c.sites++ {
		if err := c.dst.DefineSite(SiteID(c.sites), m.Sites[c.sites]); err != nil {
			return err
		}
	}
	for ; c.gors < len(m.Goroutines); c.gors++ {
		if m.GoroutineDefined(GID(c.gors)) {
			if err := c.dst.DefineGoroutine(m.Goroutines[c.gors]); err != nil {
				return err
			}
		}
	}
	for ; c.names < len(m.Names); c.names++ {
		n := m.Names[c.names]
		if err := c.dst.DefineName(n.Obj, n.Name); err != nil {
			return err
		}
	}
	return nil
}

// Copy streams every event of r, with its metadata, into w, and returns the
// number of events copied. It does not close w.
func Copy(w Writer, r Reader) (int64, error) {
	mc := NewMetaCopier(r.Meta(), w)
	var e Event
	var n int64
	for {
		err := r.Next(&e)
		if errors.Is(err, io.EOF) {
			return n, mc.Sync()
		}
		if err != nil {
			return n, err
		}
		if err := mc.Sync(); err != nil {
			return n, err
		}
		if err := w.WriteEvent(&e); err != nil {
			return n, err
		}
		n++
	}
}

// Trace is a whole trace in memory: a Reader (via Iter) and a Writer.
// Tests and small tools use it; large traces should be streamed.
type Trace struct {
	M      *Meta
	Events []Event
}

// NewTrace returns an empty in-memory trace.
func NewTrace() *Trace { return &Trace{M: NewMeta()} }

func (t *Trace) DefineSite(id SiteID, s Site) error { return t.M.DefineSite(id, s) }
func (t *Trace) DefineGoroutine(g Goroutine) error  { return t.M.DefineGoroutine(g) }
func (t *Trace) DefineName(obj uint64, name string) error {
	t.M.SetName(obj, name)
	return nil
}
func (t *Trace) WriteEvent(e *Event) error {
	if e.Op.IsRange() && e.Validate() == nil {
		return WriteWords(e, t.WriteEvent)
	}
	t.Events = append(t.Events, e.Clone())
	return nil
}
func (t *Trace) Close() error { return nil }

// Iter returns a Reader over the trace's events. Its Meta is the whole
// table from the start.
func (t *Trace) Iter() Reader { return &sliceReader{t: t} }

type sliceReader struct {
	t *Trace
	i int
}

func (r *sliceReader) Meta() *Meta { return r.t.M }
func (r *sliceReader) Next(e *Event) error {
	if r.i >= len(r.t.Events) {
		return io.EOF
	}
	*e = r.t.Events[r.i]
	r.i++
	return nil
}

// ReadAll reads a whole stream into memory.
func ReadAll(r Reader) (*Trace, error) {
	t := NewTrace()
	if _, err := Copy(t, r); err != nil {
		return t, err
	}
	return t, nil
}
