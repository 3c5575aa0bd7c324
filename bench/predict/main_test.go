package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/racekit/racekit/detect/hb"
	"github.com/racekit/racekit/detect/predict"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/gen"
	"github.com/racekit/racekit/trace"
)

// show renders tr one event a line: goroutine, op, object (D for a
// BarrierPair's begin).
func show(tr *trace.Trace) string {
	var b strings.Builder
	for _, e := range tr.Events {
		fmt.Fprintf(&b, "%s %s", tr.M.Goroutine(e.G).Label(), e.Op)
		switch {
		case e.Op == trace.OpMethodBegin:
			var d []string
			for _, a := range e.Addrs {
				d = append(d, tr.M.ObjLabel(a))
			}
			fmt.Fprintf(&b, " [%s]", strings.Join(d, " "))
		case e.Op != trace.OpMethodEnd && e.Op != trace.OpBegin && e.Op != trace.OpEnd && e.Op != trace.OpFork:
			fmt.Fprintf(&b, " %s", tr.M.ObjLabel(e.Obj))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func TestUntraceRegions(t *testing.T) {
	b := trace.NewBuilder()
	b.Begin("M")
	b.Fork("M", "T", "")
	b.Begin("T")
	// A critical section in one frame, with a call inside: one region.
	b.Enter("T", "f")
	b.Acq("T", "l")
	b.Write("T", "x", "")
	b.Enter("T", "g")
	b.Read("T", "y", "")
	b.Alloc("T", "n", 8) // stays visible inside the BarrierPair
	b.Exit("T", "g")
	b.Rel("T", "l")
	b.Write("T", "z", "") // outside: stays
	b.Snd("T", "ch")      // a single sync event
	b.Exit("T", "f")
	// Nested sections: the outer one is the region.
	b.Acq("T", "l")
	b.Acq("T", "k")
	b.Write("T", "x", "")
	b.Rel("T", "k")
	b.Rel("T", "l")
	// A section that leaves its frame: its acquire and release are
	// single-event regions, the access between them stays.
	b.Enter("T", "h")
	b.Acq("T", "l")
	b.Exit("T", "h")
	b.Write("T", "x", "")
	b.Rel("T", "l")
	// A section that forks: not a region.
	b.Acq("M", "k")
	b.Fork("M", "U", "")
	b.Write("M", "y", "")
	b.Rel("M", "k")
	b.Begin("U")
	b.ALoad("U", "a")
	b.End("U")
	b.End("T")
	part, n := untraceRegions(b.Trace(), true, isSyncOp)
	want := `M begin
M fork
T begin
T enter f
T call [l x y]
T alloc n
T ret
T w z
T call [ch]
T ret
T exit f
T call [l k x]
T ret
T enter h
T call [l]
T ret
T exit h
T w x
T call [l]
T ret
M call [k]
M ret
M fork
M w y
M call [k]
M ret
U begin
U call [a]
U ret
U end
T end
`
	if got := show(part); got != want {
		t.Errorf("untraceRegions:\n%s\nwant:\n%s", got, want)
	}
	if n != 8 {
		t.Errorf("%d regions, want 8", n)
	}
	// Without balanced locks in D, a section's own locks are left out.
	part, _ = untraceRegions(b.Trace(), false, isSyncOp)
	if got := show(part); !strings.Contains(got, "T call [x y]\n") || !strings.Contains(got, "T call [x]\n") {
		t.Errorf("balancedLocksInD=false:\n%s", got)
	}
}

// TestRDITPreciseOnUntracedGen is the precision claim behind the table,
// on small generated traces: with either rule, every race rdit reports on
// the incomplete trace is one mcm reports on the complete trace.
func TestRDITPreciseOnUntracedGen(t *testing.T) {
	var checked, found int
	for _, c := range configs(3000) {
		for seed := range uint64(3) {
			c.cfg.Seed = 100 + seed
			tr := trace.NewTrace()
			if _, err := gen.Generate(c.cfg, tr); err != nil {
				t.Fatal(err)
			}
			col := finding.NewCollector()
			truth := pairs(tr, predict.NewMCM(col, predict.Options{}), col)
			for _, ru := range []rule{rulesByName["region"], rulesByName["locks"], rulesByName["chans"], rulesByName["func"]} {
				part, _ := ru.untrace(tr, true)
				col := finding.NewCollector()
				got := pairs(part, predict.NewRDIT(col, predict.Options{}), col)
				for p := range got {
					if !truth[p] {
						t.Errorf("%s seed %d, rule %s: rdit reports %v, no race of the complete trace", c.name, c.cfg.Seed, ru.name, p)
					}
				}
				checked++
				found += len(got)
			}
		}
	}
	t.Logf("%d incomplete traces, %d rdit races, all in mcm's answer on the complete trace", checked, found)
	if found == 0 {
		t.Fatal("the sample exercises nothing")
	}
}

func TestSubjectName(t *testing.T) {
	if got := subjectName("/tmp/x/github.com_racekit_racekit_bench_subjects_moldyn.test.29961.rkt"); got != "moldyn" {
		t.Errorf("subjectName: %q", got)
	}
	if !slices.Contains([]string{"a.rkt"}, subjectName("a.rkt")) {
		t.Errorf("subjectName of a plain name: %q", subjectName("a.rkt"))
	}
}

// TestUntraceLocks is rule "locks" on the trace of TestUntraceRegions'
// kind: critical sections (with everything inside, a snd included) and
// lone Acquire/Release become BarrierPairs; snd, rcv and atomics outside
// critical sections stay as they are, also inside a section that forks
// (which is not a region).
func TestUntraceLocks(t *testing.T) {
	b := trace.NewBuilder()
	b.Begin("M")
	b.Fork("M", "T", "")
	b.Begin("T")
	b.Enter("T", "f")
	b.Acq("T", "l") // a critical section in one frame: one BarrierPair
	b.Write("T", "x", "")
	b.Snd("T", "ch") // hidden with the section, in its D
	b.ALoad("T", "a")
	b.Rel("T", "l")
	b.Write("T", "z", "") // outside: stays
	b.Snd("T", "ch")      // outside: stays (rule region hides it)
	b.AStore("T", "a")    // outside: stays
	b.Exit("T", "f")
	b.Enter("T", "h") // a section that leaves its frame
	b.Acq("T", "l")   // lone Acquire: a BarrierPair
	b.Exit("T", "h")
	b.Rcv("T", "wg") // stays, although l is held
	b.Rel("T", "l")  // lone Release: a BarrierPair
	b.Acq("M", "k")  // a section that forks: not a region
	b.Fork("M", "U", "")
	b.Snd("M", "ch") // stays
	b.Rel("M", "k")
	b.Begin("U")
	b.Rcv("U", "ch")
	b.ARMW("U", "a")
	// The Go front end's record of an atomic load of a: a section of the
	// lock private to a stays visible, being the atomic operation itself.
	b.Add(trace.Event{G: b.G("U"), Op: trace.OpAcquire, Obj: b.Obj("a") | trace.AtomicLockBit})
	b.ALoad("U", "a")
	b.Read("U", "a", "")
	b.Add(trace.Event{G: b.G("U"), Op: trace.OpRelease, Obj: b.Obj("a") | trace.AtomicLockBit})
	b.End("U")
	b.End("T")
	want := `M begin
M fork
T begin
T enter f
T call [l x ch a]
T ret
T w z
T snd ch
T astore a
T exit f
T enter h
T call [l]
T ret
T exit h
T rcv wg
T call [l]
T ret
M call [k]
M ret
M fork
M snd ch
M call [k]
M ret
U begin
U rcv ch
U armw a
U acq a|atomic
U aload a
U r a
U rel a|atomic
U end
T end
`
	// show prints the private lock's address; want says a|atomic.
	want = strings.ReplaceAll(want, "a|atomic", b.Trace().M.ObjLabel(b.Obj("a")|trace.AtomicLockBit))
	part, n := rulesByName["locks"].untrace(b.Trace(), true)
	if got := show(part); got != want {
		t.Errorf("locks:\n%s\nwant:\n%s", got, want)
	}
	if n != 5 {
		t.Errorf("%d regions, want 5", n)
	}
	// Rule region on the same trace hides every one of those events; the
	// atomic record is a critical section there, D = {lock, a}.
	part, _ = rulesByName["region"].untrace(b.Trace(), true)
	for _, e := range part.Events {
		if isSyncOp(e.Op) {
			t.Errorf("region keeps %s", e.Op)
		}
	}
	if got := show(part); !strings.Contains(got, "U call ["+b.Trace().M.ObjLabel(b.Obj("a")|trace.AtomicLockBit)+" a]\nU ret\nU end\n") {
		t.Errorf("region, atomic record:\n%s", got)
	}
}

// TestUntraceChans is rule "chans" on the xalan pattern of thesis section
// 5.2 in small: T writes d and hands it to M over ch, and writes x before
// a critical section of l that M enters after it, then M reads x. With ch
// hidden, hb loses the handoff (a false alarm on d) and still orders x
// through l (a missed race: the two sections touch different data, so
// they can run in the other order); rdit keeps the handoff through the
// BarrierPairs of ch and reorders the sections, reporting exactly the race
// on x, the one mcm reports on the complete trace.
func TestUntraceChans(t *testing.T) {
	b := trace.NewBuilder()
	b.Begin("M")
	b.Fork("M", "T", "")
	b.Begin("T")
	b.Write("T", "d", "td")
	b.Snd("T", "ch")
	b.Write("T", "x", "tx")
	b.Acq("T", "l")
	b.Write("T", "y", "")
	b.Rel("T", "l")
	b.Rcv("M", "ch")
	b.Read("M", "d", "md")
	b.Acq("M", "l")
	b.Write("M", "z", "")
	b.Rel("M", "l")
	b.Read("M", "x", "mx")
	b.End("T")
	b.End("M")
	tr := b.Trace()
	part, n := rulesByName["chans"].untrace(tr, true)
	if n != 2 {
		t.Errorf("%d events untraced, want 2", n)
	}
	want := "T call [ch]\nT ret\nT w x\nT acq l\n"
	if got := show(part); !strings.Contains(got, want) || strings.Contains(got, "snd") || strings.Contains(got, "rcv") {
		t.Errorf("chans:\n%s\nwant the snd and rcv replaced, locks kept (%q)", got, want)
	}
	onX := map[finding.Pair]bool{finding.MakePair(b.Site("tx"), b.Site("mx")): true}
	onD := map[finding.Pair]bool{finding.MakePair(b.Site("td"), b.Site("md")): true}
	col := finding.NewCollector()
	if got := pairs(tr, predict.NewMCM(col, predict.Options{}), col); !maps.Equal(got, onX) {
		t.Fatalf("mcm on the complete trace: %v, want the race on x only %v", got, onX)
	}
	col = finding.NewCollector()
	if got := pairs(part, predict.NewRDIT(col, predict.Options{}), col); !maps.Equal(got, onX) {
		t.Errorf("rdit on the incomplete trace: %v, want the race on x %v", got, onX)
	}
	col = finding.NewCollector()
	if got := pairs(part, hb.New(col), col); !maps.Equal(got, onD) {
		t.Errorf("hb on the incomplete trace: %v, want only the false alarm on d %v", got, onD)
	}
}

// TestSolverTable: skipped traces stay out of the totals, and one
// disagreement makes the total say NO.
func TestSolverTable(t *testing.T) {
	rows := []solverRow{
		{name: "a", events: 10, windows: 1, queries: 4, goSat: 2, zSat: 2, goPairs: 2, zPairs: 2, same: true, goSecs: 0.5, zSecs: 2},
		{name: "big", events: 99999, skipped: true},
		{name: "b", events: 20, windows: 2, queries: 3, goSat: 1, zSat: 0, goPairs: 1, zPairs: 0, same: false, goSecs: 0.25, zSecs: 1},
	}
	got := solverTable(rows, 100)
	for _, want := range []string{
		"| big | 99999 | | | | | skipped (over -z3-max-events) | | |\n",
		"| b | 20 | 2 | 3 | 1 / 0 | 1 / 0 | **NO** | 0.250 | 1.000 |\n",
		"| **Total** | 30 | 3 | 7 | 3 / 2 | 3 / 2 | **NO** | 0.750 | 3.000 |\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("solverTable lacks %q:\n%s", want, got)
		}
	}
}
