package hb_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/racekit/racekit/detect/reference"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/trace/text"
)

// Channel events with their message (trace.ChanMsg): the Go memory
// model's edges per message. Each trace is what rt records: a send is
// snd(c=send/CAP) before and rcv(c=sent/K) after; a receive snd(c=recv)
// before and rcv(c=recvd/K) (or closed, or recv?/K when ok is unknown)
// after; close is snd(c=close). Without messages (the same traces with
// plain snd/rcv) every receive acquires every earlier send: the "merged"
// column.
var chanMsgCases = []struct {
	name        string
	src         string
	races       []string // with messages
	mergedRaces []string // the same trace without messages
}{
	{
		// Two producers write different data and send once each; the
		// consumer received only the first message.
		name: "two producers, the consumer received the first message only",
		src: `
P1|w(x)|wx
P1|snd(c=send/2)
P1|rcv(c=sent/1)
P2|w(y)|wy
P2|snd(c=send/2)
P2|rcv(c=sent/2)
C|snd(c=recv)
C|rcv(c=recvd/1)
C|r(x)|rx
C|r(y)|ry
`,
		races:       []string{"ry~wy"},
		mergedRaces: []string{},
	},
	{
		// fasthttp's InmemoryListener: the dialer tries a select with a
		// default on done (its case begun, then abandoned), then selects
		// between sending on conns and receiving from done; the listener,
		// which began its receive long before, completes it with the
		// dialer's message before the dialer's send completion is
		// recorded. The second begin on done must not drop the send
		// begun just before it (it did: a false race on what the dialer
		// wrote before sending).
		name: "a select's send begun before a case on a channel an abandoned select had begun",
		src: `
L|snd(c=recv)
D|w(x)|wx
D|snd(d=recv)
D|snd(c=send/1024)
D|snd(d=recv)
L|rcv(c=recvd/1)
L|r(x)|rx
D|rcv(c=sent/1)
`,
		races:       []string{},
		mergedRaces: []string{},
	},
	{
		name: "the consumer received both messages",
		src: `
P1|w(x)|wx
P1|snd(c=send/2)
P1|rcv(c=sent/1)
P2|w(y)|wy
P2|snd(c=send/2)
P2|rcv(c=sent/2)
C|snd(c=recv)
C|rcv(c=recvd/1)
C|snd(c=recv)
C|rcv(c=recvd/2)
C|r(x)|rx
C|r(y)|ry
`,
		races:       []string{},
		mergedRaces: []string{},
	},
	{
		// The two sends overlapped: either may be message 1, so the
		// receive of message 1 is ordered after both (conservative).
		name: "overlapping sends: a range, both joined",
		src: `
P1|w(x)|wx
P1|snd(c=send/2)
P2|w(y)|wy
P2|snd(c=send/2)
P1|rcv(c=sent/1-2)
P2|rcv(c=sent/1-2)
C|snd(c=recv)
C|rcv(c=recvd/1)
C|r(x)|rx
C|r(y)|ry
`,
		races:       []string{},
		mergedRaces: []string{},
	},
	{
		// A semaphore of capacity 1: the second acquire (send 2) waits
		// for the first release (receive 1): the k+C rule orders them.
		name: "semaphore of capacity 1: receive 1 before send 2 completes",
		src: `
A|snd(s=send/1)
A|rcv(s=sent/1)
A|w(x)|wa
A|snd(s=recv)
A|rcv(s=recvd/1)
B|snd(s=send/1)
B|rcv(s=sent/2)
B|w(x)|wb
B|snd(s=recv)
B|rcv(s=recvd/2)
`,
		races:       []string{},
		mergedRaces: []string{},
	},
	{
		// Capacity 2: send 2 completes without waiting for any receive;
		// both holders write x at once.
		name: "semaphore of capacity 2: two holders race",
		src: `
A|snd(s=send/2)
A|rcv(s=sent/1)
A|w(x)|wa
A|snd(s=recv)
A|rcv(s=recvd/1)
B|snd(s=send/2)
B|rcv(s=sent/2)
B|w(x)|wb
B|snd(s=recv)
B|rcv(s=recvd/2)
`,
		races: []string{"wa~wb"},
		// Merged, B's completion acquires A's receive: no race seen.
		mergedRaces: []string{},
	},
	{
		// Unbuffered: the receive is synchronized before the send
		// completes, so the sender's write after it is ordered after the
		// receiver's read before it.
		name: "unbuffered: receive before the send completes",
		src: `
R|r(x)|rx
R|snd(c=recv)
S|snd(c=send/0)
S|rcv(c=sent/1)
S|w(x)|wx
R|rcv(c=recvd/1)
`,
		races:       []string{},
		mergedRaces: []string{},
	},
	{
		// Buffered (capacity 1): the first send completes at once; the
		// receive is not before it.
		name: "buffered: receive 1 is not before send 1 completes",
		src: `
R|r(x)|rx
R|snd(c=recv)
S|snd(c=send/1)
S|rcv(c=sent/1)
S|w(x)|wx
R|rcv(c=recvd/1)
`,
		races:       []string{"rx~wx"},
		mergedRaces: []string{},
	},
	{
		name: "close before a receive that returns because closed",
		src: `
S|w(x)|wx
S|snd(c=close)
R|snd(c=recv)
R|rcv(c=closed)
R|r(x)|rx
`,
		races:       []string{},
		mergedRaces: []string{},
	},
	{
		// A receive that got message 1 is not ordered after a close
		// that came later in the trace, nor after what the closer wrote.
		name: "a receive that got a message does not acquire the close",
		src: `
S|snd(c=send/1)
S|rcv(c=sent/1)
S|w(x)|wx
S|snd(c=close)
R|snd(c=recv)
R|rcv(c=recvd/1)
R|r(x)|rx
`,
		races:       []string{"rx~wx"},
		mergedRaces: []string{},
	},
	{
		// A select took its other case: its announced send on c is not
		// pending once the goroutine goes on (rcv on d), so the receive
		// of Q's message is not ordered after S's write.
		name: "select: a send case not chosen",
		src: `
P|snd(d=send/1)
P|rcv(d=sent/1)
S|w(x)|wx
S|snd(c=send/1)
S|snd(d=recv)
S|rcv(d=recvd/1)
Q|snd(c=send/1)
Q|rcv(c=sent/1)
R|snd(c=recv)
R|rcv(c=recvd/1)
R|r(x)|rx
`,
		races:       []string{"rx~wx"},
		mergedRaces: []string{},
	},
	{
		// An unbuffered send still in progress when its receive
		// completes: the receive joins the pending send (it may be the
		// partner).
		name: "unbuffered: the send completes after the receive",
		src: `
S|w(x)|wx
S|snd(c=send/0)
R|snd(c=recv)
R|rcv(c=recvd/1)
R|r(x)|rx
S|rcv(c=sent/1)
`,
		races:       []string{},
		mergedRaces: []string{},
	},
	{
		// A channel made where a freed one was (rt records its
		// allocation at c) numbers its messages from 1 again: its
		// receive of message 2 joins the send still pending, as on a
		// new channel, not the old channel's second send.
		name: "a new channel at a reused address",
		src: `
P|snd(c=send/0)
C|snd(c=recv)
C|rcv(c=recvd/1)
P|rcv(c=sent/1)
P|snd(c=send/0)
C|snd(c=recv)
C|rcv(c=recvd/2)
P|rcv(c=sent/2)
M|alloc(c=8)
S1|snd(c=send/0)
S1|rcv(c=sent/1)
S2|w(y)|wy
S2|snd(c=send/0)
R|snd(c=recv)
R|rcv(c=recvd/1)
R|snd(c=recv)
R|rcv(c=recvd/2)
R|w(y)|ry
S2|rcv(c=sent/2)
`,
		races:       []string{},
		mergedRaces: []string{},
	},
}

