package rt

import (
	"unsafe"

	"github.com/racekit/racekit/trace"
)

// Channels. A channel c gives two sync objects: c itself (its runtime
// pointer) carries the edges from senders to receivers, and c+1 (never
// another object's address: a channel is word-aligned) the edges from
// receivers back to senders, which the Go memory model has for unbuffered
// channels (a receive is synchronized before the send completes) and for
// buffered ones (the k-th receive before the (k+C)-th send completes):
//
//	send:    snd(c) before the send, rcv(c+1) after it
//	receive: snd(c+1) before the receive, rcv(c) after it
//	close:   snd(c) before the close
//
// Each event carries its message (trace.FlagMessage, a trace.ChanMsg:
// chanmsg.go says how the numbers are taken and why they hold), so that
// detectors pair the k-th send with the k-th receive, as the memory model
// does. A reader that ignores the message merges every release of an
// object: a receive is ordered after every send recorded before it, an
// over-approximation (races may be missed, none invented). In a sampled
// run the events carry no message and are read that way.

// chanAddr is chanPtr as an address.
func chanAddr(c any) uint64 { return uint64(uintptr(chanPtr(c))) }

// SendPreG is recorded before a send on c. A send also reads the channel
// (and close writes it), so that a send racing with a close is reported,
// as by the Go race detector; rec is the enclosing frame's decision for
// that access, as the access hooks take it. g is the goroutine's state as
// EnterG returned it (nil: looked up). It returns the state, for SendPost.
func SendPreG(c any, site uint32, rec bool, g *gstate) *gstate {
	if ctl { // controlled mode (sched.go)
		ctlSend(c, site)
	}
	if on {
		if a := chanAddr(c); a != 0 {
			var cnt *chanCount
			if rec {
				cnt = chanSeen(c, a, site)
				accessAddr(trace.OpRead, a, 1, site)
			}
			return chanPre(g, site, c, a, true, cnt)
		}
		blockIn(g, unsafe.Pointer(&nilChan), site, trace.BlockNilSend) // blocks forever
	}
	return nil
}

// nilChan stands, in a goroutine's block note (blockIn), for the nil
// channel a send or receive statement blocks on forever (a select's nil
// case is not one: the hooks of selects do not note it).
var nilChan byte

// nilRecv notes a receive statement from a nil channel, which blocks
// forever.
func nilRecv(site uint32, g *gstate) {
	if on {
		blockIn(g, unsafe.Pointer(&nilChan), site, trace.BlockNilRecv)
	}
}

// SelectSendPre is recorded before a select with a send case on c. The
// select reads the channel whether or not the case is chosen, as the Go
// race detector records it (selectgo's first pass reads the channel of
// every send case it looks at before it checks for a close), so that a
// select whose send case panics on a channel closed concurrently reports
// the race with the close; rec is the enclosing frame's decision for that
// access.
func SelectSendPre(c any, site uint32, rec bool) {
	if ctl { // controlled mode (sched.go)
		ctlSelect(c, site, true)
	}
	if on {
		if a := chanAddr(c); a != 0 {
			var cnt *chanCount
			if rec {
				cnt = chanSeen(c, a, site)
				accessAddr(trace.OpRead, a, 1, site)
			}
			chanPre(nil, site, c, a, true, cnt)
		}
	}
}

// SelectWait is called after a select's cases were announced (RecvPre,
// SelectSendPre) and before the select; def tells whether it has a
// default. In controlled mode it decides which case proceeds (sched.go's
// ctlSelectWait), or parks the goroutine when none can: the result is
// passed to SelectCase for each case. Otherwise it returns -1.
func SelectWait(def bool) int {
	if on {
		chanSeal()
	}
	if ctl { // controlled mode (sched.go)
		return ctlSelectWait(def)
	}
	return -1
}

// SelectCase is the channel of case i of a select: nil (a case that
// cannot proceed) unless SelectWait chose i or let the select choose (-1).
func SelectCase[C any](c C, i, chosen int) C {
	if chosen != -1 && chosen != i {
		var none C
		return none
	}
	return c
}

// SelectSendPost is recorded when a select's send case on c was chosen
// (SelectSendPre read the channel).
func SelectSendPost(c any, site uint32) {
	if ctl { // controlled mode (sched.go)
		ctlResume(site)
	}
	if on {
		if a := chanAddr(c); a != 0 {
			chanPost(nil, site, c, a, true, trace.MsgSent)
		}
	}
}

// SendPost is recorded after a send on c completes; g is what SendPreG
// returned.
func SendPost(c any, site uint32, g *gstate) {
	if ctl { // controlled mode (sched.go)
		ctlResume(site)
	}
	if on {
		if a := chanAddr(c); a != 0 {
			chanPost(g, site, c, a, true, trace.MsgSent)
		}
	}
}

