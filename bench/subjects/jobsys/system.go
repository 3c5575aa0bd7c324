package jobsys

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrClosed is returned by Submit after Shutdown.
var ErrClosed = errors.New("job system is shut down")

// Options configure a System.
type Options struct {
	Workers  int
	Sinks    int
	Backoff  Backoff
	Capacity int // results the aggregator keeps
}

// System is the job system.
type System struct {
	mu        sync.Mutex
	closed    bool // written under mu; Submit checks it first without mu
	reg       *Registry
	queue     *Queue
	pool      *Pool
	pipe      *Pipeline
	metrics   *Metrics
	backoff   Backoff
	abandoned *Group
	ctx       context.Context
	cancel    context.CancelFunc
}

// New starts a system.
func New(opt Options) *System {
	if opt.Capacity <= 0 {
		opt.Capacity = 4096
	}
	s := &System{
		reg:       NewRegistry(),
		queue:     NewQueue(),
		pipe:      newPipeline(max(1, opt.Sinks), opt.Capacity),
		metrics:   newMetrics(),
		backoff:   opt.Backoff,
		abandoned: NewGroup(),
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.pool = newPool(s)
	s.pool.Resize(opt.Workers)
	return s
}

// Submit validates and queues a job.
func (s *System) Submit(spec Spec) (*Job, error) {
	// Fast path without the lock; the locked check below decides, so a
	// stale value costs nothing (benign).
	if s.closed { // racekit:race id=js-closed kind=race benign=true
		return nil, ErrClosed
	}
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	j := &Job{submitted: time.Now(), done: make(chan struct{})}
	// Written before the job is queued under the queue's lock; read by
	// the worker after it was dequeued under it. Neither access holds the
	// lock: a lockset false alarm, ordered by Push and Pop.
	j.spec = spec                               // racekit:norace id=js-spec,js-spec-prio why="written before Push takes the queue lock; read after Pop released it"
	j.ctx, j.cancel = context.WithCancel(s.ctx) // racekit:norace id=js-ctx why="written before Push takes the queue lock; read by the worker after Pop"
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		j.cancel()
		return nil, ErrClosed
	}
	s.reg.add(j)
	if err := s.queue.Push(j); err != nil {
		j.cancel()
		return nil, err
	}
	return j, nil
}

// Cancel cancels a job that has not finished.
func (s *System) Cancel(id int) bool {
	j, ok := s.reg.get(id)
	if !ok {
		return false
	}
	j.cancel()
	return true
}

// run executes one job on the calling worker: attempts with backoff, then
// the bookkeeping, then the pipeline.
func (s *System) run(j *Job) {
	spec := j.spec // racekit:norace id=js-spec why="see Submit"
	h := handlers[spec.Kind]
	start := time.Now()
	// The worker's state writes take no lock; the status API reads them
	// (after looking the job up under the registry lock, which the worker
	// never takes).
	j.state = StateRunning // racekit:race id=js-state-run kind=race benign=false
	var out string
	var err error
	n := 0
	for n < spec.Attempts {
		n++
		if cerr := j.ctx.Err(); cerr != nil { // racekit:norace id=js-ctx why="see Submit"
			err = cerr
			break
		}
		out, err = attempt(j.ctx, h, spec.Input, n, spec.Timeout, s.abandoned)
		if err == nil || !retryable(err) || n == spec.Attempts {
			break
		}
		j.state = StateRetrying // racekit:race id=js-state-retry kind=race benign=false flaky
		select {
		case <-time.After(s.backoff.Delay(n)):
		case <-j.ctx.Done():
		}
	}
	j.attempts = n
	j.finished = time.Now()
	switch {
	case err == nil:
		j.result = out      // racekit:race id=js-result kind=race benign=false
		j.state = StateDone // racekit:race id=js-state-done kind=race benign=false
	case errors.Is(err, context.Canceled):
		j.err = err
		j.state = StateCancelled // racekit:race id=js-state-cancel kind=race benign=false flaky
	default:
		j.err = err
		j.state = StateFailed // racekit:race id=js-state-failed kind=race benign=false flaky
	}
	s.metrics.finished(err == nil, n, time.Since(start))
	close(j.done)
	if err == nil {
		s.pipe.submit(j.id, out)
	}
}

// Status is the API's view of a job: read without synchronizing with the
// job's worker.
type Status struct {
	ID     int
	State  State
	Result string
}

// Status returns a job's current state (and result, once done).
func (s *System) Status(id int) (Status, error) {
	j, ok := s.reg.get(id)
	if !ok {
		return Status{}, fmt.Errorf("no job %d", id)
	}
	st := Status{ID: id, State: j.state} // racekit:race id=js-state-run,js-state-retry,js-state-done,js-state-cancel,js-state-failed kind=race benign=false
	if st.State == StateDone {
		st.Result = j.result // racekit:race id=js-result kind=race benign=false
	}
	return st, nil
}

// Stats is the API's system view.
func (s *System) Stats() Stats {
	st := s.metrics.snapshot()
	st.Queued = s.queue.Len()
	st.Workers = s.pool.Running()
	return st
}

// Resize changes the number of workers.
func (s *System) Resize(n int) { s.pool.Resize(n) }

// Shutdown stops accepting jobs, lets the queued ones finish, drains the
// pipeline and waits for abandoned attempts (up to grace).
func (s *System) Shutdown(grace time.Duration) error {
	s.mu.Lock()
	s.closed = true // racekit:race id=js-closed kind=race benign=true
	s.mu.Unlock()
	s.queue.Close()
	s.pool.wait()
	s.pipe.close()
	ok := s.abandoned.Wait(grace)
	s.cancel()
	if !ok {
		return fmt.Errorf("%d abandoned attempts still running after %v", s.abandoned.Running(), grace)
	}
	return nil
}

// Results are the aggregator's scores (after Shutdown).
func (s *System) Results() []int { return s.pipe.agg.Results() }

// Tags are the aggregator's per-tag counts (after Shutdown).
func (s *System) Tags() map[string]int { return s.pipe.agg.Tags() }
