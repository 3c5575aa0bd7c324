package deadlock_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/detect/deadlock"
	"github.com/racekit/racekit/detect/reference"
	"github.com/racekit/racekit/trace"
	"github.com/racekit/racekit/trace/text"
)

// tb builds traces whose acquires have sites ("A@a1": lock A at site a1).
type tb struct{ *trace.Builder }

func (b tb) acq(g, l, site string) { b.lock(g, l, site, trace.OpAcquire, 0) }
func (b tb) rel(g, l string)       { b.lock(g, l, "", trace.OpRelease, 0) }
func (b tb) racq(g, l, site string) {
	b.lock(g, l, site, trace.OpAcquire, trace.FlagReadLock)
}
func (b tb) rrel(g, l string) { b.lock(g, l, "", trace.OpRelease, trace.FlagReadLock) }

func (b tb) lock(g, l, site string, op trace.Op, f trace.Flags) {
	var s trace.SiteID
	if site != "" {
		s = b.Site(site)
	}
	b.Add(trace.Event{G: b.G(g), Op: op, Obj: b.Obj(l), Site: s, Flags: f})
}

// cycles runs the detector and renders each cycle as "G:held>lock@site"
// steps joined by " ~ ".
func cycles(t *testing.T, tr *trace.Trace) []string {
	t.Helper()
	d := deadlock.New(deadlock.Options{})
	if _, err := detect.Run(tr.Iter(), d); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range d.Cycles() {
		var steps []string
		for _, dep := range c.Deps {
			var held []string
			for _, h := range dep.Held {
				held = append(held, tr.M.NameOf(h.Lock))
			}
			steps = append(steps, fmt.Sprintf("%s:%s>%s@%s", tr.M.Goroutine(dep.G).Label(), strings.Join(held, ","), tr.M.NameOf(dep.Lock), tr.M.Site(dep.Site)))
		}
		line := strings.Join(steps, " ~ ")
		if c.Kind == deadlock.RecursiveRead {
			line = "RR " + line
		}
		out = append(out, line)
	}
	return out
}

