package hb

import "github.com/racekit/racekit/finding"

// NewNoRecycle and NewFastTrackNoRecycle are New and NewFastTrack with one
// clock ID per goroutine: the baseline the recycling detectors are checked
// and measured against.
func NewNoRecycle(sink finding.Sink) *Detector { return newDetector(sink, false) }

func NewFastTrackNoRecycle(sink finding.Sink) *FastTrack { return newFastTrack(sink, false) }

// SetMinSweep sets the live read-shared states that start FastTrack's
// sweep and returns a function restoring the old value.
func SetMinSweep(n int) func() {
	old := minSweep
	minSweep = n
	return func() { minSweep = old }
}
