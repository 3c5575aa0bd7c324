package main

import (
	"fmt"
	"strings"

	"github.com/racekit/racekit/bench/truth"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/trace"
)

// annot counts site pairs against a subject's own annotations
// (racekit:race and racekit:norace markers, package bench/truth): pairs a
// race entry of kind race names, pairs a norace entry names (known false
// alarms), and the others. The annotations are a second, independent
// ground truth: mcm's answer on the complete trace (#True) is exact for
// the model, but the Go front end records plain accesses without values,
// so a read may be reordered to see another write, and racy reads can
// enable races that the program cannot run.
type annot struct{ race, norace, other int }

func (a annot) cell() string { return fmt.Sprintf("%d/%d/%d", a.race, a.norace, a.other) }

// annotRow holds one annot per column: the ground truth, then per rule
// hb, wcp, mcm and rdit.
type annotRow struct{ cols []annot }

func (r *annotRow) add(a annot) { r.cols = append(r.cols, a) }

func (r *annotRow) addRow(x annotRow) {
	for len(r.cols) < len(x.cols) {
		r.cols = append(r.cols, annot{})
	}
	for i, a := range x.cols {
		r.cols[i].race += a.race
		r.cols[i].norace += a.norace
		r.cols[i].other += a.other
	}
}

// classify counts the pairs of set against subj's annotations.
func classify(subj *truth.Subject, tr *trace.Trace, set map[finding.Pair]bool) annot {
	var a annot
	for p := range set {
		la, oka := lineOf(subj, tr.M.Site(p.A))
		lb, okb := lineOf(subj, tr.M.Site(p.B))
		lines := []truth.Line{la, lb}
		switch {
		case oka && okb && matches(subj.Entries(truth.KindRace), lines):
			a.race++
		case oka && okb && matches(subj.NoRaces, lines):
			a.norace++
		default:
			a.other++
		}
	}
	return a
}

func matches(es []*truth.Entry, lines []truth.Line) bool {
	for _, e := range es {
		if e.Matches(lines) {
			return true
		}
	}
	return false
}

// lineOf maps a site to a line of the subject (its file relative to the
// subject's directory), also for a trace recorded in another checkout.
func lineOf(subj *truth.Subject, s trace.Site) (truth.Line, bool) {
	key := "/bench/subjects/" + subj.Name + "/"
	f := strings.ReplaceAll(s.File, "\\", "/")
	i := strings.LastIndex(f, key)
	if i < 0 || s.Line == 0 {
		return truth.Line{}, false
	}
	return truth.Line{File: f[i+len(key):], Line: s.Line}, true
}

func annotHeader(rules []rule) string {
	var b strings.Builder
	b.WriteString("\n## Cross-check with the subjects' annotations\n\n")
	b.WriteString("Each cell: site pairs that a `racekit:race` entry names / that a `racekit:norace` entry names / neither.\n\n")
	b.WriteString("| subject | #True (mcm, complete trace) |")
	sep := "|---|---|"
	for _, r := range rules {
		for _, d := range []string{"HB", "WCP", "MC", "RDIT"} {
			fmt.Fprintf(&b, " %s %s |", d, r.name)
			sep += "---|"
		}
	}
	return b.String() + "\n" + sep + "\n"
}

func annotLine(name string, cells []annotRow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| %s |", name)
	for _, c := range cells {
		for _, a := range c.cols {
			fmt.Fprintf(&b, " %s |", a.cell())
		}
	}
	return b.String() + "\n"
}

const annotLegend = `
A pair named by a race entry is a race the subject's author planted or
found; one named by a norace entry is a known false alarm (for example
sor's banded updates, ordered by a barrier built on sync.Cond); a pair
named by neither is unannotated (a race of the test harness, or one the
annotations do not list).
`
