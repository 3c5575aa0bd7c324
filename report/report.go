// Package report renders findings for people and tools: text in the style
// of Go's race detector ("WARNING: DATA RACE", two accesses, two
// goroutines, where each was created), and JSON. Renderers read collected
// finding groups plus the trace's Meta to name sites, goroutines and
// objects; they know nothing of how the findings were made.
package report

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/racekit/racekit/detect/alloc"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/trace"
)

// Result is what one detector found on one trace.
type Result struct {
	Detector string
	Groups   []finding.Group
	Stacks   map[finding.Pair][]trace.Site // optional: the current access's stack at first occurrence, innermost first
	// PrevStacks (optional) is the previous access's stack at the first
	// occurrence, innermost first, as the goroutine's stack history
	// restored it; without one the previous access shows its site.
	PrevStacks map[finding.Pair][]trace.Site
	// Created (optional) is the stack of the go statement that created
	// a goroutine, innermost first; without one, the statement's site.
	Created map[trace.GID][]trace.Site
	// Tests (optional) names the test (or benchmark, example, fuzz
	// target) whose goroutine made the current access at the first
	// occurrence; "" or absent: none known. Text does not print it:
	// racekit test groups the reports by test.
	Tests map[finding.Pair]string
	// Again (optional) names, in order, the other tests in which the race
	// occurred again (same pair of sites, later occurrences): go test
	// -race fails each test during which a race is reported, the same
	// race again included unless go test -race would not see it (its
	// previous access made on the cell before a race reported there) or
	// it has the stacks of a race reported before (analyze.Suppress).
	Again map[finding.Pair][]string
	// Running (optional) names, in order, the other tests that were
	// running when the race was reported (and are not in Tests or Again):
	// go test -race fails every test running then (testing's
	// checkRaces), a test's ancestors with it.
	Running map[finding.Pair][]string
	// Heap (optional) is the allocation of the object a race's address is
	// in, when it is a heap object traced code (or a std call with a fresh
	// result) allocated (detect/alloc).
	Heap map[finding.Pair]alloc.Block
}

// Text writes each distinct race as a block like Go's race detector, then a
// summary line per detector.
func Text(w io.Writer, m *trace.Meta, results []Result) error {
	if err := Races(w, m, results); err != nil {
		return err
	}
	bw := &errWriter{w: w}
	for _, res := range results {
		n := 0
		for _, g := range res.Groups {
			n += g.Count
		}
		bw.printf("%s: %d distinct race(s), %d dynamic\n", res.Detector, len(res.Groups), n)
	}
	return bw.err
}

// Races writes each distinct race as a block like Go's race detector.
func Races(w io.Writer, m *trace.Meta, results []Result) error {
	bw := &errWriter{w: w}
	total := 0
	for _, res := range results {
		for i := range res.Groups {
			g := &res.Groups[i]
			total++
			bw.printf("==================\n")
			bw.printf("WARNING: DATA RACE (%s by %s", g.Evidence, g.Detector)
			if g.Count > 1 {
				bw.printf(", %d occurrences", g.Count)
			}
			bw.printf(")\n")
			writeAccess(bw, m, capital(g.Cur.Kind()), g.Addr, g.Cur, res.Stacks[g.Pair()])
			bw.printf("\n")
			writeAccess(bw, m, "Previous "+g.Prev.Kind(), g.Addr, g.Prev, res.PrevStacks[g.Pair()])
			if b, ok := res.Heap[g.Pair()]; ok {
				bw.printf("\nLocation is heap block of size %d at 0x%x allocated by goroutine %s at:\n", b.Size, b.Addr, m.Goroutine(b.G).Label())
				writeFrame(bw, m.Site(b.Site))
			}
			for i, gid := range []trace.GID{g.Cur.G, g.Prev.G} {
				if i == 1 && gid == g.Cur.G {
					break // one goroutine: Go names it once too
				}
				bw.printf("\n")
				writeCreation(bw, m, gid, res.Created[gid])
			}
			bw.printf("==================\n")
		}
	}
	return bw.err
}

func writeAccess(bw *errWriter, m *trace.Meta, what string, addr uint64, a finding.Access, stack []trace.Site) {
	obj := ""
	if n := m.Location(addr); n != "" {
		obj = " (" + n + ")"
	}
	bw.printf("%s at 0x%x%s by goroutine %s (event %d):\n", what, addr, obj, m.Goroutine(a.G).Label(), a.Seq)
	if len(stack) == 0 {
		stack = m.Site(a.Site).Frames()
	}
	for _, s := range stack {
		writeFrame(bw, s)
	}
}

func writeFrame(bw *errWriter, s trace.Site) {
	if s.Func == "" {
		bw.printf("  %s\n", s)
		return
	}
	bw.printf("  %s()\n      %s\n", s.Func, s)
}

func writeCreation(bw *errWriter, m *trace.Meta, gid trace.GID, stack []trace.Site) {
	g := m.Goroutine(gid)
	if g.Parent == trace.NoParent {
		bw.printf("Goroutine %s (running, created outside the trace)\n", g.Label())
		return
	}
	if s := m.Site(g.Site); s.File == trace.FrameworkFile {
		bw.printf("Goroutine %s (running, created by %s)\n", g.Label(), s.Func)
		return
	}
	bw.printf("Goroutine %s (created by goroutine %s at):\n", g.Label(), m.Goroutine(g.Parent).Label())
	if len(stack) == 0 {
		stack = []trace.Site{m.Site(g.Site)}
	}
	for _, s := range stack {
		writeFrame(bw, s)
	}
}