func TestChanMessages(t *testing.T) {
	for _, tc := range chanMsgCases {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := text.Parse("t.rktx", text.WithForks(tc.src))
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range flavours {
				if got := labels(tr.M, run(t, f, tr).c.Pairs()); !slices.Equal(got, norm(tc.races)) {
					t.Errorf("%s: races %v, want %v", f.name, got, norm(tc.races))
				}
			}
			if got := labels(tr.M, reference.HBPairs(tr)); !slices.Equal(got, norm(tc.races)) {
				t.Errorf("reference: races %v, want %v", got, norm(tc.races))
			}
			merged := tr.WithoutMessages()
			if got := labels(merged.M, run(t, hbFlavour, merged).c.Pairs()); !slices.Equal(got, norm(tc.mergedRaces)) {
				t.Errorf("merged: races %v, want %v", got, norm(tc.mergedRaces))
			}
		})
	}
}

// chanSim generates traces of goroutines that write and read a few
// variables and use buffered and unbuffered channels, as rt records them:
// message ranges from the same four counters per channel, begins and
// completions interleaved at random around each operation's real effect
// (its linearization, which follows the channel's FIFO semantics). It
// also returns the true message number of each completion.
type chanSim struct {
	exact bool // completions carry their true number, not the recorder's range
	r     *rand.Rand
	b     strings.Builder
	chans []*simChan
}

