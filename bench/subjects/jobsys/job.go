package jobsys

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// State is a job's life-cycle state.
type State int

// The states, in order.
const (
	StatePending State = iota
	StateRunning
	StateRetrying
	StateDone
	StateFailed
	StateCancelled
)

var stateNames = [...]string{"pending", "running", "retrying", "done", "failed", "cancelled"}

func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("state(%d)", int(s))
}

// Terminal reports whether a job in this state will not change again.
func (s State) Terminal() bool { return s >= StateDone }

// Kind names what a job computes.
type Kind string

// The job kinds the handlers know.
const (
	KindWordCount Kind = "wordcount"
	KindChecksum  Kind = "checksum"
	KindSort      Kind = "sort"
	KindFlaky     Kind = "flaky"  // fails on its first attempts
	KindSlow      Kind = "slow"   // exceeds a short attempt timeout
	KindPrimes    Kind = "primes" // counts primes below a bound
)

// Spec is what a client submits.
type Spec struct {
	Kind     Kind
	Input    string
	Priority int           // higher runs first
	Attempts int           // maximum attempts (at least 1)
	Timeout  time.Duration // per attempt; 0 means none
}

// Validate checks a spec.
func (s *Spec) Validate() error {
	switch s.Kind {
	case KindWordCount, KindChecksum, KindSort, KindFlaky, KindSlow, KindPrimes:
	default:
		return fmt.Errorf("unknown job kind %q", s.Kind)
	}
	if s.Attempts < 1 {
		return errors.New("attempts must be at least 1")
	}
	if s.Timeout < 0 {
		return errors.New("timeout must not be negative")
	}
	if len(s.Input) > 1<<16 {
		return errors.New("input too large")
	}
	return nil
}

// Job is a submitted job. id, spec and submitted are set before the job
// is queued and never change; state, result, err and attempts are written
// by the job's worker.
type Job struct {
	id        int
	spec      Spec
	submitted time.Time

	state    State  // written by the worker without the registry lock (js-state-*)
	result   string // written by the worker (js-result)
	err      error
	attempts int
	finished time.Time

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{} // closed when the job reaches a terminal state
}

// ID is the job's number.
func (j *Job) ID() int { return j.id }

// Done is closed when the job has finished, one way or another.
func (j *Job) Done() <-chan struct{} { return j.done }

// Outcome is a job's final report, read after Done is closed (which
// orders it after the worker's writes).
type Outcome struct {
	ID       int
	State    State
	Result   string
	Err      error
	Attempts int
	Elapsed  time.Duration
}

// Outcome returns the job's report. Call it after Done is closed.
func (j *Job) Outcome() Outcome {
	<-j.done
	return Outcome{ID: j.id, State: j.state, Result: j.result, Err: j.err, Attempts: j.attempts, Elapsed: j.finished.Sub(j.submitted)}
}

// Registry is the table of jobs by ID.
type Registry struct {
	mu     sync.Mutex
	jobs   map[int]*Job
	nextID int
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{jobs: map[int]*Job{}} }

// add assigns the next ID and records the job.
func (r *Registry) add(j *Job) {
	r.mu.Lock()
	r.nextID++
	j.id = r.nextID // racekit:norace id=js-id why="Submit adds the job to the registry before it pushes it under the queue lock"
	r.jobs[j.id] = j
	r.mu.Unlock()
}

// get looks a job up.
func (r *Registry) get(id int) (*Job, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	j, ok := r.jobs[id]
	return j, ok
}

// ids lists the job IDs in order.
func (r *Registry) ids() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]int, 0, len(r.jobs))
	for id := range r.jobs {
		out = append(out, id)
	}
	sort.Ints(out)
	return out
}

// Len is the number of jobs ever submitted.
func (r *Registry) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.jobs)
}

// describe is a one-line summary, for logs.
func (o Outcome) describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "job %d %s after %d attempt(s)", o.ID, o.State, o.Attempts)
	if o.Err != nil {
		fmt.Fprintf(&b, ": %v", o.Err)
	}
	return b.String()
}
