package clock

import (
	"slices"

	"github.com/racekit/racekit/detect/vc"
	"github.com/racekit/racekit/trace"
)

// Channel events with their message (trace.FlagMessage, trace.ChanMsg)
// get the Go memory model's edges per message (docs/semantics.md):
//
//   - the k-th send → the completion of the k-th receive;
//   - close → a receive that returns because the channel is closed;
//   - the k-th receive → the completion of the (k+C)-th send, C the
//     channel's capacity (C = 0: the receive → its own send's completion).
//
// A send or receive is two events, its begin (snd, C_t at the operation)
// and its completion (rcv). Between them the operation is pending: a
// completion of the other direction on the channel may come first in the
// trace (an unbuffered send completes with its receive), so a completion
// joins, besides the messages of its range, the clock of every operation
// of the other direction still pending (one of them may be its partner).
// A completion whose message number is not known (a wide range, no begin
// seen) joins every begin of the other direction so far: the merged
// reading. Every edge is one the memory model has, or more: races may be
// missed, none invented.
//
// The begin events also publish into the object's merged clock S_o (snd
// on c for sends and close, on c+1 for receives), so a reader of the same
// objects without messages stays sound.

// maxRange bounds the message numbers a range is read as; a wider one is
// read as unknown.
const maxRange = 64

// maxMsgs bounds a channel's per-message clocks kept; beyond it they are
// folded into the channel's wide clocks (more order, never less).
const maxMsgs = 4096

// maxMsgBytes bounds the memory of all channels' per-message clocks
// together: past it, a channel that adds one folds all of its own into its
// wide clocks (Counters.ChanFolds). A receive's clock R[k] waits for the
// (k+C)-th send, which a channel of large capacity may never see:
// thousands of such channels, each holding its receives' clocks at the
// width of thousands of goroutines, took the analysis past the machine's
// memory (watermill's gochannel tests). A message clock shares the chunks
// of its goroutine's clock (vc.Shared): it is counted at what it adds,
// vc.SharedBytes, a lower bound (a chunk the goroutine has moved on from
// stays with it). A variable for the tests.
var maxMsgBytes int64 = 1 << 28

// MaxMsgBytes is the bound on all channels' per-message clocks, in bytes,
// for the analysis' warning.
func MaxMsgBytes() int64 { return maxMsgBytes }

// maxFree bounds the completed operations' clocks kept for reuse.
const maxFree = 1024

// chanState is one channel's message clocks.
type chanState struct {
	msgs     msgQueue  // M[k]: the clock of the send of message k
	rcvs     msgQueue  // R[k]: the clock of the k-th receive
	wideSend vc.Shared // sends whose number is unknown: every receive joins it
	wideRecv vc.Shared // receives whose number is unknown: every send completion joins it
	closed   vc.Shared // the close
	pend     []pendOp  // begun, not completed
	sends    uint64    // send completions seen
	recvs    uint64    // receive completions seen
	cap      uint64    // the capacity its sends gave
	limit    int       // sweep past this many clocks
}

// pendOp is a begun channel operation.
type pendOp struct {
	t    *Thread
	send bool
	cap  uint64
	done uint64    // completions of its direction seen before it
	c    vc.Shared // C_t at the operation
}

func (k *Tracker) chanOf(ch uint64) *chanState {
	s := k.chans.Get(ch)
	if *s == nil {
		*s = &chanState{}
	}
	return *s
}

// Message reports whether e is a channel event with a valid message, which
// the Tracker reads per message (others are read merged).
func Message(e *trace.Event) bool {
	return e.Flags&trace.FlagMessage != 0 && (e.Op == trace.OpSyncRelease || e.Op == trace.OpSyncAcquire) && e.Validate() == nil
}

// Incoming is the clock the last message completion (a rcv with
// trace.FlagMessage) joined into its goroutine's clock: what reached it
// over the channel. It is the Tracker's own, valid until the next event.
func (k *Tracker) Incoming() vc.VectorClock {
	k.inFlat = k.in.FlatInto(k.inFlat)
	return k.inFlat
}

// dropPending forgets t's begun channel operations: t went on, so each
// one completed (and was resolved) or was a select case not chosen.
func (k *Tracker) dropPending(t *Thread) {
	for _, s := range t.pendOn {
		ps := s.pend[:0]
		for _, p := range s.pend {
			if p.t == t {
				k.reuse(p.c)
			} else {
				ps = append(ps, p)
			}
		}
		clear(s.pend[len(ps):])
		s.pend = ps
	}
	t.pendOn = t.pendOn[:0]
}

