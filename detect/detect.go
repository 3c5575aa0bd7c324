// Package detect defines what every racekit detector is: a component that
// consumes one event stream and emits findings into a finding.Sink. The
// detectors themselves live in subpackages, one per family (hb, lockset,
// and later predict and anomaly). Package clock is the happens-before
// tracker they share (docs/semantics.md in code), vc its vector clocks and
// epochs, shadow the address-keyed tables.
//
// A detector does not know whether its events come from a file, the
// generator or a live run, and it must not panic on an ill-formed stream
// (a release of a lock not held, a join of an unknown goroutine): it
// handles such events conservatively and counts them in Stats.
package detect

import (
	"errors"
	"io"

	"github.com/racekit/racekit/trace"
)

// Detector consumes events in trace order.
type Detector interface {
	// Handle processes one event. It must not retain e or e.Addrs.
	Handle(e *trace.Event)
	// Finish is called once after the last event; detectors that report at
	// the end (none yet) do so here.
	Finish()
}

// RangeHandler is a Detector that takes a range event (OpReadRange,
// OpWriteRange) whole: HandleRange does what Handle does for each of the
// word accesses trace.Span lists, in order. Where every detector of a run
// is one, and the reader can hand range events on unexpanded (KeepRanges),
// RunChecked does so: a byte-wise copy or loop is one event per byte
// (trace.Span), and the reader's and dispatch's work per word was most of
// what a trace of byte ranges cost beyond the detector's own.
type RangeHandler interface {
	HandleRange(e *trace.Event)
}

// RangeKeeper is a reader that can hand range events on unexpanded:
// KeepRanges, called before the first Next, makes it so and reports
// whether it did.
type RangeKeeper interface {
	KeepRanges() bool
}

// GoAtomicHandler is a Detector that takes an atomic operation with
// trace.FlagGoAtomic whole: HandleGoAtomic does what Handle does for each
// of the four events trace.GoAtomicEvents lists, in order. Where every
// detector of a run is one, and the reader can hand such operations on
// whole (GoAtomicKeeper), RunChecked does so: an atomics-heavy trace
// (lock-free maps, counters) is then a quarter of the events to decode and
// dispatch, and a detector need not push and pop the word's private lock.
type GoAtomicHandler interface {
	HandleGoAtomic(e *trace.Event)
}

// GoAtomicKeeper is a reader that can hand atomic operations with
// trace.FlagGoAtomic on whole: KeepGoAtomics, called before the first
// Next, makes it so and reports whether it did.
type GoAtomicKeeper interface {
	KeepGoAtomics() bool
}

// Forgetter is a Detector whose per-address state (shadow memory) can be
// dropped in the middle of a run, its clocks kept: Forget makes every
// address as if never accessed. Accesses after it are checked against
// accesses after it only, so it never adds a race; a race between an
// access before it and one after it is lost. The memory guard
// (analyze.RunGuarded) forgets rather than stops an analysis whose shadow
// memory outgrew its limit, as Go's race detector keeps a bounded
// history rather than none.
type Forgetter interface {
	Forget()
}

// Stats is implemented by detectors that count what they did.
type Stats interface {
	// Stats returns named counters (checks performed, ill-formed events
	// tolerated, shadow words allocated, ...).
	Stats() map[string]int64
}

// Run feeds every event of r to each detector in turn, then calls Finish on
// each, and returns the number of events read.
func Run(r trace.Reader, ds ...Detector) (int64, error) {
	return RunProgress(r, nil, ds...)
}

// ProgressEvery is how many events pass between calls of a progress
// function: rare enough to cost nothing per event.
const ProgressEvery = 1 << 18

// RunProgress is Run that also calls progress, if not nil, with the number
// of events read so far, every ProgressEvery events.
func RunProgress(r trace.Reader, progress func(n int64), ds ...Detector) (int64, error) {
	var check func(n int64) error
	if progress != nil {
		check = func(n int64) error { progress(n); return nil }
	}
	return RunChecked(r, check, ds...)
}

// RunChecked is RunProgress whose progress function may stop the run: an
// error it returns is returned at once, with the events read so far and
// without the detectors' Finish.
//
// The count is of word accesses and other events, whether range events
// were handed on whole (RangeHandler) or not, and atomic operations
// (GoAtomicHandler) likewise.
func RunChecked(r trace.Reader, check func(n int64) error, ds ...Detector) (int64, error) {
	var e trace.Event
	var n int64
	whole := wholeRanges(r, ds)
	atoms := wholeAtomics(r, ds)
	next := int64(ProgressEvery)
	for {
		if err := r.Next(&e); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return n, err
		}
		if whole && e.Op.IsRange() {
			for _, d := range ds {
				d.(RangeHandler).HandleRange(&e)
			}
			n += int64(trace.Span(e.Value).Words())
		} else if e.Flags&trace.FlagGoAtomic != 0 {
			if atoms {
				for _, d := range ds {
					d.(GoAtomicHandler).HandleGoAtomic(&e)
				}
			} else { // a reader that hands them on whatever it is asked
				var four [trace.GoAtomicSeqs]trace.Event
				trace.GoAtomicEvents(&e, &four)
				for i := range four {
					for _, d := range ds {
						d.Handle(&four[i])
					}
				}
			}
			n += trace.GoAtomicSeqs
		} else {
			for _, d := range ds {
				d.Handle(&e)
			}
			n++
		}
		if n >= next && check != nil {
			next = n + ProgressEvery
			if err := check(n); err != nil {
				return n, err
			}
		}
	}
	for _, d := range ds {
		d.Finish()
	}
	return n, nil
}

// wholeAtomics reports whether every detector of ds takes atomic
// operations with trace.FlagGoAtomic whole, and then asks r, if it can,
// to hand them on so.
func wholeAtomics(r trace.Reader, ds []Detector) bool {
	if len(ds) == 0 {
		return false
	}
	for _, d := range ds {
		if _, ok := d.(GoAtomicHandler); !ok {
			return false
		}
	}
	if k, ok := r.(GoAtomicKeeper); ok {
		k.KeepGoAtomics()
	}
	return true
}

// wholeRanges reports whether every detector of ds takes range events
// whole, and then asks r to hand them on so.
func wholeRanges(r trace.Reader, ds []Detector) bool {
	k, ok := r.(RangeKeeper)
	if !ok || len(ds) == 0 {
		return false
	}
	for _, d := range ds {
		if _, ok := d.(RangeHandler); !ok {
			return false
		}
	}
	return k.KeepRanges()
}
