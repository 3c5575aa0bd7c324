package rt

import (
	"unsafe"

	"github.com/racekit/racekit/trace"
)

// Channel operations of untraced code. racekit patches the Go runtime so
// that every channel operation calls a hook (instrument/chanhook.go);
// setChanHook, set by the file racekit adds to rt's copy, installs onChan
// there. The standard library synchronizes over channels racekit does not
// see otherwise (io.Pipe, net.Pipe, an untraced dependency's channels),
// and Go's race detector, which instruments the standard library, sees
// every such edge: without them a program's accesses ordered by a pipe
// inside std were a false race.
//
// The edges are the Go memory model's: a send (or close) before the
// receive that completes with it, and, on an unbuffered channel, a receive
// before the completion of the send it takes. They go on two objects of
// the channel's own, beside the two of traced code's per-message hooks
// (chanmsg.go: a and a+1), so that the two never mix: a+2 for the
// forward edges, released when a send begins and acquired when a receive
// completes, and a+3 for the backward ones. On a buffered channel a
// receive is ordered after every send recorded before it completed, not
// only its own message's: more edges than the model's, which may hide a
// race inside std's buffered channels, never invent one. An operation
// that traced code announced (its pre hook seen, its post hook not yet:
// gstate.msgs, or gstate.announced when sampling) is recorded by those
// hooks and skipped here.

// Only goroutines rt already has a state for record (those that ran
// traced code, or recorded an edge of their own): the hook makes none, so
// the goroutines of the trace, and the names that the controlled
// scheduler gives them (sched.Names, numbered in the order rt first sees
// them; the hook is off under it), are the same as without it. The
// framework's and net/http's own goroutines, which never run traced code,
// stay out of the trace.

// setChanHook installs the runtime's channel hook; nil without the patched
// runtime.
var setChanHook func(h func(c unsafe.Pointer, op uint8))

func installChanHook() {
	if setChanHook != nil {
		setChanHook(onChan)
	}
}

// The operations the runtime's hook passes (instrument/chanhook.go).
const (
	chanSendBegin = 0 // a send or a close begins
	chanSendEnd   = 1 // a send to an unbuffered channel completed
	chanRecvBegin = 2 // a receive from an unbuffered channel begins
	chanRecvEnd   = 3 // a receive completed (a value, or the close)
)

// onChan runs in the runtime's channel operations on the goroutine that
// makes them, from ordinary goroutine context, never inside itself or the
// allocation hook.
func onChan(c unsafe.Pointer, op uint8) {
	if !on || ctl || !live.Load() {
		return
	}
	g := known()
	if g == nil {
		return
	}
	a := uint64(uintptr(c))
	for _, o := range g.msgs.ops {
		if o.a == a {
			return // traced code's operation (SendPreG, RecvPreG, ...)
		}
	}
	for _, x := range g.announced {
		if x == a {
			return // the same, sampled
		}
	}
	switch op {
	case chanSendBegin:
		g.edge(trace.OpSyncRelease, 0, a+2)
	case chanSendEnd:
		g.edge(trace.OpSyncAcquire, 0, a+3)
	case chanRecvBegin:
		g.edge(trace.OpSyncRelease, 0, a+3)
	case chanRecvEnd:
		g.edge(trace.OpSyncAcquire, 0, a+2)
	}
}

// known is the current goroutine's state of this trace, or nil when rt
// has none: unlike cur, it makes none.
func known() *gstate {
	id := goid()
	if s := gtab[id&(gtabSize-1)].Load(); s != nil && s.goid == id && s.traceNo == traceCount.Load() {
		return s
	}
	defMu.Lock()
	s := gmap[id]
	defMu.Unlock()
	if s == nil || s.traceNo != traceCount.Load() {
		return nil
	}
	return s
}
