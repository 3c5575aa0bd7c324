package main

import (
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/racekit/racekit/detect/predict"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/solver"
	"github.com/racekit/racekit/trace"
)

// z3Backend makes a Z3 solver when the command is built with -tags z3
// (z3.go); nil otherwise.
var z3Backend func() solver.Backend

// solverRow is mcm on one complete trace with the pure-Go solver and with
// Z3, the same windows and no conflict budget, so that every query gets a
// definite answer from both.
type solverRow struct {
	name             string
	events           int
	windows, queries int64
	goSat, zSat      int64
	goSecs, zSecs    float64
	goPairs, zPairs  int
	same             bool
	skipped          bool // over -z3-max-events: not run
}

func compareSolvers(name string, tr *trace.Trace, window, maxEvents int) solverRow {
	r := solverRow{name: name, events: len(tr.Events)}
	if len(tr.Events) > maxEvents {
		r.skipped = true
		return r
	}
	run := func(mk func() solver.Backend) (map[finding.Pair]bool, map[string]int64, float64) {
		c := finding.NewCollector()
		d := predict.NewMCM(c, predict.Options{Window: window, Conflicts: -1, Solver: mk})
		start := time.Now()
		p := pairs(tr, d, c)
		return p, d.Stats(), time.Since(start).Seconds()
	}
	gp, gs, gt := run(nil)
	zp, zs, zt := run(z3Backend)
	r.windows, r.queries = gs["windows"], gs["queries"]
	r.goSat, r.zSat = gs["sat"], zs["sat"]
	r.goSecs, r.zSecs = gt, zt
	r.goPairs, r.zPairs = len(gp), len(zp)
	r.same = maps.Equal(gp, zp) && gs["queries"] == zs["queries"] && gs["sat"] == zs["sat"] && gs["unsat"] == zs["unsat"]
	return r
}

const solverHeader = "| trace | events | windows | queries | sat (Go / Z3) | races (Go / Z3) | same answers | Go s | Z3 s |\n" +
	"|---|---:|---:|---:|---|---|---|---:|---:|\n"

func (r solverRow) line() string {
	if r.skipped {
		return fmt.Sprintf("| %s | %d | | | | | skipped (over -z3-max-events) | | |\n", r.name, r.events)
	}
	same := "yes"
	if !r.same {
		same = "**NO**"
	}
	return fmt.Sprintf("| %s | %d | %d | %d | %d / %d | %d / %d | %s | %.3f | %.3f |\n",
		r.name, r.events, r.windows, r.queries, r.goSat, r.zSat, r.goPairs, r.zPairs, same, r.goSecs, r.zSecs)
}

func solverTable(rows []solverRow, window int) string {
	var b strings.Builder
	b.WriteString("# mcm with the pure-Go solver and with Z3, on the same windows\n\n")
	fmt.Fprintf(&b, "Complete traces, windows of %d events (overlap half), no conflict budget; Z3 is solver.NewZ3 (its default solver, queries as assumptions).\n\n", window)
	b.WriteString(solverHeader)
	var tot solverRow
	tot.name, tot.same = "**Total**", true
	for _, r := range rows {
		b.WriteString(r.line())
		if r.skipped {
			continue
		}
		tot.events += r.events
		tot.windows += r.windows
		tot.queries += r.queries
		tot.goSat += r.goSat
		tot.zSat += r.zSat
		tot.goPairs += r.goPairs
		tot.zPairs += r.zPairs
		tot.goSecs += r.goSecs
		tot.zSecs += r.zSecs
		tot.same = tot.same && r.same
	}
	b.WriteString(tot.line())
	return b.String()
}