type simChan struct {
	name                                         string
	cap                                          int
	buf                                          []int // message numbers in the buffer
	sent, recvd                                  int   // linearized
	sendStarted, sendDone, recvStarted, recvDone int
	closed                                       bool
}

type simG struct {
	name  string
	ops   []simOp
	state int // 0 idle, 1 begun, 2 linearized
	lo    int
	msg   int  // the message it linearized with
	ok    bool // a receive got a message
}

type simOp struct {
	kind byte // 'w', 'r', 's' send, 'v' receive, 'c' close
	obj  int
}

func (s *chanSim) line(f string, a ...any) { fmt.Fprintf(&s.b, f+"\n", a...) }

func genChanTrace(r *rand.Rand, exact bool) string {
	s := &chanSim{r: r, exact: exact}
	nch := 1 + r.IntN(2)
	for i := range nch {
		s.chans = append(s.chans, &simChan{name: fmt.Sprintf("c%d", i), cap: r.IntN(3)})
	}
	ng := 2 + r.IntN(3)
	gs := make([]*simG, ng)
	for i := range gs {
		g := &simG{name: fmt.Sprintf("T%d", i)}
		n := 2 + r.IntN(6)
		for range n {
			switch x := r.IntN(10); {
			case x < 3:
				g.ops = append(g.ops, simOp{'w', r.IntN(3)})
			case x < 5:
				g.ops = append(g.ops, simOp{'r', r.IntN(3)})
			case x < 7:
				g.ops = append(g.ops, simOp{'s', r.IntN(nch)})
			case x < 9 || i != 0:
				g.ops = append(g.ops, simOp{'v', r.IntN(nch)})
			default:
				g.ops = append(g.ops, simOp{'c', r.IntN(nch)})
			}
		}
		gs[i] = g
	}
	for steps := 0; steps < 400; steps++ {
		if r.IntN(8) == 0 {
			// An allocation written late at a live channel's address
			// (rt/mallochook.go): the channel's numbers go on. Only
			// between operations: one begun before it completes after
			// it as one without a begin, whose clock detect/clock
			// publishes at the completion and the reference at the
			// event before (a difference this test does not cover).
			ci := r.IntN(nch)
			busy := false
			for _, g := range gs {
				busy = busy || g.state != 0 && len(g.ops) > 0 && g.ops[0].obj == ci
			}
			if !busy {
				s.line("%s|alloc(%s=8)", gs[r.IntN(ng)].name, s.chans[ci].name)
			}
		}
		g := gs[r.IntN(ng)]
		if len(g.ops) == 0 {
			continue
		}
		op := g.ops[0]
		switch op.kind {
		case 'w', 'r':
			s.line("%s|%c(x%d)|%c%d.%s", g.name, op.kind, op.obj, op.kind, op.obj, g.name)
			g.ops = g.ops[1:]
		case 'c':
			c := s.chans[op.obj]
			if !c.closed {
				s.line("%s|snd(%s=close)", g.name, c.name)
				c.closed = true
			}
			g.ops = g.ops[1:]
		case 's', 'v':
			s.chanStep(g, gs, op)
		}
	}
	return s.b.String()
}

