package clock

import (
	"math/rand/v2"
	"testing"

	"github.com/racekit/racekit/detect/vc"
	"github.com/racekit/racekit/trace"
)

// TestMsgQueueAgainstMap: a channel's per-message clocks in the ring
// window behave as the map they replaced, under random joins (below,
// inside and past the window), drops from the low end and folds.
func TestMsgQueueAgainstMap(t *testing.T) {
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 7))
		var q msgQueue
		ref := map[uint64]vc.VectorClock{}
		var wide vc.Shared
		var refWide vc.VectorClock
		freed, refFreed := 0, 0
		free := func(vc.Shared) { freed++ }
		base := uint64(r.IntN(1000))
		for step := range 400 {
			switch op := r.IntN(10); {
			case op < 6: // join a clock into message j
				j := base + uint64(r.IntN(80))
				var c vc.Shared
				g, v := trace.GID(r.IntN(200)), uint32(1+r.IntN(50))
				c.Set(g, v)
				_, had := ref[j]
				if got := q.joinAt(j, c); got != !had {
					t.Fatalf("seed %d step %d: joinAt(%d) new %v, want %v", seed, step, j, got, !had)
				}
				rc := ref[j]
				rc.Set(g, max(rc.Get(g), v))
				ref[j] = rc
			case op < 8: // drop through j
				j := base + uint64(r.IntN(60))
				q.dropThrough(j, free)
				for k := range ref {
					if k <= j {
						delete(ref, k)
						refFreed++
					}
				}
				base += uint64(r.IntN(20))
			case op < 9: // fold everything
				q.foldInto(&wide, free)
				for k, c := range ref {
					refWide.Join(c)
					delete(ref, k)
					refFreed++
				}
			default:
				base += uint64(r.IntN(100))
			}
			if q.n != len(ref) || freed != refFreed {
				t.Fatalf("seed %d step %d: %d clocks held, %d freed; want %d, %d", seed, step, q.n, freed, len(ref), refFreed)
			}
			for j := base - min(base, 20); j < base+120; j++ {
				got, want := q.get(j).Flat(), ref[j]
				if !got.Leq(want) || !want.Leq(got) {
					t.Fatalf("seed %d step %d: message %d clock %v, want %v", seed, step, j, got, want)
				}
			}
			if w := wide.Flat(); !w.Leq(refWide) || !refWide.Leq(w) {
				t.Fatalf("seed %d step %d: folded %v, want %v", seed, step, wide.Flat(), refWide)
			}
		}
	}
}

// A channel whose message numbers start again at its address, in a trace
// without the allocation that made it again, folds its old messages'
// clocks rather than widening its window down to the new numbers (a
// ring as long as the old channel's messages), and the new send still
// orders its receive.
func TestChanMsgNumbersStartAgain(t *testing.T) {
	b := forked("P", "C")
	msg := func(g string, op trace.Op, obj uint64, m trace.ChanMsg) int {
		return b.Add(trace.Event{G: b.G(g), Op: op, Obj: obj, Value: uint64(m), Flags: trace.FlagMessage})
	}
	const capacity = 100
	ch := b.Obj("ch")
	b.Obj("ch+1")
	message := func(k uint64) (send int) {
		send = msg("P", trace.OpSyncRelease, ch, trace.MsgSendOf(capacity))
		msg("P", trace.OpSyncAcquire, ch+1, trace.MsgRange(trace.MsgSent, k, k))
		msg("C", trace.OpSyncRelease, ch+1, trace.MsgOf(trace.MsgRecv))
		msg("C", trace.OpSyncAcquire, ch, trace.MsgRange(trace.MsgRecvd, k, k))
		return send
	}
	for k := uint64(1); k <= 2*maxSpan; k++ {
		message(k)
	}
	send := message(1) // the channel made again, its numbers from 1
	k, steps := feed(AllEdges, b.Trace())
	s := k.chanOf(ch &^ 1)
	for _, q := range []*msgQueue{&s.msgs, &s.rcvs} {
		if q.span > maxSpan || len(q.ring) > 2*maxSpan {
			t.Errorf("window of %d messages in a ring of %d, want at most %d", q.span, len(q.ring), maxSpan)
		}
	}
	p, recv := steps[send], steps[len(steps)-1]
	if got, want := recv.after.Get(trace.GID(p.t.ID())), p.epochBef.Clock(); got < want {
		t.Errorf("the receive after the numbers started again knows P at %d, want at least %d (its send)", got, want)
	}
}

// TestLateAllocKeepsChannelMessage: rt writes an untraced allocation at
// its goroutine's next event, so an object that died long ago may be
// "allocated" at the address of a live channel between a send and its
// receive (modelcontextprotocol/go-sdk). The channel's state starts over
// at the alloc, but the receive of message 1 still knows the send: the
// old state's clocks go to the wide clocks (restartChan), where dropping
// them was a false race.
func TestLateAllocKeepsChannelMessage(t *testing.T) {
	b := forked("P", "C", "Q")
	msg := func(g string, op trace.Op, obj uint64, m trace.ChanMsg) int {
		return b.Add(trace.Event{G: b.G(g), Op: op, Obj: obj, Value: uint64(m), Flags: trace.FlagMessage})
	}
	ch := b.Obj("ch")
	b.Obj("ch+1")
	b.Add(trace.Event{G: b.G("P"), Op: trace.OpAlloc, Obj: ch, Value: 8})
	send := msg("P", trace.OpSyncRelease, ch, trace.MsgSendOf(10))
	msg("P", trace.OpSyncAcquire, ch+1, trace.MsgRange(trace.MsgSent, 1, 1))
	b.Add(trace.Event{G: b.G("Q"), Op: trace.OpAlloc, Obj: ch, Value: 8}) // late
	msg("C", trace.OpSyncRelease, ch+1, trace.MsgOf(trace.MsgRecv))
	msg("C", trace.OpSyncAcquire, ch, trace.MsgRange(trace.MsgRecvAny, 1, 1))
	_, steps := feed(AllEdges, b.Trace())
	p, recv := steps[send], steps[len(steps)-1]
	if got, want := recv.after.Get(trace.GID(p.t.ID())), p.epochBef.Clock(); got < want {
		t.Errorf("the receive after a late alloc at the channel knows P at %d, want at least %d (its send)", got, want)
	}
}
