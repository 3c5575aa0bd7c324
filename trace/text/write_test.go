package text_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/racekit/racekit/trace"
	"github.com/racekit/racekit/trace/text"
)

// writeText writes tr with a TextWriter.
func writeText(t *testing.T, tr *trace.Trace) string {
	t.Helper()
	var sb strings.Builder
	w := text.NewTextWriter(&sb)
	if _, err := trace.Copy(w, tr.Iter()); err != nil {
		t.Fatalf("Copy: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return sb.String()
}

// writeSTD writes tr with an STDWriter.
func writeSTD(t *testing.T, tr *trace.Trace, lossy bool) (string, *text.STDWriter) {
	t.Helper()
	var sb strings.Builder
	w := text.NewSTDWriter(&sb)
	w.Lossy = lossy
	if _, err := trace.Copy(w, tr.Iter()); err != nil {
		t.Fatalf("Copy: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return sb.String(), w
}

func parse(t *testing.T, src string) *trace.Trace {
	t.Helper()
	tr, err := text.Parse("test.rktx", src)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return tr
}

func parseSTD(t *testing.T, src string) *trace.Trace {
	t.Helper()
	evs, m := readSTD(t, src)
	return &trace.Trace{M: m, Events: evs}
}

// sameTrace checks that b is exactly a.
func sameTrace(t *testing.T, a, b *trace.Trace) {
	t.Helper()
	if d := diffTrace(a, b); d != "" {
		t.Error(d)
	}
}

// diffTrace describes the first difference between a and b: events,
// sites, goroutines (and which are defined) and names (in any order:
// Names is a set). It returns "" when there is none.
func diffTrace(a, b *trace.Trace) string {
	if len(a.Events) != len(b.Events) {
		return fmt.Sprintf("%d events, want %d", len(b.Events), len(a.Events))
	}
	for i := range a.Events {
		if !reflect.DeepEqual(a.Events[i], b.Events[i]) {
			return fmt.Sprintf("event %d:\n got %+v\nwant %+v", i, b.Events[i], a.Events[i])
		}
	}
	if !reflect.DeepEqual(a.M.Sites, b.M.Sites) {
		return fmt.Sprintf("sites:\n got %+v\nwant %+v", b.M.Sites, a.M.Sites)
	}
	if !reflect.DeepEqual(a.M.Goroutines, b.M.Goroutines) {
		return fmt.Sprintf("goroutines:\n got %+v\nwant %+v", b.M.Goroutines, a.M.Goroutines)
	}
	for g := range a.M.Goroutines {
		if a.M.GoroutineDefined(trace.GID(g)) != b.M.GoroutineDefined(trace.GID(g)) {
			return fmt.Sprintf("goroutine %d defined: got %v", g, b.M.GoroutineDefined(trace.GID(g)))
		}
	}
	if len(a.M.Names) != len(b.M.Names) {
		return fmt.Sprintf("names:\n got %+v\nwant %+v", b.M.Names, a.M.Names)
	}
	for _, n := range a.M.Names {
		if got := b.M.NameOf(n.Obj); got != n.Name {
			return fmt.Sprintf("name of %#x: got %q, want %q", n.Obj, got, n.Name)
		}
	}
	return ""
}

func TestSTDWriterOutput(t *testing.T) {
	b := trace.NewBuilder()
	b.Begin("main")
	b.Fork("main", "T1", "/src/a.go:3:2")
	b.Acq("T1", "L0")
	b.Read("T1", "V1", "12")
	b.WriteV("T1", "V1", 5, "a.go:13") // STD has no values
	b.Rel("T1", "L0")
	b.End("T1")
	b.Join("main", "T1")
	got, _ := writeSTD(t, b.Trace(), false)
	want := `main|begin|0
main|fork(T1)|/src/a.go:3:2
T1|acq(L0)|0
T1|r(V1)|12
T1|w(V1)|a.go:13
T1|rel(L0)|0
T1|end|0
main|join(T1)|0
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestSTDWriterFallbackTokens(t *testing.T) {
	// Unnamed goroutines and objects, names STD cannot hold, and names
	// shared by two goroutines or two objects get distinct fallbacks;
	// a site's function is not written; an unknown site is 0.
	tr := trace.NewTrace()
	m := tr.M
	_ = m.DefineSite(1, trace.Site{File: "/s/m.go", Line: 4, Col: 1, Func: "main.main"})
	_ = m.DefineSite(2, trace.Site{File: "/my src/x|y.go", Line: 9})
	_ = m.DefineGoroutine(trace.Goroutine{ID: 0, Parent: np})
	_ = m.DefineGoroutine(trace.Goroutine{ID: 1, Parent: 0, Name: "w"})
	_ = m.DefineGoroutine(trace.Goroutine{ID: 2, Parent: 0, Name: "w"})
	_ = m.DefineGoroutine(trace.Goroutine{ID: 3, Parent: 0, Name: "a b"})
	m.SetName(0xc000010000, "x")
	m.SetName(0xc000010008, "x")
	m.SetName(0xc000010010, "f(y)")
	tr.Events = []trace.Event{
		{G: 0, Op: trace.OpFork, Obj: 1, Site: 1},
		{G: 1, Op: trace.OpWrite, Obj: 0xc000010000, Flags: unk, Site: 2},
		{G: 2, Op: trace.OpWrite, Obj: 0xc000010008, Flags: unk},
		{G: 3, Op: trace.OpRead, Obj: 0xc000010010, Flags: unk},
		{G: 3, Op: trace.OpAcquire, Obj: 0xc000020000},
		{G: 3, Op: trace.OpRead, Obj: 0xc000030000, Flags: unk},
	}
	got, _ := writeSTD(t, tr, false)
	want := `T0|fork(w)|/s/m.go:4:1
w|w(x)|/my src/x_y.go:9
T2|w(Vc000010008)|0
T3|r(Vc000010010)|0
T3|acq(Lc000020000)|0
T3|r(Vc000030000)|0
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestSTDWriterRefusesWhatSTDCannotExpress(t *testing.T) {
	for _, c := range []struct {
		e   trace.Event
		msg string
	}{
		{trace.Event{Seq: 17, Op: trace.OpSyncRelease, Obj: 1}, "event seq 17: STD cannot express snd; use --lossy to drop it or racekit text format"},
		{trace.Event{Seq: 3, Op: trace.OpAcquire, Flags: trace.FlagReadLock, Obj: 1}, "event seq 3: STD cannot express racq; use --lossy to drop it or racekit text format"},
		{trace.Event{Seq: 4, Op: trace.OpRelease, Flags: trace.FlagReadLock, Obj: 1}, "event seq 4: STD cannot express rrel; use --lossy to drop it or racekit text format"},
		{trace.Event{Seq: 5, Op: trace.OpAtomicLoad, Obj: 1}, "event seq 5: STD cannot express aload; use --lossy to drop it or racekit text format"},
		{trace.Event{Seq: 6, Op: trace.OpMethodBegin, Obj: 1}, "event seq 6: STD cannot express call; use --lossy to drop it or racekit text format"},
		{trace.Event{Seq: 7, Op: trace.OpFuncEnter, Obj: 1}, "event seq 7: STD cannot express enter; use --lossy to drop it or racekit text format"},
		{trace.Event{Seq: 8, Op: trace.OpRegionEnd, Obj: 1}, "event seq 8: STD cannot express rend; use --lossy to drop it or racekit text format"},
	} {
		var sb strings.Builder
		w := text.NewSTDWriter(&sb)
		err := w.WriteEvent(&c.e)
		var ue *text.UnsupportedOpError
		if !errors.As(err, &ue) || err.Error() != c.msg || ue.Seq != c.e.Seq || ue.Op != c.e.Op {
			t.Errorf("%v: error %v, want %s", c.e.Op, err, c.msg)
		}
		// The writer goes on: the refused event is simply not written.
		if err := w.WriteEvent(&trace.Event{Op: trace.OpBegin}); err != nil {
			t.Errorf("after refusal: %v", err)
		}
		if err := w.Close(); err != nil || sb.String() != "T0|begin|0\n" {
			t.Errorf("output %q, %v", sb.String(), err)
		}
	}
}

func TestSTDWriterLossy(t *testing.T) {
	tr := parse(t, `T0|fork(T1)|a.go:1
T1|enter(f)
T1|racq(mu)
T1|r(x=1)|a.go:2
T1|rrel(mu)
T1|acq(m)
T1|snd(ch)
T1|rel(m)
T0|rcv(ch)
T0|aload(a=3)
T0|astore(a)
T0|armw(a)
T0|call(m;x)
T0|ret(m)
T0|rbegin(r)
T0|rend(r)
T1|exit(f)
T0|join(T1)
`)
	got, w := writeSTD(t, tr, true)
	want := `T0|fork(T1)|a.go:1
T1|r(x)|a.go:2
T1|acq(m)|0
T1|rel(m)|0
T0|join(T1)|0
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	wantDropped := map[trace.Op]int64{
		trace.OpFuncEnter: 1, trace.OpFuncExit: 1, trace.OpAcquire: 1, trace.OpRelease: 1,
		trace.OpSyncRelease: 1, trace.OpSyncAcquire: 1, trace.OpAtomicLoad: 1, trace.OpAtomicStore: 1,
		trace.OpAtomicRMW: 1, trace.OpMethodBegin: 1, trace.OpMethodEnd: 1, trace.OpRegionBegin: 1, trace.OpRegionEnd: 1,
	}
	if !reflect.DeepEqual(w.Dropped(), wantDropped) {
		t.Errorf("Dropped() = %v, want %v", w.Dropped(), wantDropped)
	}
}

func TestSTDRoundTrip(t *testing.T) {
	// STD -> events -> STD is the identity on canonical STD.
	src := `T0|begin|1
T0|fork(T1)|3
T1|acq(L0)|25
T1|r(V1)|/src/a.go:12:3
T1|w(V1)|13
T1|rel(L0)|26
T1|end|6
T0|join(T1)|40
T0|end|41
`
	got, _ := writeSTD(t, parseSTD(t, src), false)
	if got != src {
		t.Errorf("got\n%s\nwant\n%s", got, src)
	}
}

func TestSTDThroughTextAndBack(t *testing.T) {
	// STD -> racekit text -> STD: the text is the STD itself (a superset
	// needs no directives for it), and it comes back unchanged.
	src := "T0|fork(T1)|3\nT1|acq(L0)|25\nT1|w(V1)|12\nT1|rel(L0)|26\nT0|join(T1)|40\n"
	std := parseSTD(t, src)
	txt := writeText(t, std)
	if txt != src {
		t.Errorf("text:\n%s\nwant\n%s", txt, src)
	}
	back := parse(t, txt)
	sameTrace(t, std, back)
	if got, _ := writeSTD(t, back, false); got != src {
		t.Errorf("STD again:\n%s\nwant\n%s", got, src)
	}
}

// canonical is racekit text as the writer writes it: every form once.
const canonical = `#!site main.go:10:2 func=main.main
T0|fork(T1)|main.go:10:2
T1|begin
T1|w(x=5)|main.go:12:3
T1|r(x)|main.go:13:3
T1|w(x=0xc000012345)|main.go:13:3
T1|acq(mu)|main.go:14
T1|rel(mu)
T1|racq(rw)
T1|rrel(rw)
T1|snd(ch)
T0|rcv(ch)
T0|aload(a=1)
T0|astore(a)
T0|armw(a=2)
T0|call(m;x,0xc000040000,y)
T0|ret(m)
T0|call(n)
T0|ret(n)
T0|enter(f)
T0|exit(f)
T0|rbegin(r)
T0|rend(r)
T0|r(0xc000050000)|"/my src/b.go:3:4"
#!addr "0x10" 0x1060
T0|r("0x10")
#!addr obj 0xc000060000
T0|w(obj)
"main.(*T).M"|enter("main.(*T).M")|b.go
T1|end
#!seq 100
T0|join(T1)
#!site c.go:7 func=main.f
#!g idle parent=0
#!addr spare 0xd000
`

func TestTextWriterCanonicalRoundTrip(t *testing.T) {
	if got := writeText(t, parse(t, canonical)); got != canonical {
		t.Errorf("got\n%s\nwant\n%s", got, canonical)
	}
}

func TestTextWriterCanonicalizes(t *testing.T) {
	// Non-canonical spellings come back in the writer's: values decimal
	// below 0x10000 and hex above, no spaces, no needless quotes, no
	// "()" after begin, "call(m)" for an empty address set.
	in := " T0 | w( x = 0x10 ) | a.go:1 \n\"T0\"|w(x=1048576)\nT0|begin()\nT0|call(m;)\n# comment\n\nT0|r(\"y\")|\"a.go:1\"\n"
	want := "T0|w(x=16)|a.go:1\nT0|w(x=0x100000)\nT0|begin\nT0|call(m)\nT0|r(y)|a.go:1\n"
	if got := writeText(t, parse(t, in)); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// runTrace is a trace as a live run would record it: unnamed goroutines
// and objects, sites with functions, GIDs with a gap, duplicate names and
// sites, an object named with an ID the reader would give another, Seq
// gaps, and definitions no event uses.
func runTrace() *trace.Trace {
	tr := trace.NewTrace()
	m := tr.M
	for _, s := range []trace.Site{
		{File: "/src/main.go", Line: 10, Col: 2, Func: "main.main"},
		{File: "/src/main.go", Line: 14, Col: 6, Func: "main.main.func1"},
		{File: "/src/main.go", Line: 20, Col: 3},
		{File: "/src/main.go", Line: 21, Col: 3},
		{File: "/src/main.go", Line: 21, Col: 3},
		{File: "a.go:5"},
		{Line: 3},
		{File: "/src/x.go", Line: 1},
	} {
		_ = m.DefineSite(trace.SiteID(len(m.Sites)), s)
	}
	_ = m.DefineGoroutine(trace.Goroutine{ID: 0, Parent: np})
	_ = m.DefineGoroutine(trace.Goroutine{ID: 1, Parent: 0, Site: 1})
	_ = m.DefineGoroutine(trace.Goroutine{ID: 3, Parent: np, Name: "worker"})
	_ = m.DefineGoroutine(trace.Goroutine{ID: 4, Parent: 3, Name: "idle"})
	m.SetName(0xc000010000, "counter")
	m.SetName(0xc000010008, "counter")
	m.SetName(0x1000, "mu")
	m.SetName(0x1008, "0x1008")
	m.SetName(0x5000, "unused")
	tr.Events = []trace.Event{
		{Seq: 0, G: 0, Op: trace.OpFork, Obj: 1, Site: 1},
		{Seq: 1, G: 1, Op: trace.OpWrite, Obj: 0xc000010000, Value: 0xc000020000, Site: 2},
		{Seq: 2, G: 1, Op: trace.OpAtomicRMW, Obj: 0xc000010008, Flags: unk},
		{Seq: 5, G: 0, Op: trace.OpAcquire, Obj: 0x1000, Flags: trace.FlagReadLock},
		{Seq: 6, G: 3, Op: trace.OpRead, Obj: 0xc000010000, Value: 7, Site: 5},
		{Seq: 7, G: 0, Op: trace.OpMethodBegin, Obj: 0x7f00, Addrs: []uint64{0xc000010000, 0xc000030000, 0x1008}},
		{Seq: 8, G: 3, Op: trace.OpRead, Obj: 0x1008, Flags: unk, Site: 6},
		{Seq: 9, G: 3, Op: trace.OpWrite, Obj: 0x1008, Value: 1, Site: 7},
		{Seq: 10, G: 0, Op: trace.OpJoin, Obj: 1},
	}
	return tr
}

func TestTextWriterRunTrace(t *testing.T) {
	tr := runTrace()
	got := writeText(t, tr)
	want := `#!g T0 name=""
#!site /src/main.go:10:2 func=main.main
#!g T1 parent=0 site=/src/main.go:10:2 name=""
T0|fork(T1)|/src/main.go:10:2
#!addr counter 0xc000010000
#!site /src/main.go:14:6 func=main.main.func1
T1|w(counter=0xc000020000)|/src/main.go:14:6
#!addr counter~2 0xc000010008 counter
T1|armw(counter~2)
#!seq 5
T0|racq(mu)
#!g worker id=3
#!site /src/main.go:20:3
#!site /src/main.go:21:3
#!site /src/main.go:21:3~2 /src/main.go:21:3
worker|r(counter=7)|/src/main.go:21:3~2
T0|call(0x7f00;counter,0xc000030000,"0x1008")
#!site a.go:5 file=a.go:5 line=0 col=0
worker|r("0x1008")|a.go:5
#!site :3 file="" line=3 col=0
worker|w("0x1008"=1)|:3
T0|join(T1)
#!site /src/x.go:1
#!g idle id=4 parent=3
#!addr unused 0x5000
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	sameTrace(t, tr, parse(t, got))
}

func TestTextWriterErrors(t *testing.T) {
	var sb strings.Builder
	w := text.NewTextWriter(&sb)
	if err := w.WriteEvent(&trace.Event{Seq: 4, Op: trace.OpRead, Flags: trace.FlagReadLock}); err == nil ||
		err.Error() != "event seq 4: read-lock flag on r" {
		t.Errorf("invalid event: %v", err)
	}
	if err := w.WriteEvent(&trace.Event{Op: trace.OpRead, Site: 3}); err == nil || err.Error() != "site 3 used but not defined" {
		t.Errorf("undefined site: %v", err)
	}
}

// randomTrace builds a trace as a recorder could: sites with functions
// and odd positions, duplicates among sites and names, sparse and
// unnamed goroutines, named and unnamed objects at arbitrary IDs, every
// op, and Seq with gaps. Fields an op does not use are zero, since text
// does not keep them.
func randomTrace(rng *rand.Rand) *trace.Trace {
	tr := trace.NewTrace()
	m := tr.M
	files := []string{"/src/main.go", "a.go:5", "", "C:\\x y\\b.go", "12", "?", "f\"|(),;=#.go"}
	funcs := []string{"", "", "main.main", "main.(*T).M", "pkg.F[go.shape.int]"}
	for i := rng.IntN(8); i > 0; i-- {
		s := trace.Site{File: files[rng.IntN(len(files))], Func: funcs[rng.IntN(len(funcs))]}
		if rng.IntN(4) > 0 {
			s.Line = rng.IntN(40)
			if rng.IntN(2) == 0 {
				s.Col = rng.IntN(10)
			}
		}
		_ = m.DefineSite(trace.SiteID(len(m.Sites)), s)
	}
	site := func() trace.SiteID { return trace.SiteID(rng.IntN(len(m.Sites))) }
	names := []string{"", "", "x", "x", "T1", "T0", "mu", "0x1000", "a b", "#c", "\"q\"", "main.(*T).M"}
	var gids []trace.GID
	for g := 0; g < 6; g++ {
		if rng.IntN(3) == 0 && g > 0 {
			continue // a gap
		}
		gr := trace.Goroutine{ID: trace.GID(g), Parent: np, Name: names[rng.IntN(len(names))]}
		if len(gids) > 0 && rng.IntN(2) == 0 {
			gr.Parent = gids[rng.IntN(len(gids))]
			gr.Site = site()
		}
		_ = m.DefineGoroutine(gr)
		gids = append(gids, gr.ID)
	}
	objs := []uint64{0x1000, 0x1008, 0x1010, 0xc000010000, 0xc000010008, 0x7f, 0}
	for _, o := range objs {
		if n := names[rng.IntN(len(names))]; n != "" {
			m.SetName(o, n)
		}
	}
	obj := func() uint64 { return objs[rng.IntN(len(objs))] }
	seq := uint64(rng.IntN(3))
	for i := rng.IntN(30); i > 0; i-- {
		e := trace.Event{Seq: seq, G: gids[rng.IntN(len(gids))], Op: trace.Op(1 + rng.IntN(trace.NumOps-1)), Site: site()}
		if e.Op.IsRange() {
			e.Op = trace.OpRead // written as its words (TestTextWriterRangeAsWords)
		}
		seq += 1 + uint64(rng.IntN(2))*uint64(rng.IntN(100))
		switch {
		case e.Op == trace.OpFork || e.Op == trace.OpJoin:
			e.Obj = uint64(gids[rng.IntN(len(gids))])
		case e.Op == trace.OpBegin || e.Op == trace.OpEnd:
		default:
			e.Obj = obj()
		}
		if e.Op.HasValue() {
			if rng.IntN(2) == 0 {
				e.Flags = trace.FlagValueUnknown
			} else {
				e.Value = []uint64{0, 5, 0xffff, 0x10000, ^uint64(0)}[rng.IntN(5)]
			}
		}
		if (e.Op == trace.OpAcquire || e.Op == trace.OpRelease) && rng.IntN(2) == 0 {
			e.Flags = trace.FlagReadLock
		}
		if e.Op == trace.OpMethodBegin {
			for j := rng.IntN(4); j > 0; j-- {
				e.Addrs = append(e.Addrs, obj())
			}
		}
		tr.Events = append(tr.Events, e)
	}
	return tr
}

func TestTextWriterRandomTraces(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 500; i++ {
		tr := randomTrace(rng)
		out := writeText(t, tr)
		back, err := text.Parse("out.rktx", out)
		if err != nil {
			t.Fatalf("trace %d written as\n%s\ndoes not read back: %v", i, out, err)
		}
		if d := diffTrace(tr, back); d != "" {
			t.Fatalf("trace %d written as\n%s\nreads back different: %s", i, out, d)
		}
		if again := writeText(t, back); again != out {
			t.Fatalf("trace %d written as\n%s\nthen as\n%s", i, out, again)
		}
	}
}

// The text format has no range ops: a range event is written as the word
// accesses it stands for, and reads back as those.
func TestTextWriterRangeAsWords(t *testing.T) {
	tr := trace.NewTrace()
	mustOK(t, tr.DefineGoroutine(trace.Goroutine{ID: 0, Parent: trace.NoParent, Name: "T0"}))
	sp, _ := trace.MakeSpan(12, 2) // two 12-byte elements: words at 0, 8, 12, 20
	w := trace.Event{Seq: 1, Op: trace.OpWriteRange, Obj: 0x1000, Value: uint64(sp)}
	var b strings.Builder
	tw := text.NewTextWriter(&b)
	mustOK(t, tw.DefineGoroutine(tr.M.Goroutines[0]))
	mustOK(t, tw.WriteEvent(&w))
	mustOK(t, tw.Close())
	back, err := text.Parse("out.rktx", b.String())
	if err != nil {
		t.Fatalf("%s: %v", b.String(), err)
	}
	var got []uint64
	for _, e := range back.Events {
		if e.Op != trace.OpWrite {
			t.Fatalf("%s: op %s, want w", b.String(), e.Op)
		}
		got = append(got, e.Obj)
	}
	if want := []uint64{0x1000, 0x1008, 0x100c, 0x1014}; !slices.Equal(got, want) {
		t.Fatalf("%s: words %#x, want %#x", b.String(), got, want)
	}
}

func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A site's call goes through #!site and back, with its function or
// without (a call not known statically), and so do a wide mark and an
// inline mark.
func TestTextWriterCall(t *testing.T) {
	tr := trace.NewTrace()
	_ = tr.M.DefineSite(1, trace.Site{File: "/src/main.go", Line: 12, Col: 4, Func: "main.worker", Call: trace.Call{Func: "main.f", EndLine: 13, EndCol: 2}})
	_ = tr.M.DefineSite(2, trace.Site{File: "/src/main.go", Line: 14, Col: 3, Call: trace.Call{EndLine: 14, EndCol: 9}})
	_ = tr.M.DefineSite(3, trace.Site{File: "/src/main.go", Line: 15, Col: 1, Wide: true})
	_ = tr.M.DefineSite(4, trace.Site{File: "/src/main.go", Line: 20, Col: 6, Func: "main.New", Inline: true})
	_ = tr.M.DefineGoroutine(trace.Goroutine{ID: 0, Parent: np})
	tr.Events = []trace.Event{{Seq: 0, G: 0, Op: trace.OpWrite, Obj: 0x1000, Value: 1, Site: 3}}
	got := writeText(t, tr)
	want := `#!g T0 name=""
#!site /src/main.go:12:4 func=main.worker call-end=13:2 call=main.f
#!site /src/main.go:14:3 call-end=14:9
#!site /src/main.go:15:1 wide=1
T0|w(0x1000=1)|/src/main.go:15:1
#!site /src/main.go:20:6 func=main.New inline=1
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	sameTrace(t, tr, parse(t, got))
	for _, bad := range []string{"#!site a call=f\n", "#!site a call-end=3\n", "#!site a call-end=0:2\n", "#!site a call-end=x:2\n", "#!site a wide=2\n", "#!site a inline=0\n"} {
		if _, err := text.Parse("t.rktx", bad); err == nil || !(strings.Contains(err.Error(), "call") || strings.Contains(err.Error(), "wide") || strings.Contains(err.Error(), "inline")) {
			t.Errorf("%q: %v, want an error about the call or the mark", bad, err)
		}
	}
}

// A site's callee (the std function a call's interceptor stands for)
// goes through #!site and back.
func TestTextWriterCallee(t *testing.T) {
	tr := trace.NewTrace()
	_ = tr.M.DefineSite(1, trace.Site{File: "/src/main.go", Line: 12, Col: 4, Func: "main.worker",
		Callee: trace.Frame{Func: "strings.(*Builder).WriteString", File: "/go/src/strings/builder.go", Line: 108}})
	_ = tr.M.DefineSite(2, trace.Site{File: "/src/main.go", Line: 13, Col: 4, Callee: trace.Frame{Func: "f"}})
	_ = tr.M.DefineGoroutine(trace.Goroutine{ID: 0, Parent: np})
	tr.Events = []trace.Event{
		{Seq: 0, G: 0, Op: trace.OpWrite, Obj: 0x1000, Value: 1, Site: 1},
		{Seq: 1, G: 0, Op: trace.OpRead, Obj: 0x1000, Value: 1, Site: 2},
	}
	got := writeText(t, tr)
	want := `#!g T0 name=""
#!site /src/main.go:12:4 func=main.worker callee="strings.(*Builder).WriteString" callee-file=/go/src/strings/builder.go callee-line=108
T0|w(0x1000=1)|/src/main.go:12:4
#!site /src/main.go:13:4 callee=f
T0|r(0x1000=1)|/src/main.go:13:4
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	sameTrace(t, tr, parse(t, got))
	if _, err := text.Parse("t.rktx", "#!site a callee-line=3\n"); err == nil || !strings.Contains(err.Error(), "without callee") {
		t.Errorf("callee-line without callee: %v", err)
	}
}
