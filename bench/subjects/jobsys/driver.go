package jobsys

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Config sizes a driver run.
type Config struct {
	Jobs    int // jobs submitted up front
	Workers int // initial workers (the autoscaler removes one)
	Sinks   int // pipeline sink goroutines
	Late    int // bound on the late submitter's jobs
}

// DefaultConfig is the size the test uses.
func DefaultConfig() Config { return Config{Jobs: 24, Workers: 3, Sinks: 2, Late: 200} }

var corpus = []string{
	"the quick brown fox jumps over the lazy dog",
	"to be or not to be that is the question",
	"all happy families are alike; each unhappy family is unhappy in its own way",
	"it was the best of times, it was the worst of times",
	"call me ishmael",
	"",
}

// Specs returns the driver's job mix: n deterministic specs.
func Specs(n int) []Spec {
	specs := make([]Spec, n)
	for i := range specs {
		text := corpus[i%len(corpus)]
		switch i % 8 {
		case 0, 4:
			specs[i] = Spec{Kind: KindWordCount, Input: text, Priority: i % 3, Attempts: 1}
		case 1:
			specs[i] = Spec{Kind: KindChecksum, Input: text, Priority: 2, Attempts: 1}
		case 2, 6:
			specs[i] = Spec{Kind: KindSort, Input: text, Priority: 1, Attempts: 1}
		case 3:
			specs[i] = Spec{Kind: KindFlaky, Input: "2", Priority: 0, Attempts: 3}
		case 5:
			specs[i] = Spec{Kind: KindPrimes, Input: strconv.Itoa(500 + 37*i), Priority: 1, Attempts: 1}
		case 7:
			// Always slower than its timeout: both attempts time out.
			specs[i] = Spec{Kind: KindSlow, Input: "3", Priority: 0, Attempts: 2, Timeout: 500 * time.Microsecond}
		}
	}
	return specs
}

// Result is what a run produced.
type Result struct {
	Done, Failed, Cancelled int
	Wrong                   int // done jobs whose result differs from Expected
	Late                    int // late jobs accepted before the shutdown
	Aggregated              int // results the aggregator kept (racy appends may lose some)
	Tagged                  int // results the aggregator's locked tag table counted: exact
	Polls                   int // status polls made
	Workers                 int // workers left after the autoscaler's shrink
	Processed               int // the racy processed counter
}

// Run drives a system through a whole life: submissions, a poller, a
// shrink, a cancellation, a late submitter racing the shutdown.
func Run(cfg Config) (Result, error) {
	s := New(Options{Workers: cfg.Workers, Sinks: cfg.Sinks, Backoff: Backoff{Base: 100 * time.Microsecond, Max: time.Millisecond}})
	specs := Specs(cfg.Jobs)
	jobs := make([]*Job, 0, len(specs))
	for _, sp := range specs {
		j, err := s.Submit(sp)
		if err != nil {
			return Result{}, err
		}
		jobs = append(jobs, j)
	}
	// Cancel the last job; it is low priority, so it is most likely still
	// queued (if it already ran, the cancellation is a no-op).
	cancelled := jobs[len(jobs)-1].ID()
	s.Cancel(cancelled)

	var aux sync.WaitGroup
	var res Result
	aux.Add(2)
	go func() { // the poller: watches every job through the status API
		defer aux.Done()
		for round := 0; round < 200; round++ {
			pending := 0
			for _, j := range jobs {
				st, err := s.Status(j.ID())
				if err != nil || !st.State.Terminal() {
					pending++
				}
				res.Polls++
			}
			s.Stats()
			if pending == 0 {
				return
			}
			time.Sleep(50 * time.Microsecond)
		}
	}()
	go func() { // the autoscaler: gives one worker back after a moment
		defer aux.Done()
		time.Sleep(200 * time.Microsecond)
		s.Resize(cfg.Workers - 1)
	}()

	for _, j := range jobs {
		<-j.Done()
	}
	aux.Wait()
	// A late client keeps submitting while the system shuts down.
	late := make(chan int)
	go func() {
		n := 0
		for i := 0; i < cfg.Late; i++ {
			if _, err := s.Submit(Spec{Kind: KindChecksum, Input: "late " + strconv.Itoa(i), Attempts: 1}); err != nil {
				if !errors.Is(err, ErrClosed) && !errors.Is(err, ErrQueueClosed) {
					n = -1000
				}
				break
			}
			n++
		}
		late <- n
	}()
	if err := s.Shutdown(time.Second); err != nil {
		return res, err
	}
	res.Late = <-late
	if res.Late < 0 {
		return res, fmt.Errorf("late submitter got an unexpected error")
	}
	for i, j := range jobs {
		o := j.Outcome()
		switch o.State {
		case StateDone:
			res.Done++
			if want, _ := Expected(specs[i]); o.Result != want {
				res.Wrong++
			}
		case StateFailed:
			res.Failed++
		case StateCancelled:
			res.Cancelled++
		default:
			return res, fmt.Errorf("%s: not terminal after shutdown", o.describe())
		}
	}
	res.Aggregated = len(s.Results())
	for _, n := range s.Tags() {
		res.Tagged += n
	}
	res.Workers = s.pool.Running()
	res.Processed = s.metrics.processed
	return res, nil
}

// Summary formats a result for logs.
func (r Result) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d done (%d wrong), %d failed, %d cancelled; %d late; aggregated %d/%d; %d polls",
		r.Done, r.Wrong, r.Failed, r.Cancelled, r.Late, r.Aggregated, r.Tagged, r.Polls)
	return b.String()
}