// dropPendingThrough forgets t's begun operations up to and including its
// latest one on s (none if it has none on s). t.pendOn lists them in the order begun, and each
// channel's pend list keeps t's in that order too, so each entry of
// t.pendOn up to that one is t's earliest remaining operation on its
// channel.
func (k *Tracker) dropPendingThrough(t *Thread, s *chanState) {
	last := -1
	for i, q := range t.pendOn {
		if q == s {
			last = i
		}
	}
	for _, q := range t.pendOn[:last+1] {
		for i, p := range q.pend {
			if p.t == t {
				k.reuse(p.c)
				q.pend = slices.Delete(q.pend, i, i+1)
				break
			}
		}
	}
	n := copy(t.pendOn, t.pendOn[last+1:])
	clear(t.pendOn[n:])
	t.pendOn = t.pendOn[:n]
}

// takePending removes and returns t's latest begun operation of the given
// direction on s (ok false: none).
func (k *Tracker) takePending(t *Thread, s *chanState, send bool) (p pendOp, ok bool) {
	for i := len(s.pend) - 1; i >= 0; i-- {
		if q := s.pend[i]; q.t == t && q.send == send {
			s.pend = append(s.pend[:i], s.pend[i+1:]...)
			return q, true
		}
	}
	return pendOp{}, false
}

// message applies a channel event with its message.
func (k *Tracker) message(t *Thread, e *trace.Event) {
	m := trace.ChanMsg(e.Value)
	kind := m.Kind()
	s := k.chanOf(e.Obj &^ 1)
	switch kind {
	case trace.MsgSend, trace.MsgRecv:
		if !t.inSelect {
			k.dropPending(t)
		} else {
			// A select that took its default, long done: t begins
			// again on a channel it had begun on (a loop of selects
			// with a default and only accesses between records no
			// other sync event, and its begun cases grew without
			// bound: go-co-op/gocron's tests). Only that select's
			// cases and earlier ones go: the cases of this select
			// begun before this one stay (dropping them lost a send's
			// edge to its receive: fasthttp's InmemoryListener, whose
			// dialer tries `select { case <-done: default: }` and then
			// `select { case conns <- c: case <-done: }`).
			k.dropPendingThrough(t, s)
		}
		var c vc.Shared
		if n := len(k.free); n > 0 {
			c, k.free = k.free[n-1], k.free[:n-1]
		}
		t.image().CopyTo(&c, t.c)
		done := s.recvs
		if kind == trace.MsgSend {
			done, s.cap = s.sends, m.Cap()
		}
		s.pend = append(s.pend, pendOp{t: t, send: kind == trace.MsgSend, cap: m.Cap(), done: done, c: c})
		t.pendOn = append(t.pendOn, s)
		t.inSelect = true
		k.releaseTo(t, objClock(&k.syncs, e.Obj))
		t.tick()
		return
	case trace.MsgClose:
		k.dropPending(t)
		t.inSelect = false
		t.image().JoinTo(&s.closed, t.c)
		k.releaseTo(t, objClock(&k.syncs, e.Obj))
		t.tick()
		return
	}

	// A completion.
	t.inSelect = false
	send := kind == trace.MsgSent
	if send {
		s.sends++
	} else {
		s.recvs++
	}
	p, begun := k.takePending(t, s, send)
	k.dropPending(t) // a select's other cases
	lo, hi, known := m.Range()
	if known && hi-lo >= maxRange {
		known = false
	}
	in := &k.in
	in.Release() // its chunks, copies (JoinCopy), go to the next message
	if send {
		// The receives synchronized before this completion: receive j
		// for j in [lo-C, hi-C], and any still pending.
		if known && begun {
			for j := max(lo, p.cap+1) - p.cap; j+p.cap <= hi; j++ {
				in.JoinCopy(s.rcvs.get(j))
			}
		} else {
			in.JoinCopy(objClock(&k.syncs, e.Obj).c) // every receive begun
		}
		in.JoinCopy(s.wideRecv)
		for _, q := range s.pend {
			// A pending receive is receive j > q.done: needed if j+C
			// may be this send's number.
			if !q.send && (!known || !begun || hi > q.done+p.cap) {
				in.JoinCopy(q.c)
			}
		}
		switch {
		case !begun:
			t.image().JoinTo(&s.wideSend, t.c) // no begin seen: publish the clock it had
		case known:
			if !s.msgs.fits(lo) || !s.msgs.fits(hi) {
				s.msgs.foldInto(&s.wideSend, k.freeClock)
			}
			k.putMsgs(&s.msgs, lo, hi, &p.c)
			k.fold(s)
		default:
			s.wideSend.Join(p.c)
		}
	} else {
		if kind != trace.MsgRecvClosed {
			if known {
				for j := lo; j <= hi; j++ {
					in.JoinCopy(s.msgs.get(j))
				}
			} else {
				in.JoinCopy(objClock(&k.syncs, e.Obj).c) // every send begun
			}
			in.JoinCopy(s.wideSend)
			for _, q := range s.pend {
				// A pending send is message j > q.done.
				if q.send && (!known || hi > q.done) {
					in.JoinCopy(q.c)
				}
			}
		}
		if kind != trace.MsgRecvd {
			in.JoinCopy(s.closed)
		}
		switch {
		case kind == trace.MsgRecvClosed:
		case !begun:
			t.image().JoinTo(&s.wideRecv, t.c) // no begin seen: publish the clock it had
		case known:
			if !s.rcvs.fits(lo) || !s.rcvs.fits(hi) {
				s.rcvs.foldInto(&s.wideRecv, k.freeClock)
			}
			k.putMsgs(&s.rcvs, lo, hi, &p.c)
			k.fold(s)
		default:
			s.wideRecv.Join(p.c)
		}
	}
	if begun && p.c.Len() > 0 { // not a clock the queue took: a new handle would make a new token
		k.reuse(p.c)
	}
	if old := t.cver; t.c.JoinShared(*in, &t.img) {
		k.learnt(t)
		t.img.Advance(old, t.cver) // the chunks it changed are noted
	}
	t.refresh()
}