// chanStep advances g's channel operation by one step: begin, linearize
// (when the channel lets it), complete.
func (s *chanSim) chanStep(g *simG, gs []*simG, op simOp) {
	c := s.chans[op.obj]
	send := op.kind == 's'
	switch g.state {
	case 0:
		if send {
			if c.closed {
				g.ops = g.ops[1:] // it would panic: skip it
				return
			}
			s.line("%s|snd(%s=send/%d)", g.name, c.name, c.cap)
			g.lo = c.sendDone + 1
			c.sendStarted++
		} else {
			s.line("%s|snd(%s=recv)", g.name, c.name)
			g.lo = c.recvDone + 1
			c.recvStarted++
		}
		g.state = 1
	case 1:
		if send && c.closed {
			g.state = 0 // the send panics (a send on a closed channel)
			g.ops = g.ops[1:]
			return
		}
		if send {
			switch {
			case len(c.buf) < c.cap:
				c.sent++
				c.buf = append(c.buf, c.sent)
				g.msg, g.state = c.sent, 2
			case c.cap == 0:
				// Hand over to a receiver that has begun and waits.
				for _, h := range gs {
					if h.state == 1 && len(h.ops) > 0 && h.ops[0].kind == 'v' && h.ops[0].obj == op.obj {
						c.sent++
						c.recvd++
						g.msg, g.state = c.sent, 2
						h.msg, h.ok, h.state = c.sent, true, 2
						break
					}
				}
			}
		} else {
			switch {
			case len(c.buf) > 0:
				c.recvd++
				g.msg, g.ok, g.state = c.buf[0], true, 2
				c.buf = c.buf[1:]
				if c.cap > 0 {
					// A sender waiting on the full buffer gets in now.
					for _, h := range gs {
						if h.state == 1 && len(h.ops) > 0 && h.ops[0].kind == 's' && h.ops[0].obj == g.ops[0].obj && len(c.buf) < c.cap {
							c.sent++
							c.buf = append(c.buf, c.sent)
							h.msg, h.state = c.sent, 2
						}
					}
				}
			case c.closed:
				g.ok, g.state = false, 2
			case c.cap == 0:
				for _, h := range gs {
					if h.state == 1 && len(h.ops) > 0 && h.ops[0].kind == 's' && h.ops[0].obj == op.obj {
						c.sent++
						c.recvd++
						h.msg, h.state = c.sent, 2
						g.msg, g.ok, g.state = c.sent, true, 2
						break
					}
				}
			}
		}
	case 2:
		if send {
			hi := c.sendStarted
			c.sendDone++
			s.line("%s|rcv(%s=sent/%s)", g.name, c.name, s.rangeText(g.lo, hi, g.msg))
		} else {
			hi := c.recvStarted
			c.recvDone++
			switch {
			case !g.ok:
				s.line("%s|rcv(%s=closed)", g.name, c.name)
			case s.r.IntN(4) == 0:
				s.line("%s|rcv(%s=recv?/%s)", g.name, c.name, s.rangeText(g.lo, hi, g.msg))
			default:
				s.line("%s|rcv(%s=recvd/%s)", g.name, c.name, s.rangeText(g.lo, hi, g.msg))
			}
		}
		g.state = 0
		g.ops = g.ops[1:]
	}
}

func raceAddrs(rs []finding.Race) []uint64 {
	var out []uint64
	for _, r := range rs {
		if !slices.Contains(out, r.Addr) {
			out = append(out, r.Addr)
		}
	}
	slices.Sort(out)
	return out
}

func refAddrs(rs []reference.Race) []uint64 {
	var out []uint64
	for _, r := range rs {
		if !slices.Contains(out, r.Addr) {
			out = append(out, r.Addr)
		}
	}
	slices.Sort(out)
	return out
}

