package predict

import "github.com/racekit/racekit/trace"

// Channel messages in the model. The edges from senders to receivers stay
// merged per object (a receive completion after every earlier send of
// another goroutine, as for any SyncAcquire): more order than the memory
// model's, which also keeps who receives which message as in the run. The
// edges back, from receivers to the completion of a send, are the memory
// model's per message (docs/semantics.md): the k-th receive before the
// (k+C)-th send completes, C the channel's capacity, read from the events'
// trace.ChanMsg words. Merged, a send completion was ordered after every
// earlier receive of another goroutine, which hides the races of a
// buffered channel used as a semaphore or of a send that does not wait for
// its receiver (Go's race suite: ChanAsyncRev, ChanSem, ...).

// maxMsgRange bounds the message numbers a range is read as; a wider one
// is read as unknown (as detect/clock does).
const maxMsgRange = 64

// sendBacks is, per send completion (a MsgSent acquire with a known
// message range and a paired MsgSend begin), the receive begins it must
// follow; completions not in it take the merged edges.
type sendBacks map[int32][]int32

// chanBackEdges pairs each channel operation's begin with its completion
// (per goroutine and channel) and returns the receive begins each send
// completion comes after: those of the messages its range minus the
// capacity may name, and those whose message is unknown (a wide range, a
// receive of either kind, no completion in the stretch), all earlier in the
// stretch and of another goroutine.
func chanBackEdges(evs []trace.Event) sendBacks {
	type opKey struct {
		g  trace.GID
		ch uint64
	}
	pendSend := map[opKey]int32{}
	pendRecv := map[opKey]int32{}
	type sent struct {
		i, begin int32
		lo, hi   uint64
	}
	var sents []sent
	recvOf := map[uint64]map[uint64][]int32{} // channel → message → receive begins
	wideRecv := map[uint64][]int32{}          // channel → receive begins of unknown message
	for i := range evs {
		e := &evs[i]
		if e.Flags&trace.FlagMessage == 0 || e.Validate() != nil {
			continue
		}
		msg := trace.ChanMsg(e.Value)
		k := msg.Kind()
		ch := e.Obj &^ 1 // c, for events on c and on c+1 (a channel is word-aligned)
		key := opKey{e.G, ch}
		switch k {
		case trace.MsgSend:
			pendSend[key] = int32(i)
		case trace.MsgRecv:
			pendRecv[key] = int32(i)
		case trace.MsgSent:
			b, ok := pendSend[key]
			delete(pendSend, key)
			if lo, hi, known := msg.Range(); ok && known && hi-lo < maxMsgRange {
				sents = append(sents, sent{int32(i), b, lo, hi})
			}
		case trace.MsgRecvd, trace.MsgRecvClosed, trace.MsgRecvAny:
			b, ok := pendRecv[key]
			delete(pendRecv, key)
			if !ok {
				break
			}
			lo, hi, known := msg.Range()
			switch {
			case k == trace.MsgRecvClosed:
				// No message: it orders no send.
			case k == trace.MsgRecvd && known && hi-lo < maxMsgRange:
				if recvOf[ch] == nil {
					recvOf[ch] = map[uint64][]int32{}
				}
				for n := lo; n <= hi; n++ {
					recvOf[ch][n] = append(recvOf[ch][n], b)
				}
			default:
				wideRecv[ch] = append(wideRecv[ch], b)
			}
		}
	}
	for key, b := range pendRecv {
		wideRecv[key.ch] = append(wideRecv[key.ch], b) // not completed in the stretch
	}
	out := sendBacks{}
	for _, s := range sents {
		e := &evs[s.begin]
		ch := e.Obj &^ 1
		c := trace.ChanMsg(e.Value).Cap()
		preds := []int32{}
		add := func(b int32) {
			if b < s.i && evs[b].G != evs[s.i].G {
				preds = append(preds, b)
			}
		}
		for n := s.lo; n <= s.hi; n++ {
			if n > c {
				for _, b := range recvOf[ch][n-c] {
					add(b)
				}
			}
		}
		for _, b := range wideRecv[ch] {
			add(b)
		}
		out[s.i] = preds
	}
	return out
}
