package text_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/racekit/racekit/trace"
	"github.com/racekit/racekit/trace/text"
)

func ExampleParse() {
	tr, err := text.Parse("example.rktx", `
# T0 starts T1; both touch x; T1 reads 5 under lock m.
T0|fork(T1)|main.go:10:2
T0|w(x=5)|main.go:11:4
T1|acq(m)|main.go:20:3
T1|r(x=5)|main.go:21:7
T1|rel(m)
`)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range tr.Events {
		g := tr.M.Goroutine(e.G)
		fmt.Printf("%d %s %s(%s) at %s\n", e.Seq, g.Label(), e.Op, tr.M.ObjLabel(e.Obj), tr.M.Site(e.Site))
	}
	fmt.Println("parent of T1:", tr.M.Goroutine(tr.M.Goroutines[1].Parent).Label())
	// Output:
	// 0 T0 fork(0x1) at main.go:10:2
	// 1 T0 w(x) at main.go:11:4
	// 2 T1 acq(m) at main.go:20:3
	// 3 T1 r(x) at main.go:21:7
	// 4 T1 rel(m) at ?
	// parent of T1: T0
}

func ExampleSTDWriter() {
	tr, _ := text.Parse("in.rktx", "T0|fork(T1)|a.go:3\nT1|snd(ch)|a.go:4\nT1|w(x=1)|a.go:5\nT0|rcv(ch)|a.go:6\n")

	w := text.NewSTDWriter(os.Stdout)
	_, err := trace.Copy(w, tr.Iter())
	fmt.Println(err)

	w = text.NewSTDWriter(os.Stdout)
	w.Lossy = true
	_, err = trace.Copy(w, tr.Iter())
	_ = w.Close()
	fmt.Println(err, w.Dropped())
	// Output:
	// event seq 1: STD cannot express snd; use --lossy to drop it or racekit text format
	// T0|fork(T1)|a.go:3
	// T1|w(x)|a.go:5
	// <nil> map[snd:1 rcv:1]
}

func ExampleTextWriter() {
	// A trace as a live run records it: no names, a site with a function.
	tr := trace.NewTrace()
	_ = tr.M.DefineSite(1, trace.Site{File: "main.go", Line: 12, Col: 3, Func: "main.main"})
	tr.Events = []trace.Event{{Seq: 0, G: 0, Op: trace.OpWrite, Obj: 0xc000012345, Value: 7, Site: 1}}

	var sb strings.Builder
	w := text.NewTextWriter(&sb)
	_, _ = trace.Copy(w, tr.Iter())
	_ = w.Close()
	fmt.Print(sb.String())
	// Output:
	// #!g T0 name=""
	// #!site main.go:12:3 func=main.main
	// T0|w(0xc000012345=7)|main.go:12:3
}
