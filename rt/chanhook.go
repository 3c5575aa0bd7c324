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
// race inside std's buffered channels, never invent one.

// The runtime's wrapper calls rt only for the operations it is to see,
// deciding by two fields rt sets in the runtime's g (at the offsets the
// patched runtime gives, chanGOffsets), so that the channel operations of
// traced code cost no call into rt: an operation that traced code
// announced (its pre hook ran just before it: chanPre's chanAnnounce) is
// recorded by those hooks and skipped, and so is every operation of a
// goroutine rt has no state for (newGstate's chanKnown). Traced code's
// close is not announced: the hook's release on a+2 orders it before the
// receives untraced code makes.
//
// The hook makes no state: the goroutines of the trace, and the names
// that the controlled scheduler gives them (sched.Names, numbered in the
// order rt first sees them; the hook is off under it), are the same as
// without it. The framework's and net/http's own goroutines, which never
// run traced code, stay out of the trace.

// setChanHook installs the runtime's channel hook; nil without the patched
// runtime.
var setChanHook func(h func(c unsafe.Pointer, op uint8))

// chanGOffsets are the offsets in the runtime's g of the two fields the
// wrapper reads (racekitChanSkip, racekitGoid), set with setChanHook.
var chanGOffsets [3]uintptr

// installChanHook installs onChan where rt can set the fields the runtime
// filters by (where it finds its g: amd64, arm64).
func installChanHook() {
	if setChanHook != nil && haveGetg && chanGOffsets[0] != 0 && chanGOffsets[1] != 0 {
		setChanHook(onChan)
	}
}

// chanAnnounce tells the runtime's hook that the current goroutine's next
// channel operation is traced code's, recorded by its hooks.
func chanAnnounce() {
	if o := chanGOffsets[0]; o != 0 && haveGetg {
		*(*bool)(unsafe.Add(getg(), o)) = true
	}
}

// chanKnown tells the runtime's hook that rt has a state for the current
// goroutine, whose goid is id.
func chanKnown(id uint64) {
	if o := chanGOffsets[1]; o != 0 && haveGetg {
		*(*uint64)(unsafe.Add(getg(), o)) = id
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
	g := hookG()
	if g == nil {
		return
	}
	a := uint64(uintptr(c))
	switch op {
	case chanSendBegin:
		if g.nfill > 0 {
			g.flushFills() // a send inside a Read: its copy came before (FillW)
		}
		g.edge(trace.OpSyncRelease, 0, a+2)
	case chanSendEnd:
		g.edge(trace.OpSyncAcquire, 0, a+3)
	case chanRecvBegin:
		g.edge(trace.OpSyncRelease, 0, a+3)
	case chanRecvEnd:
		g.edge(trace.OpSyncAcquire, 0, a+2)
	}
}

// hookG is the goroutine a hook of the patched std (onChan, onSync)
// records for: its state while a trace records outside the controlled
// scheduler, or nil (known).
func hookG() *gstate {
	if !on || ctl || !live.Load() {
		return nil
	}
	return known()
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
