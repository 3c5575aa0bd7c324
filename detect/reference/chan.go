package reference

import "github.com/racekit/racekit/trace"

// Channel events with their message (trace.FlagMessage), read as
// docs/semantics.md states the Go memory model's edges, restated here
// from the events alone, without clocks:
//
//   - A begin (snd with MsgSend or MsgRecv) of goroutine g belongs to the
//     first completion of g after it when that completion is on the same
//     channel (Obj with its low bit cleared), of the same direction, and
//     no other sync event of g but begins comes between (a select's
//     cases); its latest such begin, if several. It is live from its own
//     position up to that completion, or up to g's first sync event after
//     it that is not a begin (a select case not chosen).
//   - A begin's done count is the number of completions of its direction
//     on its channel before it: its operation's number is larger
//     (trace.ChanMsg's guarantee).
//   - A receive completion (MsgRecvd, MsgRecvAny) with a known range
//     [lo, hi] (narrower than maxRange) follows every send begin whose
//     completion came before it with a range meeting its own, or with an
//     unknown range, and every send begin live at it whose done count is
//     below hi. With an unknown range, it
//     follows every snd on its object before it.
//   - A receive completion of MsgRecvAny or MsgRecvClosed follows every
//     close (MsgClose) of its channel before it.
//   - A send completion (MsgSent) with a known range [lo, hi], whose begin
//     gave capacity C, follows every receive begin whose completion (not
//     MsgRecvClosed) came before it with a range meeting [lo-C, hi-C], or
//     an unknown range, and every receive begin live at it whose done
//     count plus C is below hi. With an
//     unknown range, or no begin, it follows every snd on its object
//     before it.
//
// A completion without a begin (of a send, or of a receive that got a
// message) publishes its goroutine's previous event, in place of the
// begin, to every later completion of the other direction on its channel
// (that is not MsgRecvClosed).
//
// An allocation starting at a channel's address begins a channel there
// whose messages are numbered from 1 again; its completions also follow
// what the earlier one's state kept (carried), as detect/clock's do, and
// its receives of MsgRecvAny or MsgRecvClosed every close at the address
// before them: an alloc event may come late, at a channel still in use.

const maxRange = 64 // as detect/clock's

func isMessage(e *trace.Event) bool {
	return e.Flags&trace.FlagMessage != 0 && (e.Op == trace.OpSyncRelease || e.Op == trace.OpSyncAcquire) && e.Validate() == nil
}

func msgOf(e *trace.Event) trace.ChanMsg { return trace.ChanMsg(e.Value) }

func isBegin(e *trace.Event) bool {
	k := msgOf(e).Kind()
	return isMessage(e) && (k == trace.MsgSend || k == trace.MsgRecv)
}

// completionOf returns the completion begin b belongs to and the end of
// its life: the index of its completion or of the event that ended it
// (len(evs): live to the end).
func completionOf(evs []trace.Event, b int) (comp, end int) {
	eb := &evs[b]
	send := msgOf(eb).Kind() == trace.MsgSend
	superseded := false
	for j := b + 1; j < len(evs); j++ {
		e := &evs[j]
		if e.G != eb.G || e.Op.IsAccess() || e.Op == trace.OpAlloc {
			continue
		}
		if isBegin(e) {
			if e.Obj&^1 == eb.Obj&^1 && (msgOf(e).Kind() == trace.MsgSend) == send {
				superseded = true // the latest begin takes the completion
			}
			continue
		}
		if isMessage(e) && e.Obj&^1 == eb.Obj&^1 && !superseded {
			k := msgOf(e).Kind()
			if send && k == trace.MsgSent || !send && (k == trace.MsgRecvd || k == trace.MsgRecvAny || k == trace.MsgRecvClosed) {
				return j, j
			}
		}
		return -1, j
	}
	return -1, len(evs)
}

// rangeOf is a completion's known range.
func rangeOf(e *trace.Event) (lo, hi uint64, ok bool) {
	lo, hi, ok = msgOf(e).Range()
	if ok && hi-lo >= maxRange {
		return 0, 0, false
	}
	return lo, hi, ok
}

