package rkt

import (
	"bytes"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/racekit/racekit/trace"
)

// A step is one call a Writer receives: a definition or an event.
type step struct {
	site  *trace.Site // DefineSite with the next site ID
	gor   *trace.Goroutine
	name  *trace.Name
	event *trace.Event
}

// counts are the sizes of a Meta's tables.
type counts struct{ sites, goroutines, names int }

func countsOf(m *trace.Meta) counts { return counts{len(m.Sites), len(m.Goroutines), len(m.Names)} }

// expectation is what reading back a written script must give.
type expectation struct {
	events []trace.Event // normalized: see normalize
	metaAt []counts      // Meta's sizes when each event is returned
	meta   *trace.Meta   // Meta after the last step
}

// normalize is what the format keeps of an event: no Value where the op
// has none or it is unknown, Addrs sorted and nil when empty.
func normalize(e trace.Event) trace.Event {
	e = e.Clone()
	if !trace.StoresValue(e.Op, e.Flags) {
		e.Value = 0
	}
	if len(e.Addrs) == 0 {
		e.Addrs = nil
	}
	slices.Sort(e.Addrs)
	return e
}

func expect(steps []step) expectation {
	x := expectation{meta: trace.NewMeta()}
	for _, s := range steps {
		switch {
		case s.site != nil:
			_ = x.meta.DefineSite(trace.SiteID(len(x.meta.Sites)), *s.site)
		case s.gor != nil:
			_ = x.meta.DefineGoroutine(*s.gor)
		case s.name != nil:
			x.meta.SetName(s.name.Obj, s.name.Name)
		case s.event.Op.IsRange():
			// The words it stands for, listed here by element and offset.
			sp := trace.Span(s.event.Value)
			op := s.event.Op.WordOp()
			for i := uint64(0); i < sp.Count(); i++ {
				for off := uint64(0); off < sp.Stride(); off += 8 {
					w := *s.event
					w.Op, w.Flags, w.Value, w.Obj = op, trace.FlagValueUnknown, 0, s.event.Obj+i*sp.Stride()+off
					x.events = append(x.events, w)
					x.metaAt = append(x.metaAt, countsOf(x.meta))
				}
			}
		case s.event.Flags&trace.FlagGoAtomic != 0:
			var out [trace.GoAtomicSeqs]trace.Event
			trace.GoAtomicEvents(s.event, &out)
			for _, e := range out {
				x.events = append(x.events, normalize(e))
				x.metaAt = append(x.metaAt, countsOf(x.meta))
			}
		default:
			x.events = append(x.events, normalize(*s.event))
			x.metaAt = append(x.metaAt, countsOf(x.meta))
		}
	}
	return x
}

// writeStep passes one step to w.
func writeStep(w *Writer, s step) error {
	switch {
	case s.site != nil:
		return w.DefineSite(trace.SiteID(w.sites), *s.site)
	case s.gor != nil:
		return w.DefineGoroutine(*s.gor)
	case s.name != nil:
		return w.DefineName(s.name.Obj, s.name.Name)
	default:
		return w.WriteEvent(s.event)
	}
}

// encode writes steps with the given block size and closes the writer.
func encode(t testing.TB, steps []step, blockSize int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriterSize(&buf, blockSize)
	for i, s := range steps {
		if err := writeStep(w, s); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// result is what a Reader gave.
type result struct {
	events   []trace.Event
	metaAt   []counts
	meta     *trace.Meta
	warnings []string
	err      error // nil when Next ended with io.EOF
}

func decode(data []byte, name string) result {
	r := NewReader(bytes.NewReader(data), name)
	var res result
	var e trace.Event
	for {
		err := r.Next(&e)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				res.err = err
			}
			break
		}
		res.events = append(res.events, e.Clone())
		res.metaAt = append(res.metaAt, countsOf(r.Meta()))
	}
	res.meta, res.warnings = r.Meta(), r.Warnings()
	return res
}

// checkSameMeta compares the exported tables of two Metas.
func checkSameMeta(t testing.TB, got, want *trace.Meta) {
	t.Helper()
	if !slices.Equal(got.Sites, want.Sites) {
		t.Errorf("sites:\n got %v\nwant %v", got.Sites, want.Sites)
	}
	if !slices.Equal(got.Goroutines, want.Goroutines) {
		t.Errorf("goroutines:\n got %v\nwant %v", got.Goroutines, want.Goroutines)
	}
	for i := range want.Goroutines {
		if got.GoroutineDefined(trace.GID(i)) != want.GoroutineDefined(trace.GID(i)) {
			t.Errorf("goroutine %d defined: got %v, want %v", i, got.GoroutineDefined(trace.GID(i)), want.GoroutineDefined(trace.GID(i)))
		}
	}
	if !slices.Equal(got.Names, want.Names) {
		t.Errorf("names:\n got %v\nwant %v", got.Names, want.Names)
	}
}

