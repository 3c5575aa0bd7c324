// Package leak finds goroutines that a recorded run left blocked forever
// on a channel operation (issue 30: blocking bugs): a goroutine whose last
// events are the begin of a send, a receive or a select's cases, with no
// completion, no end, and nothing later in the trace that could complete
// it (a send or a close of the channel for a receive, a receive for a
// send). Go's race detector says nothing about them; go.uber.org/goleak
// finds them at a test's end by the goroutines' stacks. Here the trace is
// the evidence: rt records each channel operation's begin before the
// operation blocks (trace.ChanMsg: MsgSend on c, MsgRecv on c+1) and its
// completion after it returns.
//
// The trace must carry channel messages (a full recording: a sampled run's
// events carry none, and then nothing is reported).
package leak

import (
	"slices"

	"github.com/racekit/racekit/detect/deadlock"
	"github.com/racekit/racekit/trace"
)

// Leak is a goroutine blocked on channel operations, or in a lock,
// WaitGroup or Cond operation (trace.OpBlock), at the end of the
// trace.
type Leak struct {
	G   trace.GID
	Ops []Op // one, or a select's cases
	// Held: the locks the goroutine held then, in the order it took
	// them (each with the acquire's site; no stack).
	Held []deadlock.Held
}

// Op is one blocked channel operation, or (Block set) a Lock, RLock,
// WaitGroup.Wait or Cond.Wait rt found blocked when it finished the
// trace (trace.OpBlock).
type Op struct {
	Block trace.BlockKind // 0: a channel operation
	Send  bool
	Chan  uint64       // the channel (its runtime address); with Block, the lock, WaitGroup or Cond
	Made  trace.SiteID // where the channel was made (its allocation's site), 0 unknown
	Site  trace.SiteID
	Seq   uint64 // the begin event
	// Stack: the goroutine's call stack at the operation, innermost
	// first (Options.Stack), if asked for.
	Stack []trace.Site
}

// Kind is the operation's description, as goleak prints a goroutine's
// state: "chan send", "chan receive", or "select" for several cases.
func (l *Leak) Kind() string {
	switch {
	case l.Ops[0].Block != 0:
		return l.Ops[0].Block.String()
	case len(l.Ops) > 1:
		return "select"
	case l.Ops[0].Send:
		return "chan send"
	}
	return "chan receive"
}

// Options configure a Detector.
type Options struct {
	// Stack returns the goroutine's call stack at the event being
	// handled (innermost first); nil: no stacks.
	Stack func(trace.GID) []trace.Site
}

// chanLog is what happened on a channel.
type chanLog struct {
	closed uint64 // the close's seq; 0 none
	cap    uint64 // the capacity its sends gave
	// Completions recorded: each completed receive took a message a
	// completed send gave, so more receives done than sends done (less
	// the buffer) means a sender woken that had not said so yet.
	sendsDone, recvsDone uint64
}

type gState struct {
	ops    []Op // begun, not completed
	inOps  bool // the last event was one of ops' begins (a select announces several)
	ended  bool
	forked bool // forked in traced code (a go statement of the program's)
	held   []deadlock.Held
}

// Detector consumes a trace's events and reports the leaks at Finish.
type Detector struct {
	opt   Options
	gs    map[trace.GID]*gState
	chans map[uint64]*chanLog
	made  map[uint64]trace.SiteID // allocation site by address (channels among them)
	order []trace.GID
}

// New returns a Detector.
func New(opt Options) *Detector {
	return &Detector{opt: opt, gs: map[trace.GID]*gState{}, chans: map[uint64]*chanLog{}, made: map[uint64]trace.SiteID{}}
}

func (d *Detector) g(id trace.GID) *gState {
	s := d.gs[id]
	if s == nil {
		s = &gState{}
		d.gs[id] = s
		d.order = append(d.order, id)
	}
	return s
}

func (d *Detector) ch(c uint64) *chanLog {
	l := d.chans[c]
	if l == nil {
		l = &chanLog{}
		d.chans[c] = l
	}
	return l
}

