package confirm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/racekit/racekit/analyze"
	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/detect/hb"
	"github.com/racekit/racekit/detect/lockset"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/sched"
	"github.com/racekit/racekit/static"
	"github.com/racekit/racekit/trace"
)

// Phase1Sources returns phase 1's sources, in the order hybrid, vet,
// pairs: those spec (-phase1) names, plus pairs when pairsFile (-pairs)
// is set and hybrid when trace (-use-trace) is; with none of them, hybrid.
func Phase1Sources(spec, pairsFile, trace string) ([]string, error) {
	want := map[string]bool{}
	if spec = strings.TrimSpace(spec); spec != "" {
		for _, x := range strings.Split(spec, ",") {
			x = strings.TrimSpace(x)
			switch x {
			case "hybrid", "vet", "pairs":
				want[x] = true
			default:
				return nil, fmt.Errorf("-phase1: unknown source %q (want hybrid, vet or pairs)", x)
			}
		}
	}
	if pairsFile != "" {
		want["pairs"] = true
	}
	if trace != "" || len(want) == 0 {
		want["hybrid"] = true
	}
	if want["pairs"] && pairsFile == "" {
		return nil, fmt.Errorf("-phase1 pairs needs -pairs FILE")
	}
	var out []string
	for _, x := range []string{"hybrid", "vet", "pairs"} {
		if want[x] {
			out = append(out, x)
		}
	}
	return out, nil
}

// phase1Description counts the pairs per source (into counts) and
// describes phase 1: the sources' descriptions, with their pair counts
// when there are several.
func phase1Description(sources, desc []string, jobs []fuzzJob, counts map[string]int) string {
	multi := 0
	for _, jb := range jobs {
		for _, src := range jb.sources {
			counts[src]++
		}
		if len(jb.sources) > 1 {
			multi++
		}
	}
	if len(sources) < 2 {
		return strings.Join(desc, "")
	}
	parts := make([]string, len(sources))
	for i, src := range sources {
		parts[i] = fmt.Sprintf("%s: %d", desc[i], counts[src])
	}
	by := "both"
	if len(sources) > 2 {
		by = "more than one"
	}
	return fmt.Sprintf("%s; %d found by %s", strings.Join(parts, ", "), multi, by)
}

// fuzzJob is one candidate pair on one package, with the phase 1 sources
// that found it.
type fuzzJob struct {
	index    int // its number among phase 1's candidates, from 1
	t        *Target
	pair     string
	sources  []string
	observed bool   // hb reported it on a recorded run of phase 1
	test     string // runs run only this top-level test ("": all)
}

// candidates is the union of phase 1's pairs, per package, in the order
// they were first found; a pair found again (by another source, or with
// its statements the other way round, or its files named otherwise) gains
// the source. Pairs on the same lines are one when their statements can
// name the same accesses (equal columns and kinds where both give them:
// vet's line-only pair and hybrid's exact one); the pair then fuzzed is
// the more exact, whose points are the accesses alone. Two exact pairs
// of other accesses on the same lines stay two.
type candidates struct {
	targets []*Target
	jobs    []fuzzJob
	index   map[*Target]map[string][]int // pairKey -> indices in jobs
}

// find returns the index of t's job that is pair, or -1.
func (c *candidates) find(t *Target, pair string) int {
	for _, i := range c.index[t][PairKey(pair)] {
		if samePair(c.jobs[i].pair, pair) {
			return i
		}
	}
	return -1
}

func (c *candidates) add(t *Target, pair, source string) {
	if i := c.find(t, pair); i >= 0 {
		jb := &c.jobs[i]
		if exactness(pair) > exactness(jb.pair) {
			jb.pair = pair
		}
		if !slices.Contains(jb.sources, source) {
			jb.sources = append(jb.sources, source)
		}
		return
	}
	m := c.index[t]
	if m == nil {
		m = map[string][]int{}
		c.index[t] = m
	}
	k := PairKey(pair)
	m[k] = append(m[k], len(c.jobs))
	c.jobs = append(c.jobs, fuzzJob{index: len(c.jobs) + 1, t: t, pair: pair, sources: []string{source}})
}