// fold bounds s's per-message clocks. A completion's Lo exceeds the
// completions of its direction before its begin in the trace
// (trace.ChanMsg), so message k can be about no later receive once k is
// at most the receives completed before every pending or later receive
// began, and R[j] about no later send once j+C is at most the same count
// of sends. Past maxMsgs clocks still needed, or past maxMsgBytes for
// all channels, they are merged into the wide clocks (each then orders
// every later operation: more order, never less).
func (k *Tracker) fold(s *chanState) {
	over := k.msgsOver()
	if !over && s.msgs.n+s.rcvs.n <= max(s.limit, 64) {
		return
	}
	fs, fr := s.sends, s.recvs
	for _, p := range s.pend {
		if p.send {
			fs = min(fs, p.done)
		} else {
			fr = min(fr, p.done)
		}
	}
	s.msgs.dropThrough(fr, k.freeClock)
	if fs >= s.cap {
		s.rcvs.dropThrough(fs-s.cap, k.freeClock)
	}
	over = over && k.msgsOver()
	if over && s.msgs.n+s.rcvs.n > 0 {
		k.chanFolds++
	}
	if over || s.msgs.n > maxMsgs {
		s.msgs.foldInto(&s.wideSend, k.freeClock)
	}
	if over || s.rcvs.n > maxMsgs {
		s.rcvs.foldInto(&s.wideRecv, k.freeClock)
	}
	s.limit = 2 * (s.msgs.n + s.rcvs.n)
}

// restartChan returns the state of a channel made at the address of s's
// channel: numbered from 1 again, its counts at zero, with every clock s
// held for a later operation kept in its wide clocks, which every later
// operation joins. An alloc event may come late: rt writes an allocation
// of untraced code at its goroutine's next event (rt/mallochook.go), so
// an object that died long ago is "allocated" at the address of a live
// channel after that channel's send and before its receive
// (modelcontextprotocol/go-sdk; TestLateAllocKeepsChannelMessage). Its
// messages' clocks then still order that receive; dropping them was a
// false race. For a channel really made anew, they add edges from the
// dead one's operations: races hidden, none invented.
func (k *Tracker) restartChan(s *chanState) *chanState {
	n := &chanState{}
	s.msgs.foldInto(&n.wideSend, k.freeClock)
	s.rcvs.foldInto(&n.wideRecv, k.freeClock)
	n.wideSend.Join(s.wideSend)
	n.wideRecv.Join(s.wideRecv)
	n.closed.Join(s.closed)
	for _, p := range s.pend {
		// Begun before the alloc: their completions find no begin in n
		// (a wide publication); their partners must still see them.
		if p.send {
			n.wideSend.Join(p.c)
		} else {
			n.wideRecv.Join(p.c)
		}
	}
	return n
}

// msgsOver reports whether all channels' per-message clocks, at the
// current clock width, pass maxMsgBytes.
func (k *Tracker) msgsOver() bool {
	return k.msgClocks*vc.SharedBytes(len(k.threads)) > maxMsgBytes
}

// freeClock takes back a per-message clock that fold removed.
func (k *Tracker) freeClock(c vc.Shared) {
	k.msgClocks--
	k.reuse(c)
}

// reuse keeps c's storage for a later operation's clock, up to maxFree.
func (k *Tracker) reuse(c vc.Shared) {
	c.Release()
	if len(k.free) < maxFree {
		k.free = append(k.free, c)
	}
}

// msgQueue holds a channel's clocks of one kind by message number: the
// numbers a channel's operations give are dense and fold drops them from
// the low end, so a window of consecutive numbers in a ring holds them
// (a map cost a hash and an allocation per message: most of the channel
// work on a trace of buffered channels carrying a hundred thousand
// messages, prometheus/client_golang's concurrency tests).
type msgQueue struct {
	lo   uint64      // the number of ring[head]
	ring []vc.Shared // power-of-two length; the clock of message lo+i at (head+i)&mask; ⊥ (Len 0): none
	head int
	span int // numbers lo .. lo+span-1 are in the window
	n    int // clocks held (not ⊥)
}