func TestCycles(t *testing.T) {
	for _, c := range []struct {
		name  string
		build func(b tb)
		want  []string
	}{
		{"AB-BA", func(b tb) {
			b.Fork("M", "T1", "")
			b.Fork("M", "T2", "")
			b.acq("T1", "A", "a1")
			b.acq("T1", "B", "b1")
			b.rel("T1", "B")
			b.rel("T1", "A")
			b.acq("T2", "B", "b2")
			b.acq("T2", "A", "a2")
			b.rel("T2", "A")
			b.rel("T2", "B")
		}, []string{"T1:A>B@b1 ~ T2:B>A@a2"}},
		{"a guard lock", func(b tb) {
			b.Fork("M", "T1", "")
			b.Fork("M", "T2", "")
			for _, x := range [][3]string{{"T1", "A", "B"}, {"T2", "B", "A"}} {
				b.acq(x[0], "G", "g")
				b.acq(x[0], x[1], "1")
				b.acq(x[0], x[2], "2")
				b.rel(x[0], x[2])
				b.rel(x[0], x[1])
				b.rel(x[0], "G")
			}
		}, nil},
		{"ordered by a join and a fork", func(b tb) {
			b.Fork("M", "T1", "")
			b.acq("T1", "A", "a1")
			b.acq("T1", "B", "b1")
			b.rel("T1", "B")
			b.rel("T1", "A")
			b.Join("M", "T1")
			b.Fork("M", "T2", "")
			b.acq("T2", "B", "b2")
			b.acq("T2", "A", "a2")
			b.rel("T2", "A")
			b.rel("T2", "B")
		}, nil},
		{"ordered by a message", func(b tb) {
			b.Fork("M", "T1", "")
			b.Fork("M", "T2", "")
			b.acq("T1", "A", "a1")
			b.acq("T1", "B", "b1")
			b.rel("T1", "B")
			b.rel("T1", "A")
			b.Snd("T1", "ch")
			b.Rcv("T2", "ch")
			b.acq("T2", "B", "b2")
			b.acq("T2", "A", "a2")
			b.rel("T2", "A")
			b.rel("T2", "B")
		}, nil},
		{"the message before the second acquire orders nothing", func(b tb) {
			// T1 holds A when it sends; T2 takes B, then waits for A while
			// T1 waits for B.
			b.Fork("M", "T1", "")
			b.Fork("M", "T2", "")
			b.acq("T1", "A", "a1")
			b.Snd("T1", "ch")
			b.acq("T1", "B", "b1")
			b.rel("T1", "B")
			b.rel("T1", "A")
			b.Rcv("T2", "ch")
			b.acq("T2", "B", "b2")
			b.acq("T2", "A", "a2")
			b.rel("T2", "A")
			b.rel("T2", "B")
		}, []string{"T1:A>B@b1 ~ T2:B>A@a2"}},
		{"readers do not wait for readers", func(b tb) {
			b.Fork("M", "T1", "")
			b.Fork("M", "T2", "")
			b.racq("T1", "A", "a1")
			b.acq("T1", "B", "b1")
			b.rel("T1", "B")
			b.rrel("T1", "A")
			b.acq("T2", "B", "b2")
			b.racq("T2", "A", "a2")
			b.rrel("T2", "A")
			b.rel("T2", "B")
		}, nil},
		{"a writer waits for a reader (RWMutex.Lock)", func(b tb) {
			b.Fork("M", "T1", "")
			b.Fork("M", "T2", "")
			b.racq("T1", "A", "a1")
			b.acq("T1", "B", "b1")
			b.rel("T1", "B")
			b.rrel("T1", "A")
			b.acq("T2", "B", "b2")
			b.acq("T2", "A", "a2")
			b.rel("T2", "A")
			b.rel("T2", "B")
		}, []string{"T1:A>B@b1 ~ T2:B>A@a2"}},
		{"a read-mode guard guards nothing", func(b tb) {
			b.Fork("M", "T1", "")
			b.Fork("M", "T2", "")
			for _, x := range [][3]string{{"T1", "A", "B"}, {"T2", "B", "A"}} {
				b.racq(x[0], "G", "g")
				b.acq(x[0], x[1], x[1]+x[0])
				b.acq(x[0], x[2], x[2]+x[0])
				b.rel(x[0], x[2])
				b.rel(x[0], x[1])
				b.rrel(x[0], "G")
			}
		}, []string{"T1:G,A>B@BT1 ~ T2:G,B>A@AT2"}},
		{"three goroutines", func(b tb) {
			b.Fork("M", "T1", "")
			b.Fork("M", "T2", "")
			b.Fork("M", "T3", "")
			for _, x := range [][3]string{{"T1", "A", "B"}, {"T2", "B", "C"}, {"T3", "C", "A"}} {
				b.acq(x[0], x[1], "")
				b.acq(x[0], x[2], x[2]+"@"+x[0])
				b.rel(x[0], x[2])
				b.rel(x[0], x[1])
			}
		}, []string{"T1:A>B@B@T1 ~ T2:B>C@C@T2 ~ T3:C>A@A@T3"}},
		{"RWMutex read-write-read", func(b tb) {
			// A Lock between T1's two RLocks waits for the first; the
			// second waits for the Lock.
			b.Fork("M", "T1", "")
			b.Fork("M", "T2", "")
			b.racq("T1", "A", "r1")
			b.racq("T1", "A", "r2")
			b.rrel("T1", "A")
			b.rrel("T1", "A")
			b.acq("T2", "A", "w")
			b.rel("T2", "A")
		}, []string{"RR T1:A>A@r2 ~ T2:>A@w"}},
		{"read-write-read with the writer ordered after", func(b tb) {
			b.Fork("M", "T1", "")
			b.Fork("M", "T2", "")
			b.racq("T1", "A", "r1")
			b.racq("T1", "A", "r2")
			b.rrel("T1", "A")
			b.rrel("T1", "A")
			b.Snd("T1", "ch")
			b.Rcv("T2", "ch")
			b.acq("T2", "A", "w")
			b.rel("T2", "A")
		}, nil},
		{"a recursive read lock and no writer", func(b tb) {
			b.Fork("M", "T1", "")
			b.racq("T1", "A", "r1")
			b.racq("T1", "A", "r2")
			b.rrel("T1", "A")
			b.rrel("T1", "A")
		}, nil},
		{"one goroutine both ways", func(b tb) {
			b.acq("M", "A", "")
			b.acq("M", "B", "")
			b.rel("M", "B")
			b.rel("M", "A")
			b.acq("M", "B", "")
			b.acq("M", "A", "")
			b.rel("M", "A")
			b.rel("M", "B")
		}, nil},
	} {
		b := tb{trace.NewBuilder()}
		c.build(b)
		got := cycles(t, b.Trace())
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s: cycles\n%s\nwant\n%s", c.name, strings.Join(got, "\n"), strings.Join(c.want, "\n"))
		}
	}
}