func sameEvent(a, b *trace.Event) bool {
	return a.Seq == b.Seq && a.G == b.G && a.Op == b.Op && a.Flags == b.Flags && a.Site == b.Site &&
		a.Obj == b.Obj && a.Value == b.Value && slices.Equal(a.Addrs, b.Addrs) && (a.Addrs == nil) == (b.Addrs == nil)
}

// checkRoundTrip writes steps, reads them back and checks that every event,
// the Meta seen with each event, and the final Meta are as written.
func checkRoundTrip(t testing.TB, steps []step, blockSize int) []byte {
	t.Helper()
	data := encode(t, steps, blockSize)
	want := expect(steps)
	got := decode(data, "rt.rkt")
	if got.err != nil || len(got.warnings) != 0 {
		t.Fatalf("reading back: err %v, warnings %q", got.err, got.warnings)
	}
	if len(got.events) != len(want.events) {
		t.Fatalf("read %d events, wrote %d", len(got.events), len(want.events))
	}
	for i := range want.events {
		if !sameEvent(&got.events[i], &want.events[i]) {
			t.Fatalf("event %d:\n got %+v\nwant %+v", i, got.events[i], want.events[i])
		}
		if got.metaAt[i] != want.metaAt[i] {
			t.Fatalf("event %d: Meta sizes %+v, want %+v (the definitions written before it)", i, got.metaAt[i], want.metaAt[i])
		}
	}
	checkSameMeta(t, got.meta, want.meta)
	return data
}

// A source of choices: *rand.Rand, or fuzz bytes.
type source interface {
	Uint64() uint64
	IntN(n int) int
}

// byteSource draws choices from fuzz input; once it is used up, every
// choice is 0.
type byteSource struct{ b []byte }

func (s *byteSource) next() byte {
	if len(s.b) == 0 {
		return 0
	}
	c := s.b[0]
	s.b = s.b[1:]
	return c
}

func (s *byteSource) Uint64() uint64 {
	var v uint64
	for i := 0; i < 8; i++ {
		v = v<<8 | uint64(s.next())
	}
	return v
}

func (s *byteSource) IntN(n int) int {
	if n <= 256 {
		return int(s.next()) % n
	}
	return int(s.Uint64() % uint64(n))
}

