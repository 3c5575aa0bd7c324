package rt

import (
	"runtime"
	"unsafe"
	"weak"

	"github.com/racekit/racekit/trace"
)

// Message identity of channel operations (trace.ChanMsg, docs/semantics.md).
//
// The Go runtime numbers nothing: it orders the operations on a channel
// under the channel's private lock, which rt cannot take. What rt can see
// is when an operation began (the hook before it) and when it completed
// (the hook after it). Each channel gets four counters:
//
//	sendStarted  added to by every send's pre hook, before the send
//	sendDone     added to by every send's post hook, after the send
//	recvStarted, recvDone  the same for receives
//
// The k-th send (in the channel's order) satisfies
//
//	sendDone (loaded in its pre hook) + 1  <=  k  <=  sendStarted (loaded in its post hook)
//
// because every send counted in sendDone at the load had completed, so it
// came before this one, and every send that came before this one (and
// this one) had run its pre hook, so it is counted in sendStarted when
// this one's post hook runs. Receives likewise. The recorded range
// [Lo, Hi] therefore always holds the message's number: exact (Lo = Hi)
// when no other operation of the same direction on the channel overlapped
// this one, conservative (a range: the detectors join every message in
// it) when some did. A select's send or receive case that is not chosen
// added to the started counter without an operation: rt takes it back
// when the select is over (the chosen case's post hook, or the goroutine's
// next channel operation after a select with a default), and until then
// it only widens ranges.
//
// A receive that returns because the channel is closed counts as a
// receive: it comes after every message was received, as does every
// receive after it, so counting it only widens ranges of receives that
// get no message.
//
// Channels are told apart by the object, not the address: a channel the
// garbage collector freed and a new one at its address must not share
// counters (the new channel's first receive would claim a number the old
// channel's sends used). The counters of a channel are found through a
// direct-mapped cache checked by a weak pointer to the channel, behind a
// map keyed by weak pointers; a cleanup removes a dead channel's entry.

// chanCount is one channel's counters: a send's on one cache line, a
// receive's on another, so that a sender and a receiver running at once
// do not take the same line from each other at every message.
type chanCount struct {
	sendStarted, sendDone OwnUint64
	_                     [cacheLine - 16]byte
	recvStarted, recvDone OwnUint64
	ctxDone               OwnBool // a context's Done channel (CtxDoneChan)
	ctxMade               OwnBool // a context's Done channel a traced Done call returned (ctxDoneCalled)
	signals               OwnBool // a channel signal.Notify delivers to (SignalNotify)
	_                     [cacheLine - 24]byte
}

// cacheLine is the size of a cache line on the machines Go runs on
// (amd64, arm64: 64 bytes; 128 on some arm64, where this halves the
// sharing).
const cacheLine = 64

// chanSlot is an entry of the direct-mapped cache in front of chanMap:
// never changed once stored, so that a hook reads it with one atomic
// load, where a sender and a receiver of one channel would otherwise
// take turns at a lock per message.
type chanSlot struct {
	wp  weak.Pointer[byte]
	cnt *chanCount
}

var (
	chanSlots [512]OwnPointer[chanSlot]
	chanMu    OwnMutex
	chanMap   = map[weak.Pointer[byte]]*chanCount{}
)

// chanPtr is the runtime pointer of a channel held in an interface (a
// channel is pointer-shaped, so it is the interface's data word).
func chanPtr(c any) unsafe.Pointer { return (*[2]unsafe.Pointer)(unsafe.Pointer(&c))[1] }

// chanHash spreads a channel's address over the direct-mapped tables
// keyed by it (chanSlots, madeChans): channels are 16-byte aligned.
func chanHash(a uint64) uint64 { return a>>4 ^ a>>13 }

// chanCounts returns the counters of channel c, at address a. The first
// time it sees a channel (its first operation, in whichever goroutine) it
// records the channel's allocation at a (site): the memory of a freed
// channel is reused, by objects whose accesses the detectors keep at a. A
// channel the user's code made has had its allocation recorded already by
// MakeChan, in the goroutine that made it, ordered before every other
// goroutine's use (madeChans says so; if its slot was taken over, a second
// allocation here clears nothing of it: no operation preceded it). For one
// the standard library made (a timer's C, a context's Done) it is the only
// one, which leaves another goroutine's access of a at the same time
// unordered with it.
func chanCounts(c any, a uint64, site uint32) *chanCount {
	p := (*byte)(chanPtr(c))
	slot := &chanSlots[chanHash(a)%uint64(len(chanSlots))]
	if s := slot.Load(); s != nil && s.wp.Value() == p {
		return s.cnt
	}
	wp := weak.Make(p)
	chanMu.Lock()
	cnt := chanMap[wp]
	if cnt == nil {
		if !madeChans[madeSlot(a)].CompareAndSwap(a, 0) {
			allocEvent(unsafe.Pointer(p), chanAllocSize, site)
		}
		cnt = new(chanCount)
		chanMap[wp] = cnt
		runtime.AddCleanup(p, func(wp weak.Pointer[byte]) {
			chanMu.Lock()
			delete(chanMap, wp)
			chanMu.Unlock()
		}, wp)
	}
	chanMu.Unlock()
	slot.Store(&chanSlot{wp: wp, cnt: cnt})
	return cnt
}

// chanAllocSize is the extent of a channel's allocation that accesses are
// recorded at: its first word (the access a send or close makes, at a).
const chanAllocSize = 8