// lockTrace draws a small well-formed trace: M forks two or three workers,
// which take three locks (nested at most two deep, some in read mode),
// read and write a variable, and sometimes send or receive on one object;
// M joins some at the end. The run itself never deadlocks: an acquire is
// drawn only when the lock is free for it.
func lockTrace(seed uint64) *trace.Trace {
	r := rand.New(rand.NewPCG(seed, 0xD1CE))
	b := tb{trace.NewBuilder()}
	type gor struct {
		name string
		held []string
		read []bool
	}
	gs := []*gor{{name: "M"}}
	for i := range 2 + r.IntN(2) {
		g := &gor{name: fmt.Sprintf("T%d", i+1)}
		b.Fork("M", g.name, "")
		gs = append(gs, g)
	}
	writer := map[string]string{}
	readers := map[string]int{}
	site := 0
	target := 12 + r.IntN(10)
	for steps, tries := 0, 0; steps < target && tries < 1000; tries++ {
		g := gs[1+r.IntN(len(gs)-1)]
		switch k := r.IntN(20); {
		case k < 16:
			if len(g.held) == 2 && r.IntN(2) == 0 || len(g.held) == 1 && r.IntN(4) == 0 {
				i := len(g.held) - 1
				l := g.held[i]
				if g.read[i] {
					b.rrel(g.name, l)
					readers[l]--
				} else {
					b.rel(g.name, l)
					delete(writer, l)
				}
				g.held, g.read = g.held[:i], g.read[:i]
				break
			}
			l := []string{"A", "B", "C"}[r.IntN(3)]
			if len(g.held) >= 2 || slices.Contains(g.held, l) || writer[l] != "" {
				continue
			}
			site++
			s := fmt.Sprintf("s%d", site)
			if r.IntN(4) == 0 {
				b.racq(g.name, l, s)
				readers[l]++
				g.held, g.read = append(g.held, l), append(g.read, true)
			} else {
				if readers[l] > 0 {
					continue
				}
				b.acq(g.name, l, s)
				writer[l] = g.name
				g.held, g.read = append(g.held, l), append(g.read, false)
			}
		case k < 18:
			if r.IntN(2) == 0 {
				b.Write(g.name, "x", "")
			} else {
				b.Read(g.name, "x", "")
			}
		case k < 19:
			b.Snd(g.name, "ch")
		default:
			b.Rcv(g.name, "ch")
		}
		steps++
	}
	for _, g := range gs[1:] {
		for i := len(g.held) - 1; i >= 0; i-- {
			if g.read[i] {
				b.rrel(g.name, g.held[i])
			} else {
				b.rel(g.name, g.held[i])
			}
		}
		if r.IntN(2) == 0 {
			b.Join("M", g.name)
		}
	}
	return b.Trace()
}

// TestAgainstOracle: on thousands of random small traces, every deadlock
// some correct reordering reaches (detect/reference, by brute force) is a
// cycle the detector reports. The converse does not hold (cycles are
// potential: the oracle keeps every read on the write it saw, and does not
// count a writer waiting for readers), and is counted, not asserted.
func TestAgainstOracle(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 500
	}
	var dl, reported, both int
	for seed := range uint64(n) {
		tr := lockTrace(seed)
		o := reference.PredictableRaces(tr)
		got := cycles(t, tr)
		if o.Deadlock {
			dl++
		}
		if len(got) > 0 {
			reported++
		}
		if o.Deadlock && len(got) > 0 {
			both++
		}
		if o.Deadlock && len(got) == 0 {
			t.Errorf("seed %d: a reachable deadlock, no cycle reported:\n%s", seed, dump(tr))
		}
	}
	t.Logf("%d traces: %d with a reachable deadlock, %d with a reported cycle, %d both", n, dl, reported, both)
	if dl == 0 {
		t.Errorf("no trace with a deadlock: the generator tests nothing")
	}
}

func dump(tr *trace.Trace) string {
	var b strings.Builder
	for _, e := range tr.Events {
		fmt.Fprintf(&b, "  %s %s %s %s\n", tr.M.Goroutine(e.G).Label(), e.Op, tr.M.NameOf(e.Obj), tr.M.Site(e.Site))
	}
	return b.String()
}

// lockChannels runs the detector on a text trace and renders its
// LockChannel cycles as "waiter holds L, send|recv c@site ~ requester
// L@site then@site".
func lockChannels(t *testing.T, src string) []string {
	t.Helper()
	tr, err := text.Parse("t.rktx", text.WithForks(src))
	if err != nil {
		t.Fatal(err)
	}
	d := deadlock.New(deadlock.Options{})
	if _, err := detect.Run(tr.Iter(), d); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range d.Cycles() {
		if c.Kind != deadlock.LockChannel {
			continue
		}
		w, r := c.Deps[0], c.Deps[1]
		var held []string
		for _, h := range w.Held {
			held = append(held, tr.M.NameOf(h.Lock))
		}
		dir := "recv"
		if w.Send {
			dir = "send"
		}
		out = append(out, fmt.Sprintf("%s holds %s, %s %s@%s ~ %s %s@%s then@%s", tr.M.Goroutine(w.G).Label(), strings.Join(held, ","), dir, tr.M.NameOf(w.Lock),
			tr.M.Site(w.Site).File, tr.M.Goroutine(r.G).Label(), tr.M.NameOf(r.Lock), tr.M.Site(r.Site).File, tr.M.Site(r.Then).File))
	}
	return out
}

