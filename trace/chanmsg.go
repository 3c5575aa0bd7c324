package trace

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ChanMsg is the Value of a channel event with FlagMessage: which step of
// a channel operation the event is and which messages of the channel it
// may be about. Messages are numbered 1, 2, ... per channel in the
// channel's own (FIFO) order: the k-th receive gets the k-th send's
// message. A recorder cannot always see the number exactly (the Go runtime
// orders concurrent operations under the channel's private lock), so a
// completed operation carries a range [Lo, Hi] that holds its number.
//
// A channel c (an address) is recorded as today's two sync objects, c and
// c+1, so a reader that ignores FlagMessage reads the release-merge
// edges of docs/semantics.md:
//
//	send:    snd(c)   MsgSend, Cap = the channel's capacity
//	         ... the send ...
//	         rcv(c+1) MsgSent, [Lo, Hi] its message number
//	receive: snd(c+1) MsgRecv
//	         ... the receive ...
//	         rcv(c)   MsgRecvd (a message, number in [Lo, Hi]),
//	                  MsgRecvClosed (returned because the channel is closed),
//	                  or MsgRecvAny (either: the recorder did not see ok)
//	close:   snd(c)   MsgClose
//
// A recorder also guarantees: the Lo of a completion is greater than the
// number of completions of the same direction on the channel that come
// before its begin in the trace (so detectors can forget messages no later
// operation can be about).
//
// Layout: the kind in bits 61-63; MsgSend's Cap in bits 0-60; a range as
// Lo in bits 21-60 and Hi-Lo in bits 0-20. Width MsgWide (Hi-Lo = 2^21-1,
// or Lo = 0) means the number is not known: readers then use the merged
// reading for that event.
type ChanMsg uint64

// MsgKind is the step of a channel operation a ChanMsg event records.
type MsgKind uint8

const (
	MsgNone       MsgKind = iota
	MsgSend               // snd(c) before a send
	MsgSent               // rcv(c+1) after a send completed
	MsgRecv               // snd(c+1) before a receive
	MsgRecvd              // rcv(c) after a receive that got a message
	MsgRecvClosed         // rcv(c) after a receive that returned because c is closed
	MsgRecvAny            // rcv(c) after a receive of either kind
	MsgClose              // snd(c) before close(c)
)

const (
	// MsgKindShift and MsgLoShift place a word's kind and a range's Lo
	// (the layout above; trace/rkt's version 5 encoding splits a word by
	// them).
	MsgKindShift = 61
	MsgLoShift   = 21
	// MsgWide is the width (Hi-Lo) that stands for "any message".
	MsgWide = 1<<MsgLoShift - 1
	// MsgMaxLo is the largest Lo a range can hold.
	MsgMaxLo = 1<<(MsgKindShift-MsgLoShift) - 1
	// MsgMaxCap is the largest capacity a MsgSend holds; a larger one is
	// recorded as MsgMaxCap (a smaller capacity only adds edges).
	MsgMaxCap = 1<<MsgKindShift - 1
)

var msgNames = [...]string{MsgSend: "send", MsgSent: "sent", MsgRecv: "recv", MsgRecvd: "recvd",
	MsgRecvClosed: "closed", MsgRecvAny: "recv?", MsgClose: "close"}

// String is the kind's name in racekit text.
func (k MsgKind) String() string {
	if k > MsgNone && int(k) < len(msgNames) {
		return msgNames[k]
	}
	return fmt.Sprintf("msg(%d)", uint8(k))
}

// Release reports whether events of kind k are SyncReleases (the others
// are SyncAcquires).
func (k MsgKind) Release() bool { return k == MsgSend || k == MsgRecv || k == MsgClose }

// ReverseObj reports whether events of kind k are on c+1, the object of
// edges from receivers back to senders (MsgRecv, MsgSent): Obj-1 is then
// the channel.
func (k MsgKind) ReverseObj() bool { return k == MsgRecv || k == MsgSent }

// Ranged reports whether events of kind k carry a message range.
func (k MsgKind) Ranged() bool { return k == MsgSent || k == MsgRecvd || k == MsgRecvAny }

// MsgSendOf is the word of MsgSend on a channel of capacity cap.
func MsgSendOf(cap uint64) ChanMsg {
	return ChanMsg(uint64(MsgSend)<<MsgKindShift | min(cap, MsgMaxCap))
}

// MsgOf is the word of a kind without a range or capacity (MsgRecv,
// MsgRecvClosed, MsgClose).
func MsgOf(k MsgKind) ChanMsg { return ChanMsg(uint64(k) << MsgKindShift) }

// MsgRange is the word of a ranged kind whose message number is in
// [lo, hi]: wide (unknown) when lo is 0, hi < lo, or the range does not
// fit.
func MsgRange(k MsgKind, lo, hi uint64) ChanMsg {
	w := uint64(MsgWide)
	if lo >= 1 && lo <= MsgMaxLo && hi >= lo && hi-lo < MsgWide {
		w = hi - lo
	} else {
		lo = 0
	}
	return ChanMsg(uint64(k)<<MsgKindShift | lo<<MsgLoShift | w)
}

// Kind is the word's kind.
func (m ChanMsg) Kind() MsgKind { return MsgKind(m >> MsgKindShift) }

// Cap is a MsgSend's channel capacity.
func (m ChanMsg) Cap() uint64 { return uint64(m) & MsgMaxCap }