// observe marks t's pair, added before, as a race a recorded run had.
func (c *candidates) observe(t *Target, pair string) {
	if i := c.find(t, pair); i >= 0 {
		c.jobs[i].observed = true
	}
}

// samePair reports whether two pairs can name the same two accesses, in
// either order (sched.Stmt.Compatible, files made absolute).
func samePair(p, q string) bool {
	a, b := pairStmts(p)
	x, y := pairStmts(q)
	return a.Compatible(x) && b.Compatible(y) || a.Compatible(y) && b.Compatible(x)
}

// pairStmts parses a pair's two statements, their files absolute.
func pairStmts(pair string) (sched.Stmt, sched.Stmt) {
	a, b, _ := strings.Cut(pair, "~")
	x, _ := sched.ParseStmt(strings.TrimSpace(a))
	y, _ := sched.ParseStmt(strings.TrimSpace(b))
	x.File, y.File = absFile(x.File), absFile(y.File)
	return x, y
}

// exactness counts what a pair's statements say beyond their lines.
func exactness(pair string) int {
	n := 0
	a, b := pairStmts(pair)
	for _, st := range []sched.Stmt{a, b} {
		if st.Col > 0 {
			n++
		}
		if st.Kind != sched.KindOther {
			n++
		}
	}
	return n
}

// addAnywhere adds a pair that names no package: to the packages whose
// directory holds one of its files, or to every package when none does
// (the statements may be in a dependency the tests reach).
func (c *candidates) addAnywhere(pair, source string) {
	var in []*Target
	a, b, _ := strings.Cut(pair, "~")
	for _, t := range c.targets {
		for _, site := range []string{a, b} {
			if filepath.Dir(absFile(siteFile(site))) == t.Dir {
				in = append(in, t)
				break
			}
		}
	}
	if len(in) == 0 {
		in = c.targets
	}
	for _, t := range in {
		c.add(t, pair, source)
	}
}

// siteFile is the file of a site file:line or file:line:col.
func siteFile(site string) string {
	s := sched.LineSite(site)
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		return s[:i]
	}
	return s
}

// absFile makes a relative file name absolute (relative to the working
// directory) and cleans it.
func absFile(f string) string {
	if a, err := filepath.Abs(f); err == nil {
		return a
	}
	return filepath.Clean(f)
}

// PairKey is a pair's lines: both statements as absolute file:line, in
// order (columns and kinds left out).
func PairKey(pair string) string {
	a, b, _ := strings.Cut(pair, "~")
	x, y := sched.LineSite(strings.TrimSpace(a)), sched.LineSite(strings.TrimSpace(b))
	x = absFile(siteFile(x)) + x[len(siteFile(x)):]
	y = absFile(siteFile(y)) + y[len(siteFile(y)):]
	if y < x {
		x, y = y, x
	}
	return x + "~" + y
}

// staticPairs runs racekit vet's analysis (RELAY, default configuration) on
// the packages and returns its warnings' pairs as file:line~file:line,
// and how many warnings had an access without a position (skipped).
func staticPairs(pkgs []string) ([]string, int, error) {
	rep, err := static.Run(pkgs, static.Options{})
	if err != nil {
		return nil, 0, err
	}
	if len(rep.Errors) > 0 {
		return nil, 0, fmt.Errorf("%d load errors, the first: %s", len(rep.Errors), rep.Errors[0])
	}
	var buf bytes.Buffer
	if err := static.WritePairs(&buf, rep.Kept()); err != nil {
		return nil, 0, err
	}
	return parsePairs(&buf, "racekit vet -pairs")
}

// readPairs reads a pairs file: file:line~file:line lines, or JSON lines
// {"a": SITE, "b": SITE} (racekit vet -pairs). It returns the distinct
// pairs and how many JSON lines had a site without a position ("?", as
// vet writes for an access it could not place), which are skipped. A
// line's statements keep their columns and kinds (file:line:col:w, as
// fuzz prints the pairs hybrid found): each names one access. A JSON
// line's are taken by line: vet's columns are the static analysis's
// positions, not necessarily those of the instrumented accesses.
func readPairs(path string) ([]string, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	return parsePairs(f, path)
}

