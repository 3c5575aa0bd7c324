package instrument

import (
	"fmt"
	"sync/atomic"
)

// Status is how far a Prepare has got, for the progress lines of a
// command that waits on it (racekit test on a module with hundreds of
// dependencies is minutes in Prepare before go test prints anything).
// Prepare writes it, another goroutine reads it; the zero value is ready,
// and a nil *Status is ignored.
type Status struct {
	step        atomic.Pointer[string]
	done, total atomic.Int64
}

// set starts a step of total units (0: a step with no units of its own).
func (s *Status) set(step string, total int) {
	if s == nil {
		return
	}
	s.done.Store(0)
	s.total.Store(int64(total))
	s.step.Store(&step)
}

// add counts units of the current step done.
func (s *Status) add(n int) {
	if s != nil {
		s.done.Add(int64(n))
	}
}

// String is the current step, with its units done if it has any: "" before
// the first step.
func (s *Status) String() string {
	if s == nil {
		return ""
	}
	p := s.step.Load()
	if p == nil {
		return ""
	}
	if t := s.total.Load(); t > 0 {
		return fmt.Sprintf("%s: %d of %d done", *p, s.done.Load(), t)
	}
	return *p
}