func capital(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

// JSONSite is a resolved source position.
type JSONSite struct {
	ID   trace.SiteID `json:"id"`
	File string       `json:"file"`
	Line int          `json:"line,omitempty"`
	Col  int          `json:"col,omitempty"`
	Func string       `json:"func,omitempty"`
}

// JSONAccess is one side of a race.
type JSONAccess struct {
	Kind      string     `json:"kind"`
	Event     uint64     `json:"event"`
	Goroutine string     `json:"goroutine"`
	Site      JSONSite   `json:"site"`
	Stack     []JSONSite `json:"stack,omitempty"`
}

// JSONRace is one distinct race.
type JSONRace struct {
	Detector string     `json:"detector"`
	Evidence string     `json:"evidence"`
	Addr     string     `json:"addr"`
	Object   string     `json:"object,omitempty"`
	Count    int        `json:"count"`
	Current  JSONAccess `json:"current"`
	Previous JSONAccess `json:"previous"`
	// Witness is a predicted race's reordering (detect/predict.CheckWitness
	// validates it against the trace; racekit hatch -from rdit follows it).
	Witness *finding.Witness `json:"witness,omitempty"`
	// Block is the heap object the address is in, when known.
	Block *JSONBlock `json:"block,omitempty"`
}

// JSONBlock is a heap object: where, how big, allocated where and by whom.
type JSONBlock struct {
	Addr      string   `json:"addr"`
	Size      uint64   `json:"size"`
	Goroutine string   `json:"goroutine"`
	Site      JSONSite `json:"site"`
}

// JSONReport is the whole JSON document of `racekit analyze --format=json`.
type JSONReport struct {
	Trace  string           `json:"trace"`
	Events int64            `json:"events"`
	Races  []JSONRace       `json:"races"`
	Counts map[string]int   `json:"distinct_races_by_detector"`
	Stats  map[string]int64 `json:"stats,omitempty"`
}

func jsonSite(m *trace.Meta, id trace.SiteID) JSONSite {
	s := m.Site(id)
	return JSONSite{ID: id, File: s.File, Line: s.Line, Col: s.Col, Func: s.Func}
}

// jsonSites converts a stack for JSON.
func jsonSites(stack []trace.Site) []JSONSite {
	var out []JSONSite
	for _, s := range stack {
		out = append(out, JSONSite{File: s.File, Line: s.Line, Col: s.Col, Func: s.Func})
	}
	return out
}

func jsonAccess(m *trace.Meta, a finding.Access, stack []trace.Site) JSONAccess {
	if s := m.Site(a.Site); len(stack) == 0 && !s.Callee.IsZero() {
		stack = s.Frames()
	}
	return JSONAccess{Kind: a.Kind(), Event: a.Seq, Goroutine: m.Goroutine(a.G).Label(), Site: jsonSite(m, a.Site), Stack: jsonSites(stack)}
}

// BuildJSON assembles the JSON report.
func BuildJSON(traceName string, events int64, m *trace.Meta, results []Result) JSONReport {
	rep := JSONReport{Trace: traceName, Events: events, Races: []JSONRace{}, Counts: map[string]int{}}
	for _, res := range results {
		rep.Counts[res.Detector] = len(res.Groups)
		for _, g := range res.Groups {
			var blk *JSONBlock
			if b, ok := res.Heap[g.Pair()]; ok {
				blk = &JSONBlock{Addr: fmt.Sprintf("0x%x", b.Addr), Size: b.Size, Goroutine: m.Goroutine(b.G).Label(), Site: jsonSite(m, b.Site)}
			}
			rep.Races = append(rep.Races, JSONRace{
				Detector: g.Detector,
				Evidence: g.Evidence.String(),
				Addr:     fmt.Sprintf("0x%x", g.Addr),
				Object:   m.Location(g.Addr),
				Count:    g.Count,
				Current:  jsonAccess(m, g.Cur, res.Stacks[g.Pair()]),
				Previous: jsonAccess(m, g.Prev, res.PrevStacks[g.Pair()]),
				Witness:  g.Witness,
				Block:    blk,
			})
		}
	}
	return rep
}

// JSON writes the report as indented JSON.
func JSON(w io.Writer, rep JSONReport) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// LocateHeap fills the Heap of results: for each race whose address is not
// in a named variable, the heap block it is in (detect/alloc: from log, the
// allocations the analysis kept, or where it could not keep them all a
// second pass over the trace at path, only when there are races).
func LocateHeap(path string, log *alloc.Log, meta *trace.Meta, results []Result) error {
	var qs []alloc.Query
	var at []finding.Pair
	var of []int
	for i, r := range results {
		for _, g := range r.Groups {
			if meta.Location(g.Addr) == "" {
				qs = append(qs, alloc.Query{Addr: g.Addr, Before: min(g.Cur.Seq, g.Prev.Seq)})
				at, of = append(at, g.Pair()), append(of, i)
			}
		}
	}
	if len(qs) == 0 {
		return nil
	}
	blocks, ok, err := alloc.Locate(path, log, qs)
	if err != nil {
		return err
	}
	for j, b := range blocks {
		if ok[j] {
			r := &results[of[j]]
			if r.Heap == nil {
				r.Heap = map[finding.Pair]alloc.Block{}
			}
			r.Heap[at[j]] = b
		}
	}
	return nil
}