// get is the clock of message j (⊥: none).
func (q *msgQueue) get(j uint64) vc.Shared {
	if j < q.lo || j-q.lo >= uint64(q.span) {
		return vc.Shared{}
	}
	return q.ring[(q.head+int(j-q.lo))&(len(q.ring)-1)]
}

// maxSpan bounds a message queue's window. Message numbers are dense and
// leave the window from below, so it spans about the clocks it holds
// (at most maxMsgs); numbers that start again (a channel made again at
// the address of one, in a trace without its allocation) or jump would
// widen it without bound: its clocks are folded first.
const maxSpan = 4 * maxMsgs

// fits reports whether message j can join the window within maxSpan.
func (q *msgQueue) fits(j uint64) bool {
	switch {
	case q.span == 0:
		return true
	case j < q.lo:
		return q.lo-j+uint64(q.span) <= maxSpan
	}
	return j-q.lo < maxSpan
}

// joinAt joins c into message j's clock and reports whether j had none.
func (q *msgQueue) joinAt(j uint64, c vc.Shared) bool {
	w := q.slot(j)
	had := w.Len() > 0
	w.Join(c)
	if had || w.Len() == 0 {
		return false
	}
	q.n++
	return true
}

// putMsgs joins c into the clocks of messages lo..hi of q. One message
// with no clock yet takes c itself, which is then the queue's (c is left
// empty): no copy, no chunk shared and frozen (takeAt).
func (k *Tracker) putMsgs(q *msgQueue, lo, hi uint64, c *vc.Shared) {
	if lo == hi && q.takeAt(lo, *c) {
		k.msgClocks++
		*c = vc.Shared{}
		return
	}
	for j := lo; j <= hi; j++ {
		if q.joinAt(j, *c) {
			k.msgClocks++
		}
	}
}

// slot returns message j's clock in the ring, the window widened to j.
func (q *msgQueue) slot(j uint64) *vc.Shared {
	if q.span == 0 {
		q.lo, q.head = j, 0
	}
	if j < q.lo {
		q.prepend(q.lo - j)
	}
	if i := j - q.lo; i >= uint64(q.span) {
		q.extend(int(i) + 1)
	}
	return &q.ring[(q.head+int(j-q.lo))&(len(q.ring)-1)]
}

// takeAt makes c message j's clock when j fits the window and has no
// clock yet, and reports whether it did: c is then the queue's, neither
// copied nor shared, so that its chunks can be reused when j is dropped
// (freeClock, vc.Shared.Release).
func (q *msgQueue) takeAt(j uint64, c vc.Shared) bool {
	if c.Len() == 0 || !q.fits(j) {
		return false
	}
	w := q.slot(j)
	if w.Len() > 0 {
		return false
	}
	*w = c
	q.n++
	return true
}

// extend makes the window span numbers lo .. lo+span-1.
func (q *msgQueue) extend(span int) {
	q.reserve(span)
	q.span = span
}

// prepend moves lo down by d, the new numbers empty.
func (q *msgQueue) prepend(d uint64) {
	q.reserve(q.span + int(d))
	q.head = (q.head - int(d)) & (len(q.ring) - 1)
	q.lo -= d
	q.span += int(d)
}

// reserve makes the ring hold at least n slots, in window order.
func (q *msgQueue) reserve(n int) {
	if n <= len(q.ring) {
		return
	}
	size := max(16, len(q.ring))
	for size < n {
		size *= 2
	}
	r := make([]vc.Shared, size)
	for i := range q.span {
		r[i] = q.ring[(q.head+i)&(len(q.ring)-1)]
	}
	q.ring, q.head = r, 0
}

// dropThrough hands every clock of a message numbered at most j to free
// and removes it.
func (q *msgQueue) dropThrough(j uint64, free func(vc.Shared)) {
	for q.span > 0 && q.lo <= j {
		c := &q.ring[q.head]
		if c.Len() > 0 {
			free(*c)
			q.n--
		}
		*c = vc.Shared{}
		q.head = (q.head + 1) & (len(q.ring) - 1)
		q.lo++
		q.span--
	}
	if q.span == 0 {
		q.head = 0
	}
}

// foldInto joins every clock held into w, hands each to free and empties
// the queue.
func (q *msgQueue) foldInto(w *vc.Shared, free func(vc.Shared)) {
	for i := range q.span {
		if c := q.ring[(q.head+i)&(len(q.ring)-1)]; c.Len() > 0 {
			w.Join(c)
		}
	}
	q.dropThrough(q.lo+uint64(q.span)-1, free)
}