// Handle processes one event.
func (d *Detector) Handle(e *trace.Event) {
	if e.Op == trace.OpFork {
		d.g(e.Child()).forked = true
	}
	if e.Op == trace.OpAlloc {
		// A channel's make records one (rt.MakeChan); a new object at
		// the address of a dead channel is a new channel.
		if lo, _, ok := e.AllocRange(); ok {
			d.made[lo] = e.Site
			delete(d.chans, lo)
		}
		return
	}
	s := d.g(e.G)
	if e.Op == trace.OpBlock {
		// rt saw the goroutine blocked in a lock, WaitGroup or Cond
		// operation as it finished the trace: nothing later can wake it.
		op := Op{Block: trace.BlockKind(e.Value), Chan: e.Obj, Made: d.made[e.Obj], Site: e.Site, Seq: e.Seq}
		if d.opt.Stack != nil {
			op.Stack = d.opt.Stack(e.G)
		}
		s.ops, s.inOps = []Op{op}, false
		return
	}
	if e.Op == trace.OpEnd {
		s.ended, s.ops, s.inOps, s.held = true, nil, false, nil
		return
	}
	switch e.Op {
	case trace.OpAcquire:
		s.held = append(s.held, deadlock.Held{Lock: e.Obj, Read: e.ReadLock(), Site: e.Site, Seq: e.Seq})
	case trace.OpRelease:
		for i := len(s.held) - 1; i >= 0; i-- {
			if h := s.held[i]; h.Lock == e.Obj && h.Read == e.ReadLock() {
				s.held = slices.Delete(s.held, i, i+1)
				break
			}
		}
	}
	if e.Flags&trace.FlagMessage == 0 || e.Validate() != nil ||
		(e.Op != trace.OpSyncRelease && e.Op != trace.OpSyncAcquire) {
		if e.Op != trace.OpFuncEnter && e.Op != trace.OpFuncExit {
			// The goroutine went on: what it had begun completed (a
			// select's other cases were not taken).
			s.ops, s.inOps = s.ops[:0], false
		}
		return
	}
	m := trace.ChanMsg(e.Value)
	c := e.Obj &^ 1 // events on c+1 belong to channel c
	switch m.Kind() {
	case trace.MsgSend, trace.MsgRecv:
		if !s.inOps {
			s.ops = s.ops[:0]
		}
		send := m.Kind() == trace.MsgSend
		op := Op{Send: send, Chan: c, Made: d.made[c], Site: e.Site, Seq: e.Seq}
		if d.opt.Stack != nil {
			op.Stack = d.opt.Stack(e.G)
		}
		s.ops, s.inOps = append(s.ops, op), true
		if send {
			d.ch(c).cap = m.Cap()
		}
	case trace.MsgClose:
		s.ops, s.inOps = s.ops[:0], false
		if l := d.ch(c); l.closed == 0 {
			l.closed = e.Seq
		}
	default: // a completion
		// The goroutine's operation on c completed (a select's cases
		// on other channels were not taken). It counts by its own kind,
		// not by a begin still held: a select evaluates its next case's
		// channel between two begins, an access, after which the begins
		// before were dropped (Go's race suite's TestRaceSelect1 lost a
		// send so, and reported the receive it woke as leaked).
		if l := d.ch(c); m.Kind() == trace.MsgSent {
			l.sendsDone++
		} else {
			l.recvsDone++
		}
		s.ops, s.inOps = s.ops[:0], false
	}
}

// Finish ends the trace.
func (d *Detector) Finish() {}

