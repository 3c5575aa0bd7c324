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
func RunChecked(r trace.Reader, check func(n int64) error, ds ...Detector) (int64, error) {
	var e trace.Event
	var n int64
	for {
		if err := r.Next(&e); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return n, err
		}
		for _, d := range ds {
			d.Handle(&e)
		}
		n++
		if n&(ProgressEvery-1) == 0 && check != nil {
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