// genScript makes a stream of n steps exercising the whole format:
// every op and flag, values and objects small and huge, near and far, Addrs
// sets unsorted with duplicates, Seq steps, gaps and jumps backwards, and
// definitions of all three kinds (including a repeated name) between the
// events.
func genScript(src source, n int) []step {
	var steps []step
	sites := 1
	var gors []trace.GID
	nextG := trace.GID(0)
	defineG := func() {
		id := nextG + trace.GID(src.IntN(3)) // GIDs may skip a few
		nextG = id + 1
		parent := trace.NoParent
		if len(gors) > 0 && src.IntN(4) != 0 {
			parent = gors[src.IntN(len(gors))]
		}
		g := trace.Goroutine{ID: id, Parent: parent, Site: trace.SiteID(src.IntN(sites))}
		if src.IntN(2) == 0 {
			g.Name = "T" + string(rune('a'+src.IntN(26)))
		}
		gors = append(gors, id)
		steps = append(steps, step{gor: &g})
	}
	defineG()
	seq := src.Uint64() % 1000
	var obj uint64 = 0xc000010000
	pick := func() uint64 {
		switch src.IntN(6) {
		case 0:
			return src.Uint64()
		case 1:
			return [...]uint64{0, 1, math.MaxUint64, 1 << 63, math.MaxUint32}[src.IntN(5)]
		default:
			return obj + 8*uint64(src.IntN(64)) - 256
		}
	}
	for len(steps) < n {
		switch src.IntN(24) {
		case 0:
			files := []string{"main.go", "x/y.go", "", "ünïcode.go"}
			s := trace.Site{File: files[src.IntN(len(files))], Line: src.IntN(3000), Col: src.IntN(80)}
			if src.IntN(2) == 0 {
				s.Func = "pkg.F" + string(rune('a'+src.IntN(26)))
			}
			if src.IntN(8) == 0 {
				s.Line = math.MaxInt32
			}
			if src.IntN(4) == 0 {
				s.Callee = trace.Frame{Func: "strings.(*Builder).WriteString", File: files[src.IntN(len(files))], Line: src.IntN(3000)}
			}
			s.Wide = src.IntN(4) == 0
			if src.IntN(4) == 0 {
				s.Call = trace.Call{EndLine: 1 + src.IntN(3000), EndCol: src.IntN(80)}
				if src.IntN(2) == 0 {
					s.Call.Func = "pkg.G" + string(rune('a'+src.IntN(26)))
				}
			}
			sites++
			steps = append(steps, step{site: &s})
		case 1:
			defineG()
		case 2:
			nm := trace.Name{Obj: pick(), Name: "v" + string(rune('a'+src.IntN(26)))}
			steps = append(steps, step{name: &nm})
			if src.IntN(4) == 0 { // a second name for the same object is ignored
				steps = append(steps, step{name: &trace.Name{Obj: nm.Obj, Name: "other"}})
			}
		default:
			e := &trace.Event{G: gors[src.IntN(len(gors))], Op: trace.Op(1 + src.IntN(trace.NumOps-1))}
			switch src.IntN(10) {
			case 0:
				seq += 2 + uint64(src.IntN(1000))
			case 1:
				seq = src.Uint64() // any jump, even backwards, round-trips
			default:
				seq++
			}
			e.Seq = seq
			e.Site = trace.SiteID(src.IntN(sites))
			obj = pick()
			e.Obj = obj
			switch {
			case e.Op == trace.OpFork || e.Op == trace.OpJoin:
				e.Obj &= math.MaxUint32
			case e.Op == trace.OpAcquire || e.Op == trace.OpRelease:
				if src.IntN(2) == 0 {
					e.Flags = trace.FlagReadLock
				}
			case e.Op.HasValue():
				if src.IntN(4) == 0 {
					e.Flags = trace.FlagValueUnknown
				}
			case e.Op == trace.OpMethodBegin:
				for k := src.IntN(6); k > 0; k-- {
					e.Addrs = append(e.Addrs, pick())
				}
				if len(e.Addrs) > 1 && src.IntN(3) == 0 {
					e.Addrs = append(e.Addrs, e.Addrs[0]) // duplicates are kept
				}
			}
			if src.IntN(3) == 0 {
				e.Value = src.Uint64()
			} else {
				e.Value = uint64(src.IntN(200))
			}
			if e.Op.IsAtomic() && src.IntN(2) == 0 {
				// One record for the four events of rt's atomic operation.
				e.Flags |= trace.FlagGoAtomic
				if e.Op == trace.OpAtomicLoad && src.IntN(3) == 0 {
					e.Flags |= trace.FlagCASFailed
				}
				e.Obj &^= trace.AtomicLockBit
				seq += trace.GoAtomicSeqs - 1
			}
			if (e.Op == trace.OpSyncRelease || e.Op == trace.OpSyncAcquire) && src.IntN(3) == 0 {
				// A channel message: every kind, ranges near and far.
				e.Flags = trace.FlagMessage
				los := []uint64{0, 1, 2, 1000, 1 << 30, trace.MsgMaxLo}
				lo := los[src.IntN(len(los))]
				hi := min(lo+uint64(src.IntN(3)), trace.MsgMaxLo)
				if e.Op == trace.OpSyncRelease {
					ws := []trace.ChanMsg{trace.MsgSendOf(uint64(src.IntN(100))), trace.MsgSendOf(math.MaxUint64), trace.MsgOf(trace.MsgRecv), trace.MsgOf(trace.MsgClose)}
					e.Value = uint64(ws[src.IntN(len(ws))])
				} else {
					ws := []trace.ChanMsg{trace.MsgRange(trace.MsgSent, lo, hi), trace.MsgRange(trace.MsgRecvd, lo, hi), trace.MsgOf(trace.MsgRecvClosed), trace.MsgRange(trace.MsgRecvAny, lo, hi)}
					e.Value = uint64(ws[src.IntN(len(ws))])
				}
			}
			if e.Op.IsRange() {
				strides := []uint64{1, 2, 8, 12, 24, 4096}
				sp, _ := trace.MakeSpan(strides[src.IntN(len(strides))], 1+uint64(src.IntN(5)))
				e.Flags, e.Value = 0, uint64(sp)
			}
			steps = append(steps, step{event: e})
		}
	}
	return steps
}

