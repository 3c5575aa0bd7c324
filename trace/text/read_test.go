package text_test

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/racekit/racekit/trace"
	"github.com/racekit/racekit/trace/text"
)

const np = trace.NoParent

// readAll reads every event of r (copied) and returns them with r's Meta.
func readAll(t *testing.T, r trace.Reader) ([]trace.Event, *trace.Meta) {
	t.Helper()
	var evs []trace.Event
	for {
		var e trace.Event
		err := r.Next(&e)
		if errors.Is(err, io.EOF) {
			return evs, r.Meta()
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		evs = append(evs, e.Clone())
	}
}

func readSTD(t *testing.T, src string) ([]trace.Event, *trace.Meta) {
	t.Helper()
	return readAll(t, text.NewSTDReader(strings.NewReader(src), "test.std"))
}

func readText(t *testing.T, src string) ([]trace.Event, *trace.Meta) {
	t.Helper()
	return readAll(t, text.NewTextReader(strings.NewReader(src), "test.rktx"))
}

func checkEvents(t *testing.T, got, want []trace.Event) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d events, want %d:\n got %+v\nwant %+v", len(got), len(want), got, want)
	}
	for i := range got {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("event %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

func checkSites(t *testing.T, m *trace.Meta, want ...trace.Site) {
	t.Helper()
	want = append([]trace.Site{{}}, want...)
	if !reflect.DeepEqual(m.Sites, want) {
		t.Errorf("sites:\n got %+v\nwant %+v", m.Sites, want)
	}
}

func checkGoroutines(t *testing.T, m *trace.Meta, want ...trace.Goroutine) {
	t.Helper()
	if !reflect.DeepEqual(m.Goroutines, want) {
		t.Errorf("goroutines:\n got %+v\nwant %+v", m.Goroutines, want)
	}
	for _, g := range want {
		if !m.GoroutineDefined(g.ID) {
			t.Errorf("goroutine %d not defined", g.ID)
		}
	}
}

func checkNames(t *testing.T, m *trace.Meta, want ...trace.Name) {
	t.Helper()
	if len(m.Names) != len(want) || (len(want) > 0 && !reflect.DeepEqual(m.Names, want)) {
		t.Errorf("names:\n got %+v\nwant %+v", m.Names, want)
	}
}

const unk = trace.FlagValueUnknown

func TestSTDReadEveryOp(t *testing.T) {
	evs, m := readSTD(t, `T0|begin|1
T0|fork(T1)|3
T1|begin()|5
T1|acq(L0)|25
T1|r(V1)|12
T1|w(V1)|13
T1|rel(L0)|26
T1|end|6
T0|join(T1)|40
T0|end()|41
`)
	checkEvents(t, evs, []trace.Event{
		{Seq: 0, G: 0, Op: trace.OpBegin, Site: 1},
		{Seq: 1, G: 0, Op: trace.OpFork, Obj: 1, Site: 2},
		{Seq: 2, G: 1, Op: trace.OpBegin, Site: 3},
		{Seq: 3, G: 1, Op: trace.OpAcquire, Obj: 0x1000, Site: 4},
		{Seq: 4, G: 1, Op: trace.OpRead, Flags: unk, Obj: 0x1008, Site: 5},
		{Seq: 5, G: 1, Op: trace.OpWrite, Flags: unk, Obj: 0x1008, Site: 6},
		{Seq: 6, G: 1, Op: trace.OpRelease, Obj: 0x1000, Site: 7},
		{Seq: 7, G: 1, Op: trace.OpEnd, Site: 8},
		{Seq: 8, G: 0, Op: trace.OpJoin, Obj: 1, Site: 9},
		{Seq: 9, G: 0, Op: trace.OpEnd, Site: 10},
	})
	// RAPID's integer locations are kept whole as the file.
	checkSites(t, m, trace.Site{File: "1"}, trace.Site{File: "3"}, trace.Site{File: "5"},
		trace.Site{File: "25"}, trace.Site{File: "12"}, trace.Site{File: "13"}, trace.Site{File: "26"},
		trace.Site{File: "6"}, trace.Site{File: "40"}, trace.Site{File: "41"})
	checkGoroutines(t, m,
		trace.Goroutine{ID: 0, Parent: np, Name: "T0"},
		trace.Goroutine{ID: 1, Parent: 0, Site: 2, Name: "T1"})
	checkNames(t, m, trace.Name{Obj: 0x1000, Name: "L0"}, trace.Name{Obj: 0x1008, Name: "V1"})
}

func TestSTDReadMatchesBuilder(t *testing.T) {
	b := trace.NewBuilder()
	b.Fork("T0", "T1", "s1")
	b.Write("T0", "x", "s2")
	b.Acq("T1", "m")
	b.Read("T1", "x", "s3")
	evs, m := readSTD(t, "T0|fork(T1)|s1\nT0|w(x)|s2\nT1|acq(m)|\nT1|r(x)|s3\n")
	checkEvents(t, evs, b.Trace().Events)
	if !reflect.DeepEqual(m.Goroutines, b.Trace().M.Goroutines) || !reflect.DeepEqual(m.Names, b.Trace().M.Names) ||
		!reflect.DeepEqual(m.Sites, b.Trace().M.Sites) {
		t.Errorf("meta differs from the builder's:\n got %+v\nwant %+v", m, b.Trace().M)
	}
}

func TestSTDReadThreadsByFirstMention(t *testing.T) {
	// Thread 2 is first seen as a fork's child (parent T1, site of the
	// fork); 9 as a join's child (no parent); main with no fork at all.
	evs, m := readSTD(t, "main|r(x)|1\n1|fork(2)|f.go:7\n1|join(9)|f.go:8\n2|w(x)|3\n")
	checkGoroutines(t, m,
		trace.Goroutine{ID: 0, Parent: np, Name: "main"},
		trace.Goroutine{ID: 1, Parent: np, Name: "1"},
		trace.Goroutine{ID: 2, Parent: 1, Site: 2, Name: "2"},
		trace.Goroutine{ID: 3, Parent: np, Name: "9"})
	checkEvents(t, evs, []trace.Event{
		{Seq: 0, G: 0, Op: trace.OpRead, Flags: unk, Obj: 0x1000, Site: 1},
		{Seq: 1, G: 1, Op: trace.OpFork, Obj: 2, Site: 2},
		{Seq: 2, G: 1, Op: trace.OpJoin, Obj: 3, Site: 3},
		{Seq: 3, G: 2, Op: trace.OpWrite, Flags: unk, Obj: 0x1000, Site: 4},
	})
	checkSites(t, m, trace.Site{File: "1"}, trace.Site{File: "f.go", Line: 7},
		trace.Site{File: "f.go", Line: 8}, trace.Site{File: "3"})
}

func TestSTDReadOneNamespaceForVariablesAndLocks(t *testing.T) {
	// RAPID names are global: the variable m and the lock m are one object.
	evs, m := readSTD(t, "T1|acq(m)|1\nT1|w(m)|2\nT1|rel(m)|3\n")
	for _, e := range evs {
		if e.Obj != 0x1000 {
			t.Errorf("event %d: object %#x, want 0x1000", e.Seq, e.Obj)
		}
	}
	checkNames(t, m, trace.Name{Obj: 0x1000, Name: "m"})
}

func TestSTDReadLayout(t *testing.T) {
	// Trailing spaces and CR, blank lines, indentation, spaces around
	// fields, comment lines, a last line without newline, and locations
	// that are file paths with colons.
	src := "  T1|w(x)|/src/pkg/a.go:12:3 \r\n\r\n\t# a comment\n" +
		"T1 | r( x ) | C:\\src\\b.go:7\r\n" +
		"T2|acq(l)|Foo.java(12)"
	evs, m := readSTD(t, src)
	checkEvents(t, evs, []trace.Event{
		{Seq: 0, G: 0, Op: trace.OpWrite, Flags: unk, Obj: 0x1000, Site: 1},
		{Seq: 1, G: 0, Op: trace.OpRead, Flags: unk, Obj: 0x1000, Site: 2},
		{Seq: 2, G: 1, Op: trace.OpAcquire, Obj: 0x1008, Site: 3},
	})
	checkSites(t, m, trace.Site{File: "/src/pkg/a.go", Line: 12, Col: 3},
		trace.Site{File: `C:\src\b.go`, Line: 7}, trace.Site{File: "Foo.java(12)"})
}

func TestSTDReadLongLine(t *testing.T) {
	// A line longer than the read buffer is still one line.
	long := strings.Repeat("v", 600<<10)
	evs, m := readSTD(t, "T1|r("+long+")|1\nT1|w(y)|2\n")
	if len(evs) != 2 || m.NameOf(evs[0].Obj) != long || m.NameOf(evs[1].Obj) != "y" {
		t.Fatalf("got %d events, names %d bytes and %q", len(evs), len(m.NameOf(evs[0].Obj)), m.NameOf(evs[1].Obj))
	}
}

func TestTextReadEveryOp(t *testing.T) {
	evs, m := readText(t, `T0|r(x=5)|main.go:12:3
T0|w(x=0x10)|main.go:13
T0|r(x)
T0|acq(mu)
T0|racq(mu)
T0|rrel(mu)
T0|rel(mu)
T0|snd(ch)
T0|rcv(ch)
T0|aload(a=1)
T0|astore(a)
T0|armw(a=18446744073709551615)
T0|call(m;x,y,z)
T0|ret(m)
T0|call(n;)
T0|call(n)
T0|enter(f)
T0|exit(f)
T0|rbegin(r1)
T0|rend(r1)
T0|begin
T0|end
`)
	const x, mu, ch, a, mm, y, z, n, f, r1 = 0x1000, 0x1008, 0x1010, 0x1018, 0x1020, 0x1028, 0x1030, 0x1038, 0x1040, 0x1048
	checkEvents(t, evs, []trace.Event{
		{Seq: 0, Op: trace.OpRead, Obj: x, Value: 5, Site: 1},
		{Seq: 1, Op: trace.OpWrite, Obj: x, Value: 16, Site: 2},
		{Seq: 2, Op: trace.OpRead, Flags: unk, Obj: x},
		{Seq: 3, Op: trace.OpAcquire, Obj: mu},
		{Seq: 4, Op: trace.OpAcquire, Flags: trace.FlagReadLock, Obj: mu},
		{Seq: 5, Op: trace.OpRelease, Flags: trace.FlagReadLock, Obj: mu},
		{Seq: 6, Op: trace.OpRelease, Obj: mu},
		{Seq: 7, Op: trace.OpSyncRelease, Obj: ch},
		{Seq: 8, Op: trace.OpSyncAcquire, Obj: ch},
		{Seq: 9, Op: trace.OpAtomicLoad, Obj: a, Value: 1},
		{Seq: 10, Op: trace.OpAtomicStore, Flags: unk, Obj: a},
		{Seq: 11, Op: trace.OpAtomicRMW, Obj: a, Value: ^uint64(0)},
		{Seq: 12, Op: trace.OpMethodBegin, Obj: mm, Addrs: []uint64{x, y, z}},
		{Seq: 13, Op: trace.OpMethodEnd, Obj: mm},
		{Seq: 14, Op: trace.OpMethodBegin, Obj: n},
		{Seq: 15, Op: trace.OpMethodBegin, Obj: n},
		{Seq: 16, Op: trace.OpFuncEnter, Obj: f},
		{Seq: 17, Op: trace.OpFuncExit, Obj: f},
		{Seq: 18, Op: trace.OpRegionBegin, Obj: r1},
		{Seq: 19, Op: trace.OpRegionEnd, Obj: r1},
		{Seq: 20, Op: trace.OpBegin},
		{Seq: 21, Op: trace.OpEnd},
	})
	checkSites(t, m, trace.Site{File: "main.go", Line: 12, Col: 3}, trace.Site{File: "main.go", Line: 13})
	checkNames(t, m, trace.Name{Obj: x, Name: "x"}, trace.Name{Obj: mu, Name: "mu"}, trace.Name{Obj: ch, Name: "ch"},
		trace.Name{Obj: a, Name: "a"}, trace.Name{Obj: mm, Name: "m"}, trace.Name{Obj: y, Name: "y"},
		trace.Name{Obj: z, Name: "z"}, trace.Name{Obj: n, Name: "n"}, trace.Name{Obj: f, Name: "f"},
		trace.Name{Obj: r1, Name: "r1"})
}

func TestTextReadsSTDTheSameWay(t *testing.T) {
	src := "T0|begin|1\nT0|fork(T1)|a.go:3\nT1|acq(L0)|25\nT1|r(V1)|12\nT1|rel(L0)|26\nT0|join(T1)|40\nT0|end|41\n"
	se, sm := readSTD(t, src)
	te, tm := readText(t, src)
	checkEvents(t, te, se)
	if !reflect.DeepEqual(sm.Sites, tm.Sites) || !reflect.DeepEqual(sm.Goroutines, tm.Goroutines) || !reflect.DeepEqual(sm.Names, tm.Names) {
		t.Errorf("meta differs:\n std %+v\ntext %+v", sm, tm)
	}
}

func TestTextReadQuotedTokens(t *testing.T) {
	// Quoted tokens carry names with structure characters, spaces and
	// escapes; quoting never changes which name a token is.
	evs, m := readText(t, `"worker 1"|enter("main.(*T).M")|"/my src/a.go:3:4"
"worker 1"|w("a|b=c")|"x\ty.go:2"
"worker 1"|r(plain)
"worker 1"|r("plain")
`)
	checkEvents(t, evs, []trace.Event{
		{Seq: 0, Op: trace.OpFuncEnter, Obj: 0x1000, Site: 1},
		{Seq: 1, Op: trace.OpWrite, Flags: unk, Obj: 0x1008, Site: 2},
		{Seq: 2, Op: trace.OpRead, Flags: unk, Obj: 0x1010},
		{Seq: 3, Op: trace.OpRead, Flags: unk, Obj: 0x1010},
	})
	checkGoroutines(t, m, trace.Goroutine{ID: 0, Parent: np, Name: "worker 1"})
	checkNames(t, m, trace.Name{Obj: 0x1000, Name: "main.(*T).M"}, trace.Name{Obj: 0x1008, Name: "a|b=c"},
		trace.Name{Obj: 0x1010, Name: "plain"})
	checkSites(t, m, trace.Site{File: "/my src/a.go", Line: 3, Col: 4}, trace.Site{File: "x\ty.go", Line: 2})
}

func TestTextReadObjectIDLiterals(t *testing.T) {
	// A bare canonical 0x token is the object ID itself, with no name; a
	// quoted or non-canonical one is a name. Named objects skip IDs in use.
	evs, m := readText(t, `T0|w(0xc000012345)|a.go:1
T0|r(0x1000)
T0|r(x)
T0|r("0x10")
T0|r(0X10)
T0|r(0x010)
T0|call(m;0xc000012345,x)
`)
	checkEvents(t, evs, []trace.Event{
		{Seq: 0, Op: trace.OpWrite, Flags: unk, Obj: 0xc000012345, Site: 1},
		{Seq: 1, Op: trace.OpRead, Flags: unk, Obj: 0x1000},
		{Seq: 2, Op: trace.OpRead, Flags: unk, Obj: 0x1008},
		{Seq: 3, Op: trace.OpRead, Flags: unk, Obj: 0x1010},
		{Seq: 4, Op: trace.OpRead, Flags: unk, Obj: 0x1018},
		{Seq: 5, Op: trace.OpRead, Flags: unk, Obj: 0x1020},
		{Seq: 6, Op: trace.OpMethodBegin, Obj: 0x1028, Addrs: []uint64{0xc000012345, 0x1008}},
	})
	checkNames(t, m, trace.Name{Obj: 0x1008, Name: "x"}, trace.Name{Obj: 0x1010, Name: "0x10"},
		trace.Name{Obj: 0x1018, Name: "0X10"}, trace.Name{Obj: 0x1020, Name: "0x010"}, trace.Name{Obj: 0x1028, Name: "m"})
}

func TestTextReadDirectives(t *testing.T) {
	evs, m := readText(t, `# metadata a hand-written trace can give
#!site L1 main.go:12:3 main.worker # a comment ends the arguments
#!site main.go:20:5 func=main.main
#!site odd file="a b.go" line=7 col=0 func="main.(*T).M"
#!addr x 0xc000012345
#!addr y#2 0x2000 y
#!addr anon 0x3000 ""
#!g main id=3 name=""
#!g W parent=3 site=L1
#!seq 100
main|w(x=1)|main.go:20:5
W|r(x)|L1
W|r(y#2)|odd
W|r(anon)|main.go:20:5
#!seq 7
main|join(W)
`)
	checkEvents(t, evs, []trace.Event{
		{Seq: 100, G: 3, Op: trace.OpWrite, Obj: 0xc000012345, Value: 1, Site: 2},
		{Seq: 101, G: 0, Op: trace.OpRead, Flags: unk, Obj: 0xc000012345, Site: 1},
		{Seq: 102, G: 0, Op: trace.OpRead, Flags: unk, Obj: 0x2000, Site: 3},
		{Seq: 103, G: 0, Op: trace.OpRead, Flags: unk, Obj: 0x3000, Site: 2},
		{Seq: 7, G: 3, Op: trace.OpJoin, Obj: 0},
	})
	checkSites(t, m,
		trace.Site{File: "main.go", Line: 12, Col: 3, Func: "main.worker"},
		trace.Site{File: "main.go", Line: 20, Col: 5, Func: "main.main"},
		trace.Site{File: "a b.go", Line: 7, Func: "main.(*T).M"})
	// GIDs 1 and 2 are a gap left by id=3.
	if want := []trace.Goroutine{
		{ID: 0, Parent: 3, Site: 1, Name: "W"},
		{ID: 1, Parent: np},
		{ID: 2, Parent: np},
		{ID: 3, Parent: np, Name: ""},
	}; !reflect.DeepEqual(m.Goroutines, want) {
		t.Errorf("goroutines:\n got %+v\nwant %+v", m.Goroutines, want)
	}
	if !m.GoroutineDefined(0) || m.GoroutineDefined(1) || m.GoroutineDefined(2) || !m.GoroutineDefined(3) {
		t.Errorf("goroutines 1 and 2 are gaps, yet defined")
	}
	checkNames(t, m, trace.Name{Obj: 0xc000012345, Name: "x"}, trace.Name{Obj: 0x2000, Name: "y"})
}

func TestTextReadSiteLabelBindsOnlyItself(t *testing.T) {
	// A #!site label is a name for the site; a plain label with the same
	// position is interned to the same site when it has no function.
	evs, _ := readText(t, "#!site A a.go:5\nT|r(x)|A\nT|r(x)|a.go:5\nT|r(x)|a.go:05\n")
	for i, want := range []trace.SiteID{1, 1, 1} {
		if evs[i].Site != want {
			t.Errorf("event %d: site %d, want %d", i, evs[i].Site, want)
		}
	}
}

// A reader's Meta is complete only at io.EOF: directives after the last
// event still count.
func TestTextReadTrailingDirectives(t *testing.T) {
	_, m := readText(t, "T0|r(x)\n#!g T9 id=4\n#!addr q 0x9\n")
	if !m.GoroutineDefined(4) || m.Goroutine(4).Name != "T9" || m.NameOf(9) != "q" {
		t.Errorf("trailing directives lost: %+v", m)
	}
}

func TestParse(t *testing.T) {
	tr, err := text.Parse("t.rktx", "T0|fork(T1)|a.go:1\nT1|call(m;x,y)\nT1|ret(m)\n")
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, tr.Events, []trace.Event{
		{Seq: 0, G: 0, Op: trace.OpFork, Obj: 1, Site: 1},
		{Seq: 1, G: 1, Op: trace.OpMethodBegin, Obj: 0x1000, Addrs: []uint64{0x1008, 0x1010}},
		{Seq: 2, G: 1, Op: trace.OpMethodEnd, Obj: 0x1000},
	})
	if _, err := text.Parse("t.rktx", "T0|r(x)\nT0|bad\n"); err == nil || err.Error() != `t.rktx:2: unknown op "bad"; expected one of `+
		"r, w, acq, rel, fork, join, begin, end, racq, rrel, snd, rcv, aload, astore, armw, call, ret, enter, exit, rbegin, rend, alloc" {
		t.Errorf("Parse error = %v", err)
	}
}

func TestReadErrors(t *testing.T) {
	const (
		stdShape  = "expected THREAD|OP(DECOR)|LOC, got "
		textShape = "expected THREAD|OP(DECOR)[|LOC], got "
		notSTD    = " is not STD; read this file as racekit text (.rktx)"
	)
	for _, c := range []struct {
		std  bool
		src  string
		line int
		msg  string
	}{
		{true, "T1|r(x)|1\nT1|r(x", 2, stdShape + `"T1|r(x"`},
		{true, "T1|r(x)|1\n\n\n\n\n\nT1|snd(ch)|7\n", 7, "op 'snd'" + notSTD},
		{true, "T1|r(x=5)|1", 1, `value in "T1|r(x=5)|1"` + notSTD},
		{true, "#!site a b.go:1\n", 1, "directive #!site" + notSTD},
		{true, "T1|r(x)", 1, stdShape + `"T1|r(x)"; STD requires a location (racekit text (.rktx) does not)`},
		{true, "T1|r(x)|1|2", 1, stdShape + `"T1|r(x)|1|2"`},
		{true, "T1 r(x) 1", 1, stdShape + `"T1 r(x) 1"`},
		{true, "|r(x)|1", 1, stdShape + `"|r(x)|1"`},
		{true, "T1||1", 1, stdShape + `"T1||1"`},
		{true, "T1|read(x)|1", 1, `unknown op "read"; expected one of r, w, acq, rel, fork, join, begin, end`},
		{true, "T1|acq|1", 1, `expected acq(LOCK), got "T1|acq|1"`},
		{true, "T1|r()|1", 1, `expected r(VAR), got "T1|r()|1"`},
		{true, "T1|fork( )|1", 1, `expected fork(THREAD), got "T1|fork( )|1"`},
		{true, "T1|r(f(x))|1", 1, stdShape + `"T1|r(f(x))|1"`},
		{true, "T1|r(x)y|1", 1, stdShape + `"T1|r(x)y|1"`},
		{true, `"T1"|snd(x)|1`, 1, "op 'snd'" + notSTD},
		{false, "T1|r(x", 1, textShape + `"T1|r(x"`},
		{false, "T1|r(x=)", 1, `bad value "" in "T1|r(x=)": expected a decimal or 0x-hex number below 2^64`},
		{false, "T1|w(x=18446744073709551616)", 1, `bad value "18446744073709551616" in "T1|w(x=18446744073709551616)": expected a decimal or 0x-hex number below 2^64`},
		{false, "T1|w(x=0x1ffffffffffffffff)", 1, `bad value "0x1ffffffffffffffff" in "T1|w(x=0x1ffffffffffffffff)": expected a decimal or 0x-hex number below 2^64`},
		{false, "T1|call(m;x,)", 1, `expected call(METHOD;ADDR,...), got "T1|call(m;x,)"`},
		{false, `T1|r("x)`, 1, `unterminated quoted string "\"x)"`},
		{false, `T1|r("x\q")`, 1, `bad quoted string "\"x\\q\"": invalid syntax`},
		{false, `T1|r("")`, 1, `empty name in "T1|r(\"\")"`},
		{false, `T1|r("x" y)`, 1, textShape + `"T1|r(\"x\" y)"`},
		{false, `T1|r(x)|"a" b`, 1, textShape + `"T1|r(x)|\"a\" b"`},
		{false, "#!bogus 1", 1, "unknown directive #!bogus; expected #!site, #!addr, #!g or #!seq"},
		{false, "#!site", 1, "usage: #!site LABEL [POS [FUNC]] [file=FILE] [line=N] [col=N] [func=FUNC] [callee=FUNC [callee-file=FILE] [callee-line=N]] [call-end=LINE:COL [call=FUNC]] [wide=1] [inline=1]"},
		{false, "#!site a b c d", 1, "usage: #!site LABEL [POS [FUNC]] [file=FILE] [line=N] [col=N] [func=FUNC] [callee=FUNC [callee-file=FILE] [callee-line=N]] [call-end=LINE:COL [call=FUNC]] [wide=1] [inline=1]"},
		{false, "#!site a b.go:1 lin=3", 1, `unknown key "lin" in #!site; usage: #!site LABEL [POS [FUNC]] [file=FILE] [line=N] [col=N] [func=FUNC] [callee=FUNC [callee-file=FILE] [callee-line=N]] [call-end=LINE:COL [call=FUNC]] [wide=1] [inline=1]`},
		{false, "#!site a line=x", 1, `bad line="x" in #!site: expected an integer`},
		{false, "#!site a b F func=G", 1, "function given twice in #!site; usage: #!site LABEL [POS [FUNC]] [file=FILE] [line=N] [col=N] [func=FUNC] [callee=FUNC [callee-file=FILE] [callee-line=N]] [call-end=LINE:COL [call=FUNC]] [wide=1] [inline=1]"},
		{false, "#!site a line=1 line=2", 1, `key "line" given twice in #!site`},
		{false, "T|r(x)|a\n#!site a b.go:1", 2, `location label "a" is already in use; put #!site before its first use`},
		{false, `#!site "a"b c`, 1, `directive arguments must be separated by spaces, got "b c"`},
		{false, "#!addr x", 1, "usage: #!addr TOKEN ID [NAME]"},
		{false, "#!addr x zz", 1, `bad object ID "zz" in #!addr: expected a decimal or 0x-hex number below 2^64`},
		{false, "#!addr 0x10 0x20", 1, "#!addr 0x10: a bare 0x token is an object ID, not a name; quote it to use it as a name"},
		{false, "T|r(x)\n#!addr x 0x20", 2, `object "x" is already in use; put #!addr before its first use`},
		{false, "T|r(0x20)\n#!addr y 0x20", 2, "object ID 0x20 is already in use"},
		{false, "T|r(x)\n#!addr y 0x1000", 2, "object ID 0x1000 is already in use"},
		{false, "#!g", 1, "usage: #!g THREAD [id=N] [parent=N] [site=LABEL] [name=NAME]"},
		{false, "T|r(x)\n#!g T", 2, `thread "T" is already in use; put #!g before its first use`},
		{false, "#!g A id=0\n#!g B id=0", 2, "goroutine 0 is already defined"},
		{false, "#!g A id=-1", 1, `bad id="-1" in #!g: expected a goroutine number`},
		{false, "#!g A id=4294967295", 1, `bad id="4294967295" in #!g: expected a goroutine number`},
		{false, "#!g A id=70000", 1, "id=70000 in #!g is more than 65536 beyond the highest goroutine so far"},
		{false, "#!g A parent=x", 1, `bad parent="x" in #!g: expected a goroutine number`},
		{false, "#!g A colour=red", 1, `unknown key "colour" in #!g; usage: #!g THREAD [id=N] [parent=N] [site=LABEL] [name=NAME]`},
		{false, "#!seq", 1, "usage: #!seq N"},
		{false, "#!seq -1", 1, `bad #!seq "-1": expected a decimal or 0x-hex number below 2^64`},
	} {
		// Each case's last line ends with a newline: without one, a line
		// that does not parse is a cut-off file, a warning
		// (TestReadCutOffLastLine).
		src := c.src
		if !strings.HasSuffix(src, "\n") {
			src += "\n"
		}
		name := "test.rktx"
		var r trace.Reader = text.NewTextReader(strings.NewReader(src), name)
		if c.std {
			name = "test.std"
			r = text.NewSTDReader(strings.NewReader(src), name)
		}
		var err error
		for err == nil {
			var e trace.Event
			err = r.Next(&e)
		}
		var fe *trace.FormatError
		if !errors.As(err, &fe) {
			t.Errorf("%q: error %v, want a FormatError", c.src, err)
			continue
		}
		want := name + ":" + itoa(c.line) + ": " + c.msg
		if fe.File != name || fe.Line != c.line || err.Error() != want {
			t.Errorf("%q:\n got %s\nwant %s", c.src, err, want)
		}
		// The error is sticky.
		var e trace.Event
		if again := r.Next(&e); again != err {
			t.Errorf("%q: second Next = %v, want the same error", c.src, again)
		}
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + itoa(n%10)
}

func TestReadErrorOffset(t *testing.T) {
	r := text.NewSTDReader(strings.NewReader("T1|r(x)|1\nT1|r(x\n"), "o.std")
	var e trace.Event
	_ = r.Next(&e)
	err := r.Next(&e)
	var fe *trace.FormatError
	if !errors.As(err, &fe) || fe.Offset != 10 {
		t.Errorf("error %v, want a FormatError at offset 10", err)
	}
}

// The reader reuses its Addrs buffer: a call's addresses are valid until
// the next Next, and an event without them has none.
func TestReadAddrsReset(t *testing.T) {
	r := text.NewTextReader(strings.NewReader("T|call(m;a,b)\nT|r(a)\n"), "t")
	var e trace.Event
	if err := r.Next(&e); err != nil || len(e.Addrs) != 2 {
		t.Fatalf("call: %v %+v", err, e)
	}
	if err := r.Next(&e); err != nil || e.Addrs != nil {
		t.Fatalf("read after call: %v %+v", err, e)
	}
}

func TestReadFailureIsReportedBeforeThePartialLine(t *testing.T) {
	src := io.MultiReader(strings.NewReader("T1|r(x)|1\nT1|r("), iotest.ErrReader(errors.New("disk gone")))
	r := text.NewSTDReader(src, "r.std")
	var e trace.Event
	if err := r.Next(&e); err != nil {
		t.Fatalf("first line: %v", err)
	}
	err := r.Next(&e)
	var fe *trace.FormatError
	if !errors.As(err, &fe) || err.Error() != "r.std:2: read failed: disk gone" || fe.Offset != 10 {
		t.Errorf("got %v, want r.std:2: read failed: disk gone at offset 10", err)
	}
}

func TestReadLineTooLong(t *testing.T) {
	// A binary file read as text fails at its first huge "line".
	src := "T1|r(x)|1\n" + strings.Repeat("x", 17<<20)
	r := text.NewTextReader(strings.NewReader(src), "big.rktx")
	var e trace.Event
	_ = r.Next(&e)
	if err := r.Next(&e); err == nil || err.Error() != "big.rktx:2: line longer than 16777216 bytes; is this a text trace?" {
		t.Errorf("got %v", err)
	}
}

// A writer that crashed leaves a last line without its newline. If that
// line does not parse, the reader stops after the last whole line, with a
// warning instead of an error, and the cut-off line leaves nothing in the
// tables (not even the tokens it got to).
func TestReadCutOffLastLine(t *testing.T) {
	for _, c := range []struct {
		std        bool
		whole, cut string
		warning    string
	}{
		{true, "T0|fork(T1)|1\nT1|w(x)|2\n", "T1|r(newv", "cut.std:3: last line is incomplete (file cut off?); ignored"},
		{true, "T0|fork(T1)|1\nT1|w(x)|2\n", "T2|acq(", "cut.std:3: last line is incomplete (file cut off?); ignored"},
		{true, "T1|w(x)|2\r\n\n", "T1|r(x)|1|", "cut.std:3: last line is incomplete (file cut off?); ignored"},
		{true, "", "T1|r(", "cut.std:1: last line is incomplete (file cut off?); ignored"},
		{false, "T1|w(x=5)|a.go:1\n", "T1|call(m;x,ne", "cut.rktx:2: last line is incomplete (file cut off?); ignored"},
		{false, "T1|w(x=5)|a.go:1\n", "T1|w(y=0x", "cut.rktx:2: last line is incomplete (file cut off?); ignored"},
		{false, "T1|w(x)\n", "#!g W parent=", "cut.rktx:2: last line is incomplete (file cut off?); ignored"},
		{false, "T1|w(x)\n", `T1|r("a b`, "cut.rktx:2: last line is incomplete (file cut off?); ignored"},
	} {
		name := "cut.rktx"
		open := func(src string) interface {
			trace.Reader
			trace.Warner
		} {
			if c.std {
				return text.NewSTDReader(strings.NewReader(src), "cut.std")
			}
			return text.NewTextReader(strings.NewReader(src), name)
		}
		wantEvs, wantMeta := readAll(t, open(c.whole))
		r := open(c.whole + c.cut)
		evs, m := readAll(t, r)
		checkEvents(t, evs, wantEvs)
		if !reflect.DeepEqual(m.Sites, wantMeta.Sites) || !reflect.DeepEqual(m.Goroutines, wantMeta.Goroutines) || !reflect.DeepEqual(m.Names, wantMeta.Names) {
			t.Errorf("%q: tables\n got %+v\nwant %+v", c.whole+c.cut, m, wantMeta)
		}
		if w := r.Warnings(); !reflect.DeepEqual(w, []string{c.warning}) {
			t.Errorf("%q: warnings %q, want %q", c.whole+c.cut, w, c.warning)
		}
		var e trace.Event
		if err := r.Next(&e); err != io.EOF {
			t.Errorf("%q: Next after the end = %v, want io.EOF", c.whole+c.cut, err)
		}
	}
}

// A last line without newline that parses is an event like any other.
func TestReadLastLineWithoutNewline(t *testing.T) {
	r := text.NewSTDReader(strings.NewReader("T1|w(x)|1\nT1|r(x)|2"), "t.std")
	evs, _ := readAll(t, r)
	checkEvents(t, evs, []trace.Event{
		{Seq: 0, G: 0, Op: trace.OpWrite, Flags: unk, Obj: 0x1000, Site: 1},
		{Seq: 1, G: 0, Op: trace.OpRead, Flags: unk, Obj: 0x1000, Site: 2},
	})
	if w := r.Warnings(); len(w) != 0 {
		t.Errorf("warnings %q, want none", w)
	}
}

// Only a last line without newline can be cut off: a malformed line that
// ends with one is an error, at the end of the input as anywhere else.
// Parse, for traces written by hand, does not excuse a missing newline.
func TestReadMalformedLastLineWithNewlineIsAnError(t *testing.T) {
	for _, c := range []struct {
		r interface {
			trace.Reader
			trace.Warner
		}
		want string
	}{
		{text.NewSTDReader(strings.NewReader("T1|w(x)|1\nT1|r(x\n"), "a.std"), `a.std:2: expected THREAD|OP(DECOR)|LOC, got "T1|r(x"`},
		{text.NewTextReader(strings.NewReader("T1|w(x)\r\nT1|r(x\r\n"), "a.rktx"), `a.rktx:2: expected THREAD|OP(DECOR)[|LOC], got "T1|r(x"`},
	} {
		var err error
		for err == nil {
			var e trace.Event
			err = c.r.Next(&e)
		}
		if err == io.EOF || err.Error() != c.want {
			t.Errorf("got %v, want %s", err, c.want)
		}
		if w := c.r.Warnings(); len(w) != 0 {
			t.Errorf("warnings %q, want none", w)
		}
	}
	if _, err := text.Parse("p.rktx", "T1|w(x)\nT1|r(x"); err == nil || err.Error() != `p.rktx:2: expected THREAD|OP(DECOR)[|LOC], got "T1|r(x"` {
		t.Errorf("Parse of a malformed last line: %v", err)
	}
}