// Leaks returns the goroutines blocked at the end of the trace, in the
// order the trace first names them: those forked in the trace that did
// not end, whose last
// events begin channel operations none of which completed, and none of
// which anything later in the trace could have completed (so that a
// goroutine woken just before the program exited, which had no time to
// record its completion, is not taken for blocked).
func (d *Detector) Leaks() []Leak {
	// The operations pending at the end, per channel and direction, by
	// goroutine: two of them on one channel in opposite directions pair.
	type dir struct {
		c    uint64
		send bool
	}
	pending := map[dir]map[trace.GID]bool{}
	begins := map[dir][]uint64{} // the pending operations' seqs, sorted
	for id, s := range d.gs {
		if s.ended {
			continue
		}
		for _, op := range s.ops {
			if op.Block != 0 {
				continue
			}
			k := dir{op.Chan, op.Send}
			if pending[k] == nil {
				pending[k] = map[trace.GID]bool{}
			}
			pending[k][id] = true
			begins[k] = append(begins[k], op.Seq)
		}
	}
	for _, seqs := range begins {
		slices.Sort(seqs)
	}
	var out []Leak
	for _, id := range d.order {
		s := d.gs[id]
		if s.ended || len(s.ops) == 0 || !s.forked {
			// Only goroutines the program started: one born in untraced
			// code (a test's own goroutine, which the testing framework
			// starts) blocked at the end means the run did not finish
			// (a crash, a timeout), not that it left something behind.
			continue
		}
		// An OpBlock's operation (rt saw it blocked at the end) is no
		// channel begin that something may yet complete.
		could := s.ops[0].Block == 0 && slices.ContainsFunc(s.ops, func(op Op) bool {
			for g := range pending[dir{op.Chan, !op.Send}] {
				if g != id {
					return true
				}
			}
			rank, _ := slices.BinarySearch(begins[dir{op.Chan, op.Send}], op.Seq)
			return d.couldComplete(op, rank)
		})
		if !could {
			out = append(out, Leak{G: id, Ops: slices.Clone(s.ops), Held: slices.Clone(s.held)})
		}
	}
	return out
}

// Blocked returns every goroutine that did not end and whose last events
// are blocked operations, in the order the trace first names them, with
// no other condition: for a trace whose run stalled (every goroutine
// blocked, nothing able to wake one; rt.FinishStalled), which is a
// deadlock of those goroutines, the test's own among them.
func (d *Detector) Blocked() []Leak {
	var out []Leak
	for _, id := range d.order {
		if s := d.gs[id]; !s.ended && len(s.ops) > 0 {
			out = append(out, Leak{G: id, Ops: slices.Clone(s.ops), Held: slices.Clone(s.held)})
		}
	}
	return out
}

// couldComplete reports whether something recorded on op's channel may
// have let op complete just before the trace ended, op being the rank-th
// (from 0, by begin) of the operations of its direction pending on the
// channel at the end: a close, or a completion the other side recorded
// that op's side has not. Go's channels wake waiting goroutines in the
// order they began to wait, so those completions go to the first pending
// ones. For a send: receives done plus the buffer's capacity, less sends
// done, is how many sends completed without saying so; for a receive,
// sends done less receives done. (A receive that merely began later
// proves nothing: it may have taken another goroutine's message, as the
// one receive of e2e's leakytest takes one of two sends.)
func (d *Detector) couldComplete(op Op, rank int) bool {
	l := d.chans[op.Chan]
	if l == nil {
		return false
	}
	if l.closed != 0 {
		return true // a receive returns, a send panics
	}
	var unsaid uint64
	if op.Send {
		if l.recvsDone+l.cap > l.sendsDone {
			unsaid = l.recvsDone + l.cap - l.sendsDone
		}
	} else if l.sendsDone > l.recvsDone {
		unsaid = l.sendsDone - l.recvsDone
	}
	return uint64(rank) < unsaid
}

// Without returns leaks less those whose blocked operation's stack (its
// site when there is no stack) is in one of funcs, named as reports print
// a frame ("pkg.F", "pkg.(*T).M"): known leaks a user chooses to ignore,
// as goleak's IgnoreAnyFunction.
func Without(leaks []Leak, m *trace.Meta, funcs []string) []Leak {
	if len(funcs) == 0 {
		return leaks
	}
	in := func(op Op) bool {
		stack := op.Stack
		if len(stack) == 0 {
			stack = []trace.Site{m.Site(op.Site)}
		}
		return slices.ContainsFunc(stack, func(s trace.Site) bool { return slices.Contains(funcs, s.Func) })
	}
	var out []Leak
	for _, l := range leaks {
		if !slices.ContainsFunc(l.Ops, in) {
			out = append(out, l)
		}
	}
	return out
}