// Range is a ranged word's message numbers [lo, hi]; ok is false when the
// number is not known (wide).
func (m ChanMsg) Range() (lo, hi uint64, ok bool) {
	w := uint64(m) & MsgWide
	lo = uint64(m) >> MsgLoShift & MsgMaxLo
	if w == MsgWide || lo == 0 {
		return 0, 0, false
	}
	return lo, lo + w, true
}

// check reports a word that op cannot carry.
func (m ChanMsg) check(op Op) error {
	k, pay := m.Kind(), uint64(m)&MsgMaxCap
	switch {
	// The valid words, first: a send's, a payload-less one, a range (or
	// the wide one) of a completion.
	case k == MsgSend:
		if op == OpSyncRelease {
			return nil
		}
	case k == MsgRecv || k == MsgClose:
		if op == OpSyncRelease && pay == 0 {
			return nil
		}
	case k == MsgRecvClosed:
		if op == OpSyncAcquire && pay == 0 {
			return nil
		}
	case k.Ranged():
		if op == OpSyncAcquire && (pay&MsgWide != MsgWide && pay>>MsgLoShift != 0 || pay == MsgWide) {
			return nil
		}
	}
	return m.invalid(k, op)
}

// invalid says why m, of kind k, is not a word op can carry (nil: it is
// one; check's fast path accepts no other).
func (m ChanMsg) invalid(k MsgKind, op Op) error {
	if k == MsgNone {
		return fmt.Errorf("message word %#x has no kind", uint64(m))
	}
	if k.Release() != (op == OpSyncRelease) {
		return fmt.Errorf("message %s on %s", k, op)
	}
	if !k.Ranged() && k != MsgSend && uint64(m)&MsgMaxCap != 0 {
		return fmt.Errorf("message %s with a payload %#x", k, uint64(m)&MsgMaxCap)
	}
	if k.Ranged() {
		if _, _, ok := m.Range(); !ok && uint64(m)&MsgMaxCap != MsgWide {
			return fmt.Errorf("message %s with a malformed range %#x", k, uint64(m)&MsgMaxCap)
		}
	}
	return nil
}

// String is the word in racekit text: send/C, sent/LO-HI, recv, recvd/LO-HI,
// closed, recv?/LO-HI, close; a wide range is written *.
func (m ChanMsg) String() string {
	k := m.Kind()
	switch {
	case k == MsgSend:
		return "send/" + strconv.FormatUint(m.Cap(), 10)
	case k.Ranged():
		lo, hi, ok := m.Range()
		if !ok {
			return k.String() + "/*"
		}
		if lo == hi {
			return k.String() + "/" + strconv.FormatUint(lo, 10)
		}
		return k.String() + "/" + strconv.FormatUint(lo, 10) + "-" + strconv.FormatUint(hi, 10)
	}
	return k.String()
}

// ParseChanMsg parses String's form (a range may be a single number K for
// K-K); op is the event's op, which the kind must match.
func ParseChanMsg(s string, op Op) (ChanMsg, error) {
	name, arg, hasArg := strings.Cut(s, "/")
	k := MsgNone
	for i, n := range msgNames {
		if n == name && i > 0 {
			k = MsgKind(i)
		}
	}
	bad := func(why string) (ChanMsg, error) {
		return 0, fmt.Errorf("bad message %q: %s", s, why)
	}
	if k == MsgNone {
		return bad("expected send/CAP, sent/LO-HI, recv, recvd/LO-HI, closed, recv?/LO-HI or close")
	}
	var m ChanMsg
	switch {
	case k == MsgSend:
		c, err := strconv.ParseUint(arg, 10, 64)
		if !hasArg || err != nil || c > MsgMaxCap {
			return bad("expected send/CAP")
		}
		m = MsgSendOf(c)
	case k.Ranged():
		if !hasArg {
			return bad("expected " + k.String() + "/LO-HI, /K or /*")
		}
		if arg == "*" {
			m = MsgRange(k, 0, 0)
			break
		}
		a, b, isRange := strings.Cut(arg, "-")
		lo, err1 := strconv.ParseUint(a, 10, 64)
		hi, err2 := lo, error(nil)
		if isRange {
			hi, err2 = strconv.ParseUint(b, 10, 64)
		}
		if err1 != nil || err2 != nil || lo == 0 || lo > MsgMaxLo || hi < lo || hi-lo >= MsgWide {
			return bad("expected " + k.String() + "/LO-HI with 1 <= LO <= HI")
		}
		m = MsgRange(k, lo, hi)
	default:
		if hasArg {
			return bad(k.String() + " takes no argument")
		}
		m = MsgOf(k)
	}
	if k.Release() != (op == OpSyncRelease) {
		return bad(fmt.Sprintf("%s is not a %s", k, op))
	}
	return m, nil
}

// WithoutMessages returns a copy of t whose channel events carry no
// message (FlagMessage cleared, Value 0): the merged reading of the same
// operations, as a sampled run records them.
func (t *Trace) WithoutMessages() *Trace {
	out := *t
	out.Events = slices.Clone(t.Events)
	for i := range out.Events {
		if e := &out.Events[i]; e.Flags&FlagMessage != 0 {
			e.Flags &^= FlagMessage
			e.Value = 0
		}
	}
	return &out
}
