package report

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/trace"
)

func sample() (*trace.Meta, []Result) {
	m := trace.NewMeta()
	work := m.InternSite(trace.Site{File: "w.go", Line: 7, Col: 2, Func: "main.work"})
	read := m.InternSite(trace.Site{File: "m.go", Line: 9})
	spawn := m.InternSite(trace.Site{File: "m.go", Line: 3, Func: "main.main"})
	_ = m.DefineGoroutine(trace.Goroutine{ID: 0, Parent: trace.NoParent, Name: "main"})
	_ = m.DefineGoroutine(trace.Goroutine{ID: 1, Parent: 0, Site: spawn})
	m.SetName(0xc0, "counter")
	g := finding.Group{Count: 4, Race: finding.Race{
		Detector: "fasttrack", Evidence: finding.Observed, Addr: 0xc0,
		Prev: finding.Access{Seq: 2, G: 0, Site: read},
		Cur:  finding.Access{Seq: 5, G: 1, Site: work, Write: true},
	}}
	return m, []Result{{Detector: "fasttrack", Groups: []finding.Group{g}}, {Detector: "hb"}}
}

func TestTextLooksLikeGoRaceDetector(t *testing.T) {
	m, res := sample()
	var b bytes.Buffer
	if err := Text(&b, m, res); err != nil {
		t.Fatal(err)
	}
	want := `==================
WARNING: DATA RACE (observed by fasttrack, 4 occurrences)
Write at 0xc0 (counter) by goroutine G1 (event 5):
  main.work()
      w.go:7:2

Previous read at 0xc0 (counter) by goroutine main (event 2):
  m.go:9

Goroutine G1 (created by goroutine main at):
  main.main()
      m.go:3

Goroutine main (running, created outside the trace)
==================
fasttrack: 1 distinct race(s), 4 dynamic
hb: 0 distinct race(s), 0 dynamic
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestJSONResolvesSitesAndGoroutines(t *testing.T) {
	m, res := sample()
	var b bytes.Buffer
	if err := JSON(&b, BuildJSON("t.rkt", 10, m, res)); err != nil {
		t.Fatal(err)
	}
	var rep JSONReport
	if err := json.Unmarshal(b.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Races) != 1 || rep.Counts["fasttrack"] != 1 || rep.Counts["hb"] != 0 {
		t.Fatalf("report = %+v", rep)
	}
	r := rep.Races[0]
	if r.Object != "counter" || r.Addr != "0xc0" || r.Count != 4 || r.Evidence != "observed" ||
		r.Current.Goroutine != "G1" || r.Current.Kind != "write" || r.Current.Site.Func != "main.work" ||
		r.Previous.Site.File != "m.go" || r.Previous.Site.Line != 9 {
		t.Errorf("race = %+v", r)
	}
}