// A lock held across a channel operation (bench/blocking's lockchan): the
// producer P sends on unbuffered c holding mu; the consumer M took mu
// before its receive, unordered with the send. Each case below changes
// one thing that rules the deadlock out.
func TestLockChannel(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      []string
	}{
		{"consumer locks, then receives; producer sends holding the lock", `
M|acq(mu)|consume.go
M|rel(mu)
M|snd(c=recv)|recv.go
P|acq(mu)|produce.go
P|snd(c=send/0)|send.go
P|rcv(c=sent/1)
M|rcv(c=recvd/1)
P|rel(mu)
`, []string{"P holds mu, send c@send.go ~ M mu@consume.go then@recv.go"}},
		{"the producer begins first", `
M|acq(mu)|consume.go
M|rel(mu)
P|acq(mu)|produce.go
P|snd(c=send/0)|send.go
M|snd(c=recv)|recv.go
M|rcv(c=recvd/1)
P|rcv(c=sent/1)
P|rel(mu)
`, []string{"P holds mu, send c@send.go ~ M mu@consume.go then@recv.go"}},
		{"a receiver holding the lock, the sender locks first", `
P|acq(mu)|produce.go
P|rel(mu)
M|acq(mu)|consume.go
M|snd(c=recv)|recv.go
P|snd(c=send/0)|send.go
P|rcv(c=sent/1)
M|rcv(c=recvd/1)
M|rel(mu)
`, []string{"M holds mu, recv c@recv.go ~ P mu@produce.go then@send.go"}},
		{"the consumer's Lock is ordered before the producer's by a channel", `
M|acq(mu)|consume.go
M|rel(mu)
M|snd(d=send/1)
P|snd(d=recv)
P|rcv(d=recvd/1)
M|rcv(d=sent/1)
M|snd(c=recv)|recv.go
P|acq(mu)|produce.go
P|snd(c=send/0)|send.go
P|rcv(c=sent/1)
M|rcv(c=recvd/1)
P|rel(mu)
`, nil},
		{"a send into a buffer", `
M|acq(mu)|consume.go
M|rel(mu)
M|snd(c=recv)|recv.go
P|acq(mu)|produce.go
P|snd(c=send/1)|send.go
P|rcv(c=sent/1)
M|rcv(c=recvd/1)
P|rel(mu)
`, nil},
		{"the lock released before the send", `
M|acq(mu)|consume.go
M|rel(mu)
M|snd(c=recv)|recv.go
P|acq(mu)|produce.go
P|rel(mu)
P|snd(c=send/0)|send.go
P|rcv(c=sent/1)
M|rcv(c=recvd/1)
`, nil},
		{"the consumer takes another lock", `
M|acq(nu)|consume.go
M|rel(nu)
M|snd(c=recv)|recv.go
P|acq(mu)|produce.go
P|snd(c=send/0)|send.go
P|rcv(c=sent/1)
M|rcv(c=recvd/1)
P|rel(mu)
`, nil},
		{"a read lock held across the send", `
M|racq(mu)|consume.go
M|rrel(mu)
M|snd(c=recv)|recv.go
P|racq(mu)|produce.go
P|snd(c=send/0)|send.go
P|rcv(c=sent/1)
M|rcv(c=recvd/1)
P|rrel(mu)
`, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := lockChannels(t, c.src); !slices.Equal(got, c.want) {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// A Mutex used as a semaphore (Go's race suite, TestNoRaceMutexSemaphore):
// M locks, P unlocks, then M waits in a receive; M holds nothing then, so
// Q's Lock before its send is no lock held across a channel operation.
func TestLockChannelSemaphore(t *testing.T) {
	src := `
M|acq(mu)|lock.go
P|rel(mu)
M|snd(c=recv)|recv.go
Q|acq(mu)|qlock.go
Q|rel(mu)
Q|snd(c=send/2)|send.go
Q|rcv(c=sent/1)
M|rcv(c=recvd/1)
`
	if got := lockChannels(t, src); len(got) != 0 {
		t.Errorf("got %q, want none", got)
	}
}
