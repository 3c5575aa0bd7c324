package testout

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/racekit/racekit/analyze"
	"github.com/racekit/racekit/confirm"
	"github.com/racekit/racekit/report"
	"github.com/racekit/racekit/sched"
	"github.com/racekit/racekit/trace"
)

// SARIF is racekit test -sarif: every race reported, kept with its
// two accesses' stacks while each package's trace is analyzed (the
// analysis is gone once the package is printed), given -confirm's verdict
// once the confirmation is done, and written as SARIF at the end.
type SARIF struct {
	Path   string // the file written
	races  []report.DynamicRace
	blocks []report.DynamicBlock // --leaks' and --deadlocks' findings
}

// note keeps the races of a, pkg's test binary's trace ("": a binary
// that no package of go test's claimed), and its leaks and deadlocks. A
// nil s keeps nothing.
func (s *SARIF) note(pkg string, a *analyze.Analysis) {
	if s == nil {
		return
	}
	for i := range a.Results {
		res := &a.Results[i]
		for _, g := range res.Groups {
			r := report.NewDynamicRace(a.Meta, res, g)
			r.Package = pkg
			r.Pair, _ = confirm.RacePair(a.Meta, g.Prev, g.Cur)
			s.races = append(s.races, r)
		}
	}
	var blocks []report.DynamicBlock
	for _, l := range a.Leaks {
		blocks = append(blocks, report.NewLeakBlock(a.Meta, l))
	}
	if len(a.Stalled) > 0 {
		blocks = append(blocks, report.NewStallBlock(a.Meta, a.Stalled, a.StallTests))
	}
	for _, cy := range a.Cycles {
		blocks = append(blocks, report.NewCycleBlock(a.Meta, cy))
	}
	for i := range blocks {
		blocks[i].Package = pkg
	}
	s.blocks = append(s.blocks, blocks...)
}

// Judge gives each race -confirm's verdict on its pair. The confirmation
// may have merged the pair with another naming the same two accesses
// more exactly (confirm's candidates keep one per pair); then the pair of
// the same package on the same two lines is the race's, unless there are
// several: the race keeps its detector's evidence rather than a guess.
func (s *SARIF) Judge(res *confirm.FuzzResult) {
	if s == nil || res == nil {
		return
	}
	type key struct{ pkg, pair string }
	exact := map[key]*confirm.FuzzPair{}
	lines := map[key]*confirm.FuzzPair{}
	for i := range res.Pairs {
		p := &res.Pairs[i]
		exact[key{p.Package, p.Pair}] = p
		k := key{p.Package, confirm.PairKey(p.Pair)}
		if _, dup := lines[k]; dup {
			lines[k] = nil
		} else {
			lines[k] = p
		}
	}
	judged := map[*confirm.FuzzPair]bool{}
	for i := range s.races {
		r := &s.races[i]
		if r.Pair == "" {
			continue
		}
		p := exact[key{r.Package, r.Pair}]
		if p == nil {
			p = lines[key{r.Package, confirm.PairKey(r.Pair)}]
		}
		if p == nil {
			continue
		}
		judged[p] = true
		r.Verdict, r.Runs, r.Created, r.Probability, r.Replay = p.Verdict, p.Runs, p.Created, p.Probability, p.Replay
	}
	// The races only the confirmation showed (a candidate made to happen,
	// or a race of a random-scheduler recording): their two statements,
	// no stacks (no recorded run reported them with theirs).
	for i := range res.Pairs {
		p := &res.Pairs[i]
		if judged[p] || p.Verdict != "confirmed" && p.Verdict != "observed" {
			continue
		}
		a, b, _ := strings.Cut(p.Pair, "~")
		s.races = append(s.races, report.DynamicRace{
			Package: p.Package, Test: p.Test, Detector: "racefuzzer", Pair: p.Pair,
			Verdict: p.Verdict, Runs: p.Runs, Created: p.Created, Probability: p.Probability, Replay: p.Replay,
			Count: p.Created, Cur: stmtAccess(b), Prev: stmtAccess(a),
		})
	}
}

// stmtAccess is one statement of a confirmation's pair as a race's access:
// its site and kind, its goroutine unknown.
func stmtAccess(stmt string) report.RaceAccess {
	st, _ := sched.ParseStmt(stmt)
	kind := "read"
	if st.Kind == sched.KindWrite {
		kind = "write"
	}
	return report.RaceAccess{Kind: kind, Site: trace.Site{File: st.File, Line: st.Line, Col: st.Col}}
}

// Write writes the SARIF log, files given relative to the main module's
// root (as code-scanning services want them: relative to the checkout).
func (s *SARIF) Write() error {
	f, err := os.Create(s.Path)
	if err != nil {
		return err
	}
	if err := report.SARIF(f, s.races, s.blocks, moduleRoot()); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// moduleRoot is the directory of the go.mod the working directory is in,
// or the working directory if none (GOPATH mode); "" if unknown.
func moduleRoot() string {
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	for dir := wd; ; {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			return wd
		}
		dir = up
	}
}