// messageSources returns the events a message completion i follows (other
// than program order).
func messageSources(evs []trace.Event, i int) []int {
	e := &evs[i]
	m := msgOf(e)
	kind := m.Kind()
	ch := e.Obj &^ 1
	var out []int
	all := func() {
		for j := 0; j < i; j++ {
			if evs[j].Op == trace.OpSyncRelease && evs[j].Obj == e.Obj {
				out = append(out, j)
			}
		}
	}
	lo, hi, known := rangeOf(e)
	start := chanStart(evs, i, ch)
	// This completion's own begin.
	own := -1
	for j := i - 1; j >= start; j-- { // a begin before start is not its own (hasBegin)
		if isBegin(&evs[j]) && evs[j].G == e.G {
			if c, _ := completionOf(evs, j); c == i {
				own = j
				break
			}
		}
	}
	if kind == trace.MsgSent {
		if !known || own < 0 {
			all()
		}
		var c uint64
		if own >= 0 {
			c = msgOf(&evs[own]).Cap()
		}
		for j := start; j < i; j++ {
			b := &evs[j]
			if !isBegin(b) || b.Obj&^1 != ch || msgOf(b).Kind() != trace.MsgRecv {
				continue
			}
			comp, end := completionOf(evs, j)
			switch {
			case end > i: // live at i (its completion, if any, comes later)
				// It is receive number > its done count: needed when
				// that number plus C may be this send's.
				if !known || own < 0 || hi > doneBefore(evs, j, false)+c {
					out = append(out, j)
				}
			case comp >= 0 && comp < i && msgOf(&evs[comp]).Kind() != trace.MsgRecvClosed:
				rlo, rhi, rk := rangeOf(&evs[comp])
				if !rk || known && own >= 0 && rlo+c <= hi && rhi+c >= lo {
					out = append(out, j)
				}
			}
		}
		out = append(out, beginless(evs, i, ch, false)...)
		out = append(out, carried(evs, start, ch, false)...)
		return out
	}
	if kind != trace.MsgRecvClosed {
		if !known {
			all()
		}
		for j := start; j < i; j++ {
			b := &evs[j]
			if !isBegin(b) || b.Obj&^1 != ch || msgOf(b).Kind() != trace.MsgSend {
				continue
			}
			comp, end := completionOf(evs, j)
			switch {
			case end > i: // live: message number > its done count
				if !known || hi > doneBefore(evs, j, true) {
					out = append(out, j)
				}
			case comp >= 0 && comp < i:
				slo, shi, sk := rangeOf(&evs[comp])
				if !sk || known && slo <= hi && shi >= lo {
					out = append(out, j)
				}
			}
		}
	}
	if kind != trace.MsgRecvClosed {
		out = append(out, beginless(evs, i, ch, true)...)
		out = append(out, carried(evs, start, ch, true)...)
	}
	if kind != trace.MsgRecvd {
		for j := 0; j < i; j++ { // closes before an allocation at ch too (carried)
			if c := &evs[j]; isMessage(c) && c.Obj&^1 == ch && msgOf(c).Kind() == trace.MsgClose {
				out = append(out, j)
			}
		}
	}
	return out
}

// hasBegin reports whether completion i has a begin, after the last
// allocation at its channel before it (one before belongs to the channel
// that was there: detect/clock's state for it started over).
func hasBegin(evs []trace.Event, i int) bool {
	for j := i - 1; j >= chanStart(evs, i, evs[i].Obj&^1); j-- {
		if isBegin(&evs[j]) && evs[j].G == evs[i].G {
			if c, _ := completionOf(evs, j); c == i {
				return true
			}
		}
	}
	return false
}

// prevOf is the previous event of i's goroutine, or -1.
func prevOf(evs []trace.Event, i int) int {
	for j := i - 1; j >= 0; j-- {
		if evs[j].G == evs[i].G {
			return j
		}
	}
	return -1
}

// beginless returns the previous events of the completions before i on
// channel ch without a begin, of sends (sends) or of receives that may
// have got a message.
func beginless(evs []trace.Event, i int, ch uint64, sends bool) []int {
	var out []int
	for j := chanStart(evs, i, ch); j < i; j++ {
		r := &evs[j]
		if !isMessage(r) || r.Obj&^1 != ch {
			continue
		}
		k := msgOf(r).Kind()
		if sends && k != trace.MsgSent || !sends && k != trace.MsgRecvd && k != trace.MsgRecvAny {
			continue
		}
		if !hasBegin(evs, j) {
			if p := prevOf(evs, j); p >= 0 {
				out = append(out, p)
			}
		}
	}
	return out
}

// doneBefore is begin b's done count: the completions of its direction
// (sends: MsgSent; receives: MsgRecvd, MsgRecvAny, MsgRecvClosed) on its
// channel before it.
func doneBefore(evs []trace.Event, b int, send bool) uint64 {
	var n uint64
	for j := chanStart(evs, b, evs[b].Obj&^1); j < b; j++ {
		e := &evs[j]
		if !isMessage(e) || e.Obj&^1 != evs[b].Obj&^1 {
			continue
		}
		switch msgOf(e).Kind() {
		case trace.MsgSent:
			if send {
				n++
			}
		case trace.MsgRecvd, trace.MsgRecvAny, trace.MsgRecvClosed:
			if !send {
				n++
			}
		}
	}
	return n
}

// carried returns what a channel's state keeps across an allocation at
// its address (detect/clock's restartChan: an alloc event may come late,
// at the address of a live channel): for the channel whose events begin
// at start, right after an allocation at ch, the begins of sends (sends)
// or receives of the channel before it that completed before the
// allocation (a receive not because of a close) or were live at it, the
// goroutines' events that published completions without a begin there,
// and, recursively, what that channel carried from before an earlier
// allocation.
func carried(evs []trace.Event, start int, ch uint64, sends bool) []int {
	a := start - 1
	if a < 0 {
		return nil
	}
	from := chanStart(evs, a, ch)
	var out []int
	for j := from; j < a; j++ {
		b := &evs[j]
		if !isBegin(b) || b.Obj&^1 != ch || (msgOf(b).Kind() == trace.MsgSend) != sends {
			continue
		}
		comp, end := completionOf(evs, j)
		if end > a || comp >= 0 && comp < a && (sends || msgOf(&evs[comp]).Kind() != trace.MsgRecvClosed) {
			out = append(out, j)
		}
	}
	out = append(out, beginless(evs, a, ch, sends)...)
	return append(out, carried(evs, from, ch, sends)...)
}

// chanStart is where the channel at ch that event i is about begins: after
// the last allocation starting at ch before i (a channel made at a reused
// address numbers its messages from 1), else 0.
func chanStart(evs []trace.Event, i int, ch uint64) int {
	for j := i - 1; j >= 0; j-- {
		if evs[j].Op == trace.OpAlloc {
			if lo, _, ok := evs[j].AllocRange(); ok && lo == ch {
				return j + 1
			}
		}
	}
	return 0
}