// chanCap is the capacity of channel c: the second word of the runtime's
// hchan (qcount, dataqsiz, ...), which make sets and nothing changes after.
func chanCap(c any) uint64 {
	return uint64(*(*uint)(unsafe.Add(chanPtr(c), unsafe.Sizeof(uint(0)))))
}

// msgOp is one channel operation of a goroutine begun (its pre hook ran)
// and not completed.
type msgOp struct {
	a    uint64
	cnt  *chanCount
	lo   uint64
	send bool
}

// msgPending is a goroutine's begun channel operations: one, or a
// select's cases; sealed once SelectWait has passed them.
type msgPending struct {
	ops    []msgOp
	sealed bool
}

// msgIDs reports whether channel events carry their message: not in a
// sampled run, whose edge cache (sync.go's edge) may skip a release.
func msgIDs() bool { return !sampling || ctl }

// cancel takes back the started counts of operations that did not happen.
func (m *msgPending) cancel() {
	for _, o := range m.ops {
		if o.send {
			o.cnt.sendStarted.Add(^uint64(0))
		} else {
			o.cnt.recvStarted.Add(^uint64(0))
		}
	}
	m.ops, m.sealed = m.ops[:0], false
}

// chanPre records the pre hook of a send (send) or receive on channel c,
// at address a, for g (nil: looked up), and returns g. cnt is c's counters
// if the caller has them (chanSeen), else nil.
func chanPre(g *gstate, site uint32, c any, a uint64, send bool, cnt *chanCount) *gstate {
	if !live.Load() {
		return nil
	}
	g = gOr(g)
	obj, op := a, trace.OpSyncRelease
	if !send {
		obj = a + 1
	}
	if !msgIDs() {
		g.edge(op, site, obj)
		chanAnnounce()
		return g
	}
	m := &g.msgs
	if m.sealed {
		m.cancel() // a select that took its default, or a stale case
	}
	if cnt == nil {
		cnt = chanCounts(c, a, site)
	}
	w := trace.MsgOf(trace.MsgRecv)
	if send {
		w = trace.MsgSendOf(chanCap(c))
	}
	g.record(op, trace.FlagMessage, site, obj, uint64(w))
	// After the record (whose seq it follows): a completion recorded
	// before this begin has added to done, so lo exceeds the number of
	// completions before it in the trace, which lets detectors forget
	// the messages no later operation can be about.
	var lo uint64
	if send {
		lo = cnt.sendDone.Load() + 1
		cnt.sendStarted.Add(1)
	} else {
		lo = cnt.recvDone.Load() + 1
		cnt.recvStarted.Add(1)
	}
	m.ops = append(m.ops, msgOp{a: a, cnt: cnt, lo: lo, send: send})
	chanAnnounce()
	return g
}

// chanSeal is SelectWait's part: the cases announced so far belong to one
// select, which is over at the goroutine's next channel hook.
func chanSeal() {
	if live.Load() && msgIDs() {
		if g := cur(); len(g.msgs.ops) > 0 {
			g.msgs.sealed = true
		}
	}
}

// chanPost records the post hook of a send (send) or receive on the
// channel at a, for g (nil: looked up). kind is the receive's outcome
// (MsgRecvd, MsgRecvClosed or MsgRecvAny); a send's is MsgSent.
func chanPost(g *gstate, site uint32, c any, a uint64, send bool, kind trace.MsgKind) {
	if !live.Load() {
		return
	}
	g = gOr(g)
	obj, op := a, trace.OpSyncAcquire
	if send {
		obj = a + 1
	}
	if !msgIDs() {
		g.edge(op, site, obj)
		return
	}
	m := &g.msgs
	var cnt *chanCount
	var lo uint64
	for i := len(m.ops) - 1; i >= 0; i-- {
		if o := m.ops[i]; o.a == a && o.send == send {
			cnt, lo = o.cnt, o.lo
			m.ops = append(m.ops[:i], m.ops[i+1:]...)
			break
		}
	}
	m.cancel() // a select's other cases
	if cnt == nil {
		cnt = chanCounts(c, a, site) // no pre hook seen: an unknown number
	}
	var hi uint64
	if send {
		hi = cnt.sendStarted.Load()
		cnt.sendDone.Add(1)
	} else {
		hi = cnt.recvStarted.Load()
		cnt.recvDone.Add(1)
	}
	var w trace.ChanMsg
	if kind == trace.MsgRecvClosed {
		w = trace.MsgOf(kind)
	} else {
		w = trace.MsgRange(kind, lo, hi) // lo 0: wide
	}
	g.record(op, trace.FlagMessage, site, obj, uint64(w))
}

// chanSeen is called before the access a send or close makes of channel c
// at a, so that the channel's allocation precedes it (chanCounts); it
// returns c's counters, nil when channel events carry no message.
func chanSeen(c any, a uint64, site uint32) *chanCount {
	if !live.Load() {
		return nil
	}
	cnt := chanCounts(c, a, site)
	if !msgIDs() {
		return nil
	}
	return cnt
}

// chanClose records close of the channel at a.
func chanClose(site uint32, a uint64) {
	if !live.Load() {
		return
	}
	if !msgIDs() {
		emitEdge(trace.OpSyncRelease, site, a)
		return
	}
	g := cur()
	if g.msgs.sealed {
		g.msgs.cancel()
	}
	g.record(trace.OpSyncRelease, trace.FlagMessage, site, a, uint64(trace.MsgOf(trace.MsgClose)))
}
