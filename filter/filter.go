// Package filter holds the stages that drop events between a trace and a
// detector: TREE's redundant-event filter (filter/tree) and LiteRace's
// samplers (filter/sample). A filter sees the events in trace order and
// says, for each, whether to keep it; it never keeps an event it was not
// shown and never reorders. Filters import only the standard library and
// trace, so the runtime (rt) can link them and filter while recording.
//
// Offline, NewReader puts a filter in front of any detector:
//
//	r = filter.NewReader(r, tree.New(tree.Options{}))
//	detect.Run(r, hb.New(sink))
package filter

import (
	"errors"
	"io"

	"github.com/racekit/racekit/trace"
)

// A Filter decides, event by event, which events of one stream to keep.
// Keep is called once per event, in trace order; it must not retain e.
type Filter interface {
	Keep(e *trace.Event) bool
}

// Func adapts a function to a Filter.
type Func func(e *trace.Event) bool

// Keep calls f.
func (f Func) Keep(e *trace.Event) bool { return f(e) }

// Reader is a trace.Reader that returns the events of another reader that
// a filter keeps, counting what it dropped.
type Reader struct {
	r       trace.Reader
	f       Filter
	kept    int64
	dropped int64
	// droppedAccesses counts dropped reads and writes (the events TREE and
	// the samplers exist to drop) among dropped.
	droppedAccesses int64
}

// NewReader returns the events of r that f keeps.
func NewReader(r trace.Reader, f Filter) *Reader { return &Reader{r: r, f: f} }

// Next returns the next kept event.
func (r *Reader) Next(e *trace.Event) error {
	for {
		if err := r.r.Next(e); err != nil {
			if errors.Is(err, io.EOF) {
				return io.EOF
			}
			return err
		}
		if r.f.Keep(e) {
			r.kept++
			return nil
		}
		r.dropped++
		if e.Op.IsAccess() {
			r.droppedAccesses++
		}
	}
}

// Meta is the underlying reader's metadata.
func (r *Reader) Meta() *trace.Meta { return r.r.Meta() }

// Kept is the number of events returned so far.
func (r *Reader) Kept() int64 { return r.kept }

// Dropped is the number of events dropped so far.
func (r *Reader) Dropped() int64 { return r.dropped }

// DroppedAccesses is the number of reads and writes dropped so far.
func (r *Reader) DroppedAccesses() int64 { return r.droppedAccesses }

// Warnings forwards the underlying reader's warnings (a trace cut short).
func (r *Reader) Warnings() []string {
	if w, ok := r.r.(trace.Warner); ok {
		return w.Warnings()
	}
	return nil
}