// realisticStream makes n events of a program whose goroutines share data:
// 8 goroutines each run a loop of tasks over 4096 words (8-byte stride) and
// 16 locks; a task is a critical section over the lock's words (not
// preempted, so locking stays well formed), a scan of unprotected words
// with small values, a function call, a channel hand-off or an atomic
// counter update. The scheduler switches goroutines every few events.
func realisticStream(n int) []step {
	rng := rand.New(rand.NewPCG(1, 2))
	const (
		nG     = 8
		words  = 4096
		locks  = 16
		base   = 0xc000100000
		lockAt = 0xc000400000
		fnAt   = 0x4a0000
		chanAt = 0xc000500000
	)
	var steps []step
	// Sites: 32 statements per goroutine's code.
	for i := 1; i <= nG*32; i++ {
		steps = append(steps, step{site: &trace.Site{File: "work.go", Line: 10 + i, Col: 5, Func: "main.worker"}})
	}
	for g := 0; g < nG; g++ {
		parent := trace.GID(0)
		if g == 0 {
			parent = trace.NoParent
		}
		steps = append(steps, step{gor: &trace.Goroutine{ID: trace.GID(g), Parent: parent, Site: trace.SiteID(g + 1)}})
	}
	for l := 0; l < locks; l++ {
		steps = append(steps, step{name: &trace.Name{Obj: lockAt + 8*uint64(l), Name: "mu" + string(rune('a'+l))}})
	}
	type gstate struct {
		queue  []trace.Event
		cursor uint64 // next unprotected word
		pc     int    // statement counter for sites
	}
	gs := make([]gstate, nG)
	for g := range gs {
		gs[g].cursor = uint64(rng.IntN(words))
	}
	values := make([]uint64, words)
	site := func(g, k int) trace.SiteID { return trace.SiteID(1 + g*32 + k%32) }
	refill := func(g int) {
		s := &gs[g]
		gid := trace.GID(g)
		add := func(op trace.Op, obj, val uint64) {
			s.pc++
			s.queue = append(s.queue, trace.Event{G: gid, Op: op, Obj: obj, Value: val, Site: site(g, s.pc)})
		}
		switch k := rng.IntN(20); {
		case k < 8: // critical section
			l := uint64(rng.IntN(locks))
			add(trace.OpAcquire, lockAt+8*l, 0)
			for i := 1 + rng.IntN(4); i > 0; i-- {
				w := l*words/locks + uint64(rng.IntN(words/locks))
				add(trace.OpRead, base+8*w, values[w])
				if rng.IntN(2) == 0 {
					values[w]++
					add(trace.OpWrite, base+8*w, values[w])
				}
			}
			add(trace.OpRelease, lockAt+8*l, 0)
		case k < 16: // scan of unprotected words
			for i := 2 + rng.IntN(6); i > 0; i-- {
				w := s.cursor % words
				s.cursor += 1 + uint64(rng.IntN(3))
				add(trace.OpRead, base+8*w, values[w])
				if rng.IntN(4) == 0 {
					values[w] = uint64(rng.IntN(100))
					add(trace.OpWrite, base+8*w, values[w])
				}
			}
		case k < 18: // a call
			f := fnAt + 64*uint64(rng.IntN(40))
			add(trace.OpFuncEnter, f, 0)
			w := uint64(rng.IntN(words))
			add(trace.OpRead, base+8*w, values[w])
			add(trace.OpFuncExit, f, 0)
		case k < 19: // channel hand-off
			c := chanAt + 96*uint64(rng.IntN(4))
			if rng.IntN(2) == 0 {
				add(trace.OpSyncRelease, c, 0)
			} else {
				add(trace.OpSyncAcquire, c, 0)
			}
		default: // atomic counter
			values[0]++
			add(trace.OpAtomicRMW, base, values[0])
		}
	}
	var seq uint64
	for count := 0; count < n; {
		g := rng.IntN(nG)
		s := &gs[g]
		if len(s.queue) == 0 {
			refill(g)
		}
		burst := 1 + rng.IntN(6)
		for len(s.queue) > 0 && count < n {
			e := s.queue[0]
			s.queue = s.queue[1:]
			e.Seq = seq
			seq++
			steps = append(steps, step{event: &e})
			count++
			// Preempt only outside critical sections.
			if burst--; burst <= 0 && !inCritical(s.queue) {
				break
			}
		}
	}
	return steps
}

// inCritical reports whether the queued events still hold a lock (a
// Release is pending).
func inCritical(queue []trace.Event) bool {
	for _, e := range queue {
		switch e.Op {
		case trace.OpRelease:
			return true
		case trace.OpAcquire:
			return false
		}
	}
	return false
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }
