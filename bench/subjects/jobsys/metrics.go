package jobsys

import "time"

// Metrics are the system's counters: plain fields bumped by the workers
// without a lock (js-processed*), read by Stats.
type Metrics struct {
	processed int           // jobs finished: racy
	failed    int           // jobs failed: racy
	retries   int           // extra attempts: racy
	busy      time.Duration // total run time: racy
	started   time.Time
}

func newMetrics() *Metrics { return &Metrics{started: time.Now()} }

// finished records one job.
func (m *Metrics) finished(ok bool, attempts int, d time.Duration) {
	m.processed++ // racekit:race id=js-processed kind=race benign=false self racekit:race id=js-processed-read kind=race benign=false
	if !ok {
		m.failed++ // racekit:race id=js-failed kind=race benign=false self flaky
	}
	if attempts > 1 {
		m.retries += attempts - 1 // racekit:race id=js-retries kind=race benign=false self flaky
	}
	m.busy += d // racekit:race id=js-busy kind=race benign=false self
}

// Stats is a snapshot for the status API.
type Stats struct {
	Processed int // racy counter
	Uptime    time.Duration
	Queued    int
	Workers   int
}

// snapshot reads the counters without synchronization.
func (m *Metrics) snapshot() Stats {
	return Stats{
		Processed: m.processed, // racekit:race id=js-processed-read kind=race benign=false
		Uptime:    time.Since(m.started),
	}
}
