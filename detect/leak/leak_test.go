package leak

import (
	"slices"
	"testing"

	"github.com/racekit/racekit/trace/text"
)

// Hand-written traces, as rt records channel operations (detect/hb's
// chanmsg_test.go documents the words), and the goroutines each must
// report blocked, with the kind of their operation.
func TestLeaks(t *testing.T) {
	cases := []struct {
		name string
		src  string
		want []string // "G kind"
	}{
		{
			name: "a receive no one sends to",
			src: `
W|snd(c=recv)
`,
			want: []string{"W chan receive"},
		},
		{
			name: "a send no one receives (unbuffered)",
			src: `
W|snd(c=send/0)
`,
			want: []string{"W chan send"},
		},
		{
			name: "the receive completed",
			src: `
W|snd(c=recv)
P|snd(c=send/0)
P|rcv(c=sent/1)
W|rcv(c=recvd/1)
W|end
`,
		},
		{
			// The trace ended before either completion was recorded:
			// they pair.
			name: "a pending send and a pending receive on one channel",
			src: `
W|snd(c=recv)
P|snd(c=send/0)
`,
		},
		{
			name: "a receive after the channel was closed",
			src: `
P|snd(c=close)
W|snd(c=recv)
`,
		},
		{
			name: "a send into a buffer with room",
			src: `
W|snd(c=send/1)
`,
		},
		{
			name: "a send into a full buffer",
			src: `
P|snd(c=send/1)
P|rcv(c=sent/1)
W|snd(c=send/1)
`,
			want: []string{"W chan send"},
		},
		{
			name: "a receive of a buffered message",
			src: `
P|snd(c=send/1)
P|rcv(c=sent/1)
W|snd(c=recv)
`,
		},
		{
			name: "a select none of whose cases can proceed",
			src: `
W|snd(c=recv)
W|snd(d=recv)
`,
			want: []string{"W select"},
		},
		{
			// The goroutine went on after its select: the case taken
			// completed, the others were dropped.
			name: "a select that took a case",
			src: `
P|snd(d=send/1)
P|rcv(d=sent/1)
W|snd(c=recv)
W|snd(d=recv)
W|rcv(d=recvd/1)
W|w(x)
`,
		},
		{
			// bench/blocking's sendleak: the caller's select announced a
			// receive on c but took its timer's case d; the worker's
			// later send on unbuffered c has no receiver.
			name: "a send after a select's receive case not taken",
			src: `
P|snd(d=send/1)
P|rcv(d=sent/1)
M|snd(c=recv)
M|snd(d=recv)
M|rcv(d=recvd/1)
W|snd(c=send/0)
`,
			want: []string{"W chan send"},
		},
		{
			// rt's OpBlock: blocked in a Lock (kind 1) and in a
			// WaitGroup.Wait (kind 3) when the trace was finished.
			name: "goroutines blocked in sync operations at the end",
			src: `
W|acq(mu)
V|block(mu=1)
W|end
U|block(wg=3)
`,
			want: []string{"V sync.Mutex.Lock", "U sync.WaitGroup.Wait"},
		},
		{
			// A goroutine the trace did not fork (a test's own, started
			// by the framework) blocked at the end: the run did not
			// finish, nothing was left behind.
			name: "the main goroutine blocked",
			src: `
M|snd(c=recv)
`,
		},
		{
			// e2e's leakytest: two workers send on an unbuffered channel,
			// the test receives once, after both began; the receive
			// beginning later completes one of them, not both.
			name: "two sends, one receive begun after both",
			src: `
M|w(x)
A|snd(c=send/0)
B|snd(c=send/0)
M|snd(c=recv)
A|rcv(c=sent/1)
M|rcv(c=recvd/1)
A|end
`,
			want: []string{"B chan send"},
		},
		{
			// The same, ended before the woken sender recorded its
			// completion: the first to wait is the one woken.
			name: "two sends, one receive, no sender completion yet",
			src: `
M|w(x)
A|snd(c=send/0)
B|snd(c=send/0)
M|snd(c=recv)
M|rcv(c=recvd/1)
`,
			want: []string{"B chan send"},
		},
		{
			// Go's race suite's TestRaceSelect1: each sender's select
			// reads the next case's channel between its case begins (an
			// access, after which the begun send on c was dropped), and
			// the receiver's second receive, which the second send woke,
			// had not recorded its completion when the run ended. Both
			// sends completed: the receive did too.
			name: "a select's send completed after an access between its case begins",
			src: `
W|snd(c=recv)
A|snd(c=send/0)
A|r(x)
A|snd(d=send/0)
W|rcv(c=recvd/1)
W|snd(c=recv)
A|rcv(c=sent/1)
B|snd(c=send/0)
B|r(x)
B|snd(d=send/0)
B|rcv(c=sent/2)
`,
		},
		{
			name: "a goroutine that ended",
			src: `
W|snd(c=recv)
W|end
`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := text.Parse("t.rktx", text.WithForks(tc.src))
			if err != nil {
				t.Fatal(err)
			}
			d := New(Options{})
			for i := range tr.Events {
				d.Handle(&tr.Events[i])
			}
			d.Finish()
			var got []string
			for _, l := range d.Leaks() {
				got = append(got, tr.M.Goroutine(l.G).Label()+" "+l.Kind())
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("leaks %q, want %q", got, tc.want)
			}
		})
	}
}

// Without messages (a sampled run) nothing is reported.
func TestNoMessagesNoLeaks(t *testing.T) {
	tr, err := text.Parse("t.rktx", text.WithForks("W|snd(c=recv)\n"))
	if err != nil {
		t.Fatal(err)
	}
	tr = tr.WithoutMessages()
	d := New(Options{})
	for i := range tr.Events {
		d.Handle(&tr.Events[i])
	}
	if l := d.Leaks(); len(l) != 0 {
		t.Errorf("%d leaks without messages", len(l))
	}
}

// Blocked, for a run that stalled: every goroutine whose last events are
// blocked operations, forked or not (the test's own too), with the locks
// each held then; a lock released is not held, and a goroutine that ended
// is not blocked. Leaks carries the same held locks.
func TestBlockedHeld(t *testing.T) {
	src := `
M|acq(a)
M|acq(mu)
M|racq(rw)
M|rel(a)
M|snd(c=recv)
W|acq(b)
W|rel(b)
W|block(mu=1)
V|snd(d=send/0)
V|rcv(d=sent/1)
V|end
`
	tr, err := text.Parse("t.rktx", text.WithForks(src))
	if err != nil {
		t.Fatal(err)
	}
	d := New(Options{})
	for i := range tr.Events {
		d.Handle(&tr.Events[i])
	}
	d.Finish()
	describe := func(ls []Leak) []string {
		var out []string
		for _, l := range ls {
			s := tr.M.Goroutine(l.G).Label() + " " + l.Kind() + " holding"
			for _, h := range l.Held {
				s += " " + tr.M.NameOf(h.Lock)
				if h.Read {
					s += "(r)"
				}
			}
			out = append(out, s)
		}
		return out
	}
	if got, want := describe(d.Blocked()), []string{"W sync.Mutex.Lock holding", "M chan receive holding mu rw(r)"}; !slices.Equal(got, want) {
		t.Errorf("blocked %q, want %q", got, want)
	}
	// M was not forked in the trace (a test's own goroutine): no leak.
	if got, want := describe(d.Leaks()), []string{"W sync.Mutex.Lock holding"}; !slices.Equal(got, want) {
		t.Errorf("leaks %q, want %q", got, want)
	}
}
