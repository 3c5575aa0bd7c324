package text_test

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/racekit/racekit/trace"
	"github.com/racekit/racekit/trace/text"
)

var fuzzSeeds = []string{
	canonical,
	"T0|begin|1\nT0|fork(T1)|3\nT1|acq(L0)|25\nT1|r(V1)|12\nT1|rel(L0)|26\nT0|join(T1)|40\nT0|end|41\n",
	"  T1 | r( x ) | C:\\src\\b.go:7\r\n\r\n# c\nT2|acq(l)|Foo.java(12)",
	"T1|r(x=5)|1\nT1|snd(ch)|2\n#!site a b.go:1\n",
	`"worker 1"|enter("main.(*T).M")|"/my src/a.go:3:4"` + "\n" + `"worker 1"|w("a|b=c")|"x\ty.go:2"`,
	"#!site L1 main.go:12:3 main.worker\n#!addr x 0xc000012345\n#!g main id=3 name=\"\"\n#!g W parent=3 site=L1\n#!seq 100\nmain|w(x=1)|L1\nW|call(m;x,0x10,y)\n",
	"#!site ? file=\"\" line=0 col=0\n#!site :3 file=\"\" line=3 col=0\nT|r(0x1008)|?\nT|w(\"0x1008\"=1)|:3\n",
	"T1|call(m;x,)\nT1|r(\"x)\n#!g A id=70000\n",
}

// checkReader reads all of src and checks that the reader never panics,
// fails only with a FormatError at a line, and returns valid events whose
// goroutines and sites its Meta defines.
func checkReader(t *testing.T, r trace.Reader) {
	for {
		var e trace.Event
		err := r.Next(&e)
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			var fe *trace.FormatError
			if !errors.As(err, &fe) || fe.Line <= 0 || fe.File != "fuzz" {
				t.Fatalf("error %v (%T) is not a FormatError at a line of fuzz", err, err)
			}
			return
		}
		m := r.Meta()
		if err := e.Validate(); err != nil {
			t.Fatalf("invalid event %+v: %v", e, err)
		}
		if !m.GoroutineDefined(e.G) || int(e.Site) >= len(m.Sites) {
			t.Fatalf("event %+v uses an undefined goroutine or site", e)
		}
		if (e.Op == trace.OpFork || e.Op == trace.OpJoin) && !m.GoroutineDefined(e.Child()) {
			t.Fatalf("event %+v names an undefined child", e)
		}
	}
}

func FuzzSTDReader(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		checkReader(t, text.NewSTDReader(strings.NewReader(src), "fuzz"))
	})
}

// FuzzRAPIDReader: RAPID's threads on any input keep the reader's
// contract, and each thread runs after its fork (the root's or the
// trace's), which precedes it.
func FuzzRAPIDReader(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		checkReader(t, text.NewRAPIDReader(text.NewSTDReader(strings.NewReader(src), "fuzz")))
		r := text.NewRAPIDReader(text.NewSTDReader(strings.NewReader(src), "fuzz"))
		forked := map[trace.GID]bool{}
		for seq := uint64(0); ; seq++ {
			var e trace.Event
			if r.Next(&e) != nil {
				return
			}
			if e.Seq != seq {
				t.Fatalf("event %+v: want seq %d", e, seq)
			}
			if e.Op == trace.OpFork {
				forked[e.Child()] = true
			}
			if !forked[e.G] && r.Meta().Goroutine(e.G).Name != text.STDRootName {
				t.Fatalf("event %+v of a thread never forked", e)
			}
		}
	})
}

func FuzzTextReader(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		checkReader(t, text.NewTextReader(strings.NewReader(src), "fuzz"))
	})
}

// FuzzTextRoundTrip checks that whatever racekit text reads, the writer
// writes so that it reads back as the same trace, and that the writer's
// output is a fixed point.
func FuzzTextRoundTrip(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		a, err := text.Parse("fuzz", src)
		if err != nil {
			return
		}
		out1, err := format(a)
		if err != nil {
			t.Fatalf("writing %q: %v", src, err)
		}
		b, err := text.Parse("out1", out1)
		if err != nil {
			t.Fatalf("reading back %q\nwritten as %q: %v", src, out1, err)
		}
		if d := diffTrace(a, b); d != "" {
			t.Fatalf("%q\nwritten as %q\nreads back different: %s", src, out1, d)
		}
		out2, err := format(b)
		if err != nil || out2 != out1 {
			t.Fatalf("%q\nwritten as %q\nthen as %q (%v)", src, out1, out2, err)
		}
	})
}

func format(tr *trace.Trace) (string, error) {
	var sb strings.Builder
	w := text.NewTextWriter(&sb)
	if _, err := trace.Copy(w, tr.Iter()); err != nil {
		return "", fmt.Errorf("copy: %w", err)
	}
	err := w.Close()
	return sb.String(), err
}

// FuzzSTDRoundTrip checks that the STD writer keeps what STD can say of
// whatever the STD reader reads: the same events on the same goroutines
// and objects (names STD cannot hold are replaced, never merged), with
// the same parents; and that its output is a fixed point.
func FuzzSTDRoundTrip(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		a, err := readSTDTrace("fuzz", src)
		if err != nil {
			return
		}
		out1, err := formatSTD(a)
		if err != nil {
			t.Fatalf("writing %q: %v", src, err)
		}
		b, err := readSTDTrace("out1", out1)
		if err != nil {
			t.Fatalf("reading back %q\nwritten as %q: %v", src, out1, err)
		}
		if len(a.Events) != len(b.Events) {
			t.Fatalf("%q\nwritten as %q\nreads back %d events, want %d", src, out1, len(b.Events), len(a.Events))
		}
		for i := range a.Events {
			x, y := a.Events[i], b.Events[i]
			if x.Seq != y.Seq || x.G != y.G || x.Op != y.Op || x.Flags != y.Flags || x.Obj != y.Obj {
				t.Fatalf("%q\nwritten as %q\nevent %d reads back as %+v, want %+v", src, out1, i, y, x)
			}
		}
		for g := range a.M.Goroutines {
			if a.M.Goroutines[g].Parent != b.M.Goroutines[g].Parent {
				t.Fatalf("%q\nwritten as %q\ngoroutine %d has parent %d, want %d", src, out1, g, b.M.Goroutines[g].Parent, a.M.Goroutines[g].Parent)
			}
		}
		out2, err := formatSTD(b)
		if err != nil || out2 != out1 {
			t.Fatalf("%q\nwritten as %q\nthen as %q (%v)", src, out1, out2, err)
		}
	})
}

func readSTDTrace(name, src string) (*trace.Trace, error) {
	r := text.NewSTDReader(strings.NewReader(src), name)
	t := &trace.Trace{M: r.Meta()}
	for {
		var e trace.Event
		err := r.Next(&e)
		if errors.Is(err, io.EOF) {
			return t, nil
		}
		if err != nil {
			return t, err
		}
		t.Events = append(t.Events, e.Clone())
	}
}

func formatSTD(tr *trace.Trace) (string, error) {
	var sb strings.Builder
	w := text.NewSTDWriter(&sb)
	if _, err := trace.Copy(w, tr.Iter()); err != nil {
		return "", fmt.Errorf("copy: %w", err)
	}
	err := w.Close()
	return sb.String(), err
}
