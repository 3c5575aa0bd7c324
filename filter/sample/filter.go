package sample

import (
	"github.com/racekit/racekit/filter"
	"github.com/racekit/racekit/trace"
)

// Filter is a sampler over a fully recorded trace: the filter.Filter that
// keeps what LiteRace's logger would have logged had the sampler run while
// recording (§5.3's methodology: full logging, with every sampler's
// dispatch check evaluated at each function entry). Reads and writes are
// kept when the innermost function frame of their goroutine is sampled;
// every other event is kept. It is not safe for concurrent use.
type Filter struct {
	d      *Dispatcher
	frames table[fstack]
	st     Stats
}

var _ filter.Filter = (*Filter)(nil)

// fstack is one goroutine's open function frames.
type fstack struct {
	frames []frame
	// root is the decision for the goroutine's accesses outside every
	// frame (its start routine), made at the first such access.
	root, rootDecided bool
}

type frame struct {
	fn      uint64
	sampled bool
}

// Stats counts what a Filter saw and kept.
type Stats struct {
	Accesses int64 // reads and writes seen
	Logged   int64 // reads and writes kept
	// RootAccesses counts accesses made outside every function frame,
	// RootLogged those of them kept (see RootFunc).
	RootAccesses, RootLogged int64
	Calls                    int64 // FuncEnter events: dispatch checks
	SampledCalls             int64 // calls the sampler chose to log
	// UnmatchedExits counts FuncExit events that closed no open frame of
	// their goroutine (a trace cut short or ill-formed); they are kept and
	// change nothing.
	UnmatchedExits int64
}

// ESR is the effective sampling rate (§5.2): the share of memory accesses
// logged, 1 for a trace without accesses.
func (s Stats) ESR() float64 {
	if s.Accesses == 0 {
		return 1
	}
	return float64(s.Logged) / float64(s.Accesses)
}

// NewPolicyFilter returns a Filter sampling with policy p (for samplers
// other than Table 3's, such as a different burst length or rate).
func NewPolicyFilter(p Policy, seed int64) *Filter {
	return &Filter{d: NewDispatcher(p, seed)}
}

// Policy returns the filter's policy.
func (f *Filter) Policy() Policy { return f.d.Policy() }

// Stats returns what the filter has seen and kept so far.
func (f *Filter) Stats() Stats { return f.st }

// Keep reports whether e is kept: always, unless e is a read or write made
// in an unsampled invocation, or a BarrierPair's MethodBegin or MethodEnd,
// which only the predictive detectors read and which a sampled run does
// not record (package rt, barriersOn).
func (f *Filter) Keep(e *trace.Event) bool {
	switch e.Op {
	case trace.OpMethodBegin, trace.OpMethodEnd:
		return false
	case trace.OpRead, trace.OpWrite:
		s := f.frames.get(e.G)
		var keep bool
		if n := len(s.frames); n > 0 {
			keep = s.frames[n-1].sampled
		} else {
			if !s.rootDecided {
				s.root, s.rootDecided = f.d.Enter(e.G, RootFunc), true
			}
			keep = s.root
			f.st.RootAccesses++
			if keep {
				f.st.RootLogged++
			}
		}
		f.st.Accesses++
		if keep {
			f.st.Logged++
		}
		return keep
	case trace.OpFuncEnter:
		s := f.frames.get(e.G)
		sampled := f.d.Enter(e.G, e.Obj)
		s.frames = append(s.frames, frame{fn: e.Obj, sampled: sampled})
		f.st.Calls++
		if sampled {
			f.st.SampledCalls++
		}
	case trace.OpFuncExit:
		s := f.frames.get(e.G)
		if f.exit(s, e.Obj) && len(s.frames) == 0 {
			f.d.Return(e.G)
		}
	case trace.OpFork:
		// The child's creation site, for the PerSite and PerSlot samplers.
		f.d.Fork(trace.GID(e.Obj), e.Site)
	case trace.OpEnd:
		// A goroutine's state dies with it (GIDs are not reused).
		f.frames.del(e.G)
		f.d.Forget(e.G)
	}
	return true
}

// exit closes the innermost open frame of fn. Frames above it lost their
// exits (a panic unwinding through code whose Leave was not recorded) and
// close with it; an exit of a function with no open frame changes nothing.
func (f *Filter) exit(s *fstack, fn uint64) bool {
	for i := len(s.frames) - 1; i >= 0; i-- {
		if s.frames[i].fn == fn {
			s.frames = s.frames[:i]
			return true
		}
	}
	f.st.UnmatchedExits++
	return false
}