func parsePairs(r io.Reader, name string) ([]string, int, error) {
	var out []string
	unplaced := 0
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "{") {
			var p struct{ A, B string }
			if err := json.Unmarshal([]byte(line), &p); err != nil {
				return nil, 0, fmt.Errorf("%s:%d: %v", name, n, err)
			}
			if p.A == "" || p.A == "?" || p.B == "" || p.B == "?" {
				unplaced++
				continue
			}
			line = sched.LineSite(p.A) + "~" + sched.LineSite(p.B)
		}
		p, err := sched.ParsePair(line)
		if err != nil {
			return nil, 0, fmt.Errorf("%s:%d: %v", name, n, err)
		}
		s := p[0] + "~" + p[1]
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out, unplaced, sc.Err()
}

// tracePairs returns the statement pairs the hybrid detector reports on a
// trace, phase 1's candidates, and the set of those hb reports too: two
// accesses the recorded run left unordered by happens-before, a data race
// of that execution as the Go memory model defines it, whether or not
// phase 2 can bring the two next to each other. Each statement is the
// access itself, file:line:col:r or :w (sched.ParseStmt), as the trace's
// site and op name it: phase 2 then postpones goroutines at those two
// accesses alone, not at every access on their lines (a harmless read
// beside the racing write would lower the probability of creating the
// race, §3.2). A site without a column is its line.
func tracePairs(path string) (pairs []string, observed map[string]bool, err error) {
	a, err := analyze.Trace(path, analyze.Options{Algos: []string{"hybrid", "hb"}, New: phase1Detector})
	if err != nil {
		return nil, nil, err
	}
	hb := map[string]bool{} // the site pairs hb reported, kinds left out
	seen := map[string]bool{}
	for _, r := range a.Results {
		for _, g := range r.Groups {
			s, ok := RacePair(a.Meta, g.Prev, g.Cur)
			if !ok {
				continue
			}
			switch {
			case r.Detector == "hb":
				hb[sitesOnly(s)] = true
			case !seen[s]:
				seen[s] = true
				pairs = append(pairs, s)
			}
		}
	}
	observed = map[string]bool{}
	for _, p := range pairs {
		if hb[sitesOnly(p)] {
			observed[p] = true
		}
	}
	return pairs, observed, nil
}

// RacePair is the statement pair of a race's two accesses, each
// file:line:col:r or :w (sched.ParseStmt), in order: RaceFuzzer then
// postpones goroutines at those two accesses alone, not at every access
// on their lines. false when a site is unknown.
func RacePair(m *trace.Meta, prev, cur finding.Access) (string, bool) {
	stmt := func(s trace.Site, write bool) sched.Stmt {
		st := sched.Stmt{File: s.File, Line: s.Line, Col: s.Col, Kind: sched.KindRead}
		if write {
			st.Kind = sched.KindWrite
		}
		return st
	}
	pa, pb := m.Site(prev.Site), m.Site(cur.Site)
	if pa.File == "" || pb.File == "" {
		return "", false
	}
	x, y := stmt(pa, prev.Write), stmt(pb, cur.Write)
	if y.String() < x.String() {
		x, y = y, x
	}
	return x.String() + "~" + y.String(), true
}

// phase1Detector makes the detectors tracePairs runs: racekit analyze's
// -algo=hybrid and -algo=hb.
func phase1Detector(name string, s finding.Sink) detect.Detector {
	if name == "hb" {
		return hb.New(s)
	}
	return lockset.NewHybrid(s)
}

// sitesOnly is a pair with its statements' kinds left out, in order: hb
// and hybrid may report one pair of sites with other accesses of theirs
// (the read or the write of x++).
func sitesOnly(pair string) string {
	a, b, _ := strings.Cut(pair, "~")
	x, _ := sched.ParseStmt(a)
	y, _ := sched.ParseStmt(b)
	x.Kind, y.Kind = sched.KindOther, sched.KindOther
	if y.String() < x.String() {
		x, y = y, x
	}
	return x.String() + "~" + y.String()
}