// RecvPre is recorded before a receive from c (and before a select with a
// receive case on c). It returns the goroutine's state for RecvPost, as
// SendPreG does.
func RecvPre(c any, site uint32) *gstate { return RecvPreG(c, site, nil) }

// RecvPreG is RecvPre with the goroutine's state as EnterG returned it.
func RecvPreG(c any, site uint32, g *gstate) *gstate {
	if ctl { // controlled mode (sched.go)
		ctlSelect(c, site, false) // a select case; Recv made its own point
	}
	if on {
		if a := chanAddr(c); a != 0 {
			return chanPre(g, site, c, a, false, nil)
		}
	}
	return nil
}

// RecvPost is recorded after a receive from c completes; g is what
// RecvPre returned (nil in a select's case). It does not know whether the
// receive got a message or returned because c is closed.
func RecvPost(c any, site uint32, g *gstate) { recvPost(c, site, g, trace.MsgRecvAny) }

// RecvPostOK is RecvPost for a receive v, ok := <-c whose ok it is given
// (a range over c, the statement <-c).
func RecvPostOK(c any, site uint32, g *gstate, ok bool) { recvPost(c, site, g, recvKind(ok)) }

// recvPost is RecvPost knowing the receive's outcome, kind.
func recvPost(c any, site uint32, g *gstate, kind trace.MsgKind) {
	if ctl { // controlled mode (sched.go)
		ctlResume(site)
	}
	if on {
		if a := chanAddr(c); a != 0 {
			chanPost(g, site, c, a, false, kind)
			if kind != trace.MsgRecvd && doneKept.Load() && live.Load() && chanCounts(c, a, site).ctxDone.Load() {
				CtxDone(site) // a context's cancel closed it, inside package context
				ctxDoneSeen(a, site)
			}
			if kind != trace.MsgRecvClosed && sigKept.Load() && live.Load() && chanCounts(c, a, site).signals.Load() {
				emitEdge(trace.OpSyncAcquire, site, sigObj) // a signal os/signal delivered (signal.go)
			}
		}
	}
}

// recvKind is the outcome of a receive that returned ok.
func recvKind(ok bool) trace.MsgKind {
	if ok {
		return trace.MsgRecvd
	}
	return trace.MsgRecvClosed
}

// RecvRangeG is RecvPreG for each receive of a range over a channel (the
// loop's init and post statements) and for the statement <-c: the
// controlled scheduler's point of a receive, then RecvPreG.
func RecvRangeG(c any, site uint32, g *gstate) *gstate {
	if ctl { // controlled mode (sched.go)
		ctlRecv(c, site)
	}
	g = RecvPreG(c, site, g)
	if chanAddr(c) == 0 {
		nilRecv(site, g) // last: it blocks forever
	}
	return g
}

// Recv is the expression <-c.
func Recv[C ~chan E | ~<-chan E, E any](c C, site uint32) E { return RecvG(c, site, nil) }

// RecvG is Recv with the goroutine's state as EnterG returned it.
func RecvG[C ~chan E | ~<-chan E, E any](c C, site uint32, g *gstate) E {
	if ctl { // controlled mode (sched.go)
		ctlRecv(c, site)
	}
	g = RecvPreG(c, site, g)
	if c == nil {
		nilRecv(site, g) // last: it blocks forever
	}
	v, ok := <-c
	recvPost(c, site, g, recvKind(ok))
	return v
}

// Recv2 is the expression v, ok := <-c.
func Recv2[C ~chan E | ~<-chan E, E any](c C, site uint32) (E, bool) { return Recv2G(c, site, nil) }

// Recv2G is Recv2 with the goroutine's state as EnterG returned it.
func Recv2G[C ~chan E | ~<-chan E, E any](c C, site uint32, g *gstate) (E, bool) {
	if ctl { // controlled mode (sched.go)
		ctlRecv(c, site)
	}
	g = RecvPreG(c, site, g)
	if c == nil {
		nilRecv(site, g) // last: it blocks forever
	}
	v, ok := <-c
	recvPost(c, site, g, recvKind(ok))
	return v, ok
}

// Close is close(c): a write of the channel, then a release.
func Close[C ~chan E | ~chan<- E, E any](c C, site uint32, rec bool) {
	closePre(c, site, rec)
	close(c)
}

// closePre is what Close records before the close of c: its point under
// the controlled scheduler, the channel's write and the close's release.
func closePre(c any, site uint32, rec bool) {
	if ctl { // controlled mode (sched.go)
		ctlClose(c, site)
	}
	if on {
		if a := chanAddr(c); a != 0 {
			if rec {
				chanSeen(c, a, site)
				accessAddr(trace.OpWrite, a, 1, site)
			}
			chanClose(site, a)
		}
	}
}