func (s *chanSim) rangeText(lo, hi, msg int) string {
	if msg < lo || msg > hi {
		panic(fmt.Sprintf("message %d outside its range [%d, %d]", msg, lo, hi))
	}
	if s.exact {
		return fmt.Sprint(msg)
	}
	return fmt.Sprintf("%d-%d", lo, hi)
}

// The tracker's channel edges (hb and fasttrack) against the reference
// oracle's, restated without clocks, on random traces; and against the
// merged reading, which orders more (never fewer races with messages).
// chanPad puts, in front of every third trace, 130 goroutines that each
// write a word of their own: the traces' goroutines then have clock IDs
// past 128, and their clocks span three of vc.Shared's 64-entry chunks
// (the chunks shared, compared and copied on write), where a handful of
// goroutines keep every clock in one.
func chanPad(i int) string {
	if i%3 != 0 {
		return ""
	}
	var b strings.Builder
	for j := range 130 {
		fmt.Fprintf(&b, "P%d|w(pad%d)|wpad%d.P%d\n", j, j, j, j)
	}
	return b.String()
}

func TestChanMessagesDifferential(t *testing.T) {
	n := 1500
	if testing.Short() {
		n = 300
	}
	extra, ranged := 0, 0
	for i := range n {
		src := text.WithForks(chanPad(i) + genChanTrace(rand.New(rand.NewPCG(28, uint64(i))), false))
		tr, err := text.Parse("gen.rktx", src)
		if err != nil {
			t.Fatalf("trace %d: %v\n%s", i, err, src)
		}
		want := reference.HBPairs(tr)
		if i == 0 {
			if ids := run(t, ftNoRecycle, tr).stats["clock_ids"]; ids <= 128 {
				t.Fatalf("padded trace: %d clock IDs, want more than two chunks", ids)
			}
		}
		if got := run(t, hbFlavour, tr).c.Pairs(); !slices.Equal(got, want) {
			t.Fatalf("trace %d: hb %v, reference %v\n%s", i, labels(tr.M, got), labels(tr.M, want), src)
		}
		// fasttrack: the same addresses race (docs/semantics.md).
		if got, want := raceAddrs(run(t, ftFlavour, tr).races), refAddrs(reference.HBRaces(tr)); !slices.Equal(got, want) {
			t.Fatalf("trace %d: fasttrack races on %v, reference on %v\n%s", i, got, want, src)
		}
		merged := run(t, hbFlavour, tr.WithoutMessages()).c.Pairs()
		for _, p := range merged {
			if !slices.Contains(want, p) {
				t.Fatalf("trace %d: merged reading reports %v, per-message does not\n%s", i, labels(tr.M, merged), src)
			}
		}
		extra += len(want) - len(merged)
		// The same run with every completion's true number: ranges only
		// add order.
		esrc := text.WithForks(chanPad(i) + genChanTrace(rand.New(rand.NewPCG(28, uint64(i))), true))
		etr, err := text.Parse("exact.rktx", esrc)
		if err != nil {
			t.Fatalf("trace %d: %v\n%s", i, err, esrc)
		}
		exact := run(t, hbFlavour, etr).c.Pairs()
		for _, p := range want {
			if !slices.Contains(exact, p) {
				t.Fatalf("trace %d: ranged reports %v, exact numbers %v\n%s\n%s", i, labels(tr.M, want), labels(etr.M, exact), src, esrc)
			}
		}
		if !slices.Equal(reference.HBPairs(etr), exact) {
			t.Fatalf("trace %d: exact numbers: hb %v, reference %v\n%s", i, labels(etr.M, exact), labels(etr.M, reference.HBPairs(etr)), esrc)
		}
		ranged += len(exact) - len(want)
	}
	t.Logf("%d races the exact numbers show and the recorder's ranges hide", ranged)
	if extra == 0 {
		t.Errorf("no trace had a race only the per-message edges show")
	}
	t.Logf("%d races only the per-message edges show, over %d traces", extra, n)
}
