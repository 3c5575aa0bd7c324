package confirm

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/detect/anomaly"
	"github.com/racekit/racekit/detect/hb"
	"github.com/racekit/racekit/detect/predict"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/sched"
	"github.com/racekit/racekit/trace"
	"github.com/racekit/racekit/trace/tracefile"
)

// observedRaces returns the races the recorded run itself had: hb's
// reports on tr, as statement pairs (file:line, unordered) on a variable.
func observedRaces(tr *trace.Trace) map[string]bool {
	out := map[string]bool{}
	d := hb.New(finding.SinkFunc(func(r *finding.Race) {
		out[raceKey(lineOf(tr.M, r.Prev.Site), lineOf(tr.M, r.Cur.Site), r.Addr)] = true
	}))
	for i := range tr.Events {
		d.Handle(&tr.Events[i])
	}
	d.Finish()
	return out
}

// raceKey names a race by its two statements, in either order, and its
// variable's address in the recorded run.
func raceKey(a, b string, addr uint64) string {
	if b < a {
		a, b = b, a
	}
	return a + "~" + b + "@" + strconv.FormatUint(addr, 16)
}

// ReadTrace reads the whole trace file at path, giving warn the reader's
// warnings (a trace cut short, say).
func ReadTrace(path string, warn func(msg string)) (*trace.Trace, error) {
	f, err := tracefile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tr, err := trace.ReadAll(f)
	if w, ok := f.Reader.(trace.Warner); ok && warn != nil {
		for _, msg := range w.Warnings() {
			warn(msg)
		}
	}
	return tr, err
}

// traceShape counts a trace's goroutines and its shared variables (the
// addresses two goroutines or more read or write).
func traceShape(tr *trace.Trace) (goroutines, shared int) {
	gs := map[trace.GID]bool{}
	first := map[uint64]trace.GID{}
	sh := map[uint64]bool{}
	for i := range tr.Events {
		e := &tr.Events[i]
		gs[e.G] = true
		if e.Op != trace.OpRead && e.Op != trace.OpWrite {
			continue
		}
		if g, ok := first[e.Obj]; !ok {
			first[e.Obj] = e.G
		} else if g != e.G {
			sh[e.Obj] = true
		}
	}
	return len(gs), len(sh)
}

// accessKind is the scheduling point kind of an access event.
func accessKind(e *trace.Event) sched.Kind {
	if e.IsWrite() {
		return sched.KindWrite
	}
	return sched.KindRead
}

// lineOf is a site as file:line, the form RACEKIT_PAIR and points use.
func lineOf(m *trace.Meta, id trace.SiteID) string {
	s := m.Site(id)
	return s.File + ":" + strconv.Itoa(s.Line)
}

// indexer gives each event of a trace its goroutine's name and finds a
// goroutine's n-th event (the Index of anomaly and witness steps).
type indexer struct {
	names map[trace.GID]string
	byG   map[trace.GID][]int // each goroutine's events, as trace indices
}

func newIndexer(tr *trace.Trace) *indexer {
	x := &indexer{names: sched.Names(tr), byG: map[trace.GID][]int{}}
	for i := range tr.Events {
		g := tr.Events[i].G
		x.byG[g] = append(x.byG[g], i)
	}
	return x
}

// event returns goroutine g's n-th event.
func (x *indexer) event(tr *trace.Trace, g trace.GID, n int) *trace.Event {
	return &tr.Events[x.byG[g][n]]
}

// beforeOp returns where a step that ends at goroutine g's event n may
// stop in a run: n, or n-1 when n is the read of a lock or channel that
// its operation records first (rt's lockRead before an acquire, the read
// of the channel before a send), since one scheduling point precedes both
// and running the read runs the operation. Stopping before the read only
// delays an access to the synchronization object itself.
func (x *indexer) beforeOp(tr *trace.Trace, g trace.GID, n int) int {
	if n+1 >= len(x.byG[g]) {
		return n
	}
	e, next := x.event(tr, g, n), x.event(tr, g, n+1)
	if e.Op == trace.OpRead && e.Obj == next.Obj && e.Site == next.Site && next.Op.IsSync() {
		return n - 1
	}
	return n
}

// atRootBegin says whether position ev of goroutine g is the Begin of a
// goroutine born outside instrumented code (the program's main goroutine,
// a test function's): such a goroutine has no scheduling point there (rt
// makes one only where an instrumented go statement starts a goroutine),
// so a step that runs it up to its Begin, made of the events it records
// before its first point (allocations in package initializers, since
// 9a6ef2c), could never be followed: every clip of jobsys departed at
// step 0. Running a goroutine to its Begin orders nothing; the step is
// left out.
func (x *indexer) atRootBegin(tr *trace.Trace, g trace.GID, ev int) bool {
	if ev != 0 || len(x.byG[g]) == 0 || tr.M.Goroutine(g).Parent != trace.NoParent {
		return false
	}
	return x.event(tr, g, 0).Op == trace.OpBegin
}

// position returns the position (pos: sched.Positions) of goroutine g's
// n-th event, -1 before its first.
func (x *indexer) position(pos []int, g trace.GID, n int) int {
	if n < 0 {
		return -1
	}
	return pos[x.byG[g][n]]
}

// pair is the statements under test of a controlled run along cd's clip
// (RACEKIT_PAIR): the sites of its anomaly events and cd.extra, at least
// two.
func (cd *hatchCand) pair() sched.SitePair {
	var sites sched.SitePair
	seen := map[string]bool{}
	for _, e := range cd.events {
		if !seen[e.Site] {
			seen[e.Site] = true
			sites = append(sites, e.Site)
		}
	}
	for _, site := range cd.extra {
		if !seen[site] {
			seen[site] = true
			sites = append(sites, site)
		}
	}
	if len(sites) == 1 {
		sites = append(sites, sites[0]) // RACEKIT_PAIR wants two
	}
	return sites
}

// appendStep appends a step unless it comes before its goroutine's first
// position (nothing to run).
func (cd *hatchCand) appendStep(st sched.ClipStep) {
	if st.Ev >= 0 {
		cd.steps = append(cd.steps, st)
	}
}

// anomalyCands turns PECAN's anomalies with feasible clips into
// candidates: each clip step is a position the goroutine runs up to, the
// anomaly's events are scheduling points (RACEKIT_PAIR: their sites).
// A full clip (every event of its schedule, plain accesses included) also
// gets a wide candidate whose statements under test are all the clip's
// access sites: PECAN's hatching controls every event of the clip, so
// that each read sees the value the schedule gives it and the program
// branches as the clip did; controlling only the anomaly's accesses lets
// the other plain accesses run whenever their goroutine does, and a loop
// or branch on shared data may then leave the clip.
func anomalyCands(tr *trace.Trace, res *anomaly.Result) []*hatchCand {
	x := newIndexer(tr)
	var out []*hatchCand
	for i := range res.Anomalies {
		a := &res.Anomalies[i]
		if a.Clip == nil || !a.Clip.Feasible {
			continue
		}
		cd := clipCand(tr, x, a, nil)
		if !a.Clip.Compact {
			var sites []string
			for _, st := range a.Clip.Steps {
				if e := x.event(tr, st.GID, st.Index); e.Op.IsAccess() {
					sites = append(sites, lineOf(tr.M, e.Site))
				}
			}
			if w := clipCand(tr, x, a, sites); len(w.pair()) > len(cd.pair()) {
				cd.wide = w
			}
		}
		out = append(out, cd)
	}
	return out
}

// clipCand is the candidate of anomaly a with extra statements under test.
func clipCand(tr *trace.Trace, x *indexer, a *anomaly.Anomaly, extra []string) *hatchCand {
	cd := &hatchCand{Kind: string(a.Kind), Pattern: a.Pattern, Sites: a.Sites, Vars: a.Vars, anomaly: a,
		consecutive: a.Kind == anomaly.KindRace, extra: extra}
	for _, st := range a.Clip.Steps {
		if st.Anomaly > 0 {
			e := x.event(tr, st.GID, st.Index)
			cd.events = append(cd.events, hatchEvent{G: x.names[st.GID], Ev: st.Index, Kind: accessKind(e), Site: lineOf(tr.M, e.Site), Obj: e.Obj})
		}
	}
	pos := sched.Positions(tr, cd.pair())
	inOp := opHeads(tr, x, a.Clip.Steps)
	k := 0
	for _, st := range a.Clip.Steps {
		if inOp[gpos{st.GID, st.Index}] {
			continue
		}
		cs := sched.ClipStep{G: x.names[st.GID]}
		if st.Anomaly == 0 {
			cs.Ev = x.position(pos, st.GID, x.beforeOp(tr, st.GID, st.Index))
			if x.atRootBegin(tr, st.GID, cs.Ev) {
				continue
			}
		} else {
			e := &cd.events[k]
			k++
			e.Ev = x.position(pos, st.GID, st.Index)
			cs.Ev, cs.Kind, cs.Site = e.Ev, e.Kind, e.Site
		}
		cd.appendStep(cs)
	}
	cd.steps = compactSteps(cd.steps)
	return cd
}

type gpos struct {
	g trace.GID
	n int
}

// opHeads returns the steps to leave out of a clip: the events that come
// before an anomaly event within the same operation (an atomic operation
// records an acquire of the word's lock and the atomic event before its
// data access, all at one site). One scheduling point precedes the whole
// operation, so a clip that runs another goroutine between them cannot be
// followed; the anomaly event's own step orders the operation.
func opHeads(tr *trace.Trace, x *indexer, steps []anomaly.Step) map[gpos]bool {
	out := map[gpos]bool{}
	for _, st := range steps {
		if st.Anomaly == 0 {
			continue
		}
		e := x.event(tr, st.GID, st.Index)
		for n := st.Index - 1; n >= 0; n-- {
			p := x.event(tr, st.GID, n)
			if p.Site != e.Site || p.Op == trace.OpRead || p.Op == trace.OpWrite {
				break
			}
			out[gpos{st.GID, n}] = true
		}
	}
	return out
}

// witnessCands runs a predictive detector (rdit or mcm) and turns the
// witness of each distinct site pair into a candidate: the trace's first
// ObservedPrefix events, then the reordered steps, the last two being the
// racing accesses.
func witnessCands(tr *trace.Trace, algo string) ([]*hatchCand, error) {
	col := finding.NewCollector()
	var d *predict.Detector
	if algo == "mcm" {
		d = predict.NewMCM(col, predict.Options{})
	} else {
		d = predict.NewRDIT(col, predict.Options{})
	}
	if _, err := detect.Run(tr.Iter(), d); err != nil {
		return nil, err
	}
	x := newIndexer(tr)
	seen := map[string]bool{}
	var out []*hatchCand
	for _, w := range d.Witnesses() {
		n := len(w.Steps)
		if n < 2 {
			continue
		}
		a, b := w.Steps[n-2], w.Steps[n-1]
		sa, sb := lineOf(tr.M, a.Site), lineOf(tr.M, b.Site)
		key := sa + "~" + sb
		if sb < sa {
			key = sb + "~" + sa
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		cd := &hatchCand{Kind: "race", Pattern: algo, Sites: []string{sa, sb}, consecutive: true}
		for _, st := range w.Steps[n-2:] {
			e := x.event(tr, st.G, st.Index)
			cd.events = append(cd.events, hatchEvent{G: x.names[st.G], Kind: accessKind(e), Site: lineOf(tr.M, e.Site), Obj: e.Obj})
		}
		pos := sched.Positions(tr, cd.pair())
		for i := 0; i < w.ObservedPrefix && i < len(tr.Events); i++ {
			cd.appendStep(sched.ClipStep{G: x.names[tr.Events[i].G], Ev: pos[i]})
		}
		for k, st := range w.Steps {
			cs := sched.ClipStep{G: x.names[st.G]}
			if k < n-2 {
				cs.Ev = x.position(pos, st.G, x.beforeOp(tr, st.G, st.Index))
				if x.atRootBegin(tr, st.G, cs.Ev) {
					continue
				}
			} else {
				e := &cd.events[k-(n-2)]
				e.Ev = x.position(pos, st.G, st.Index)
				cs.Ev, cs.Kind, cs.Site = e.Ev, e.Kind, e.Site
			}
			cd.appendStep(cs)
		}
		cd.steps = compactSteps(cd.steps)
		out = append(out, cd)
	}
	return out, nil
}

// compactSteps drops a step followed at once by a later step of the same
// goroutine without a check of its own: running up to the later one runs
// it too.
func compactSteps(s []sched.ClipStep) []sched.ClipStep {
	var out []sched.ClipStep
	for i, st := range s {
		if i+1 < len(s) && s[i+1].G == st.G && st.Kind == sched.KindOther && st.Site == "" {
			continue
		}
		out = append(out, st)
	}
	return out
}

// writeClip writes steps as a RACEKIT_SCHEDULE_IN clip file.
func writeClip(path string, steps []sched.ClipStep) error {
	var b strings.Builder
	b.WriteString("# racekit clip: goroutine, position, [kind, file:line]\n")
	for _, st := range steps {
		fmt.Fprintf(&b, "%s %d", st.G, st.Ev)
		if st.Kind != sched.KindOther || st.Site != "" {
			fmt.Fprintf(&b, " %s %s", st.Kind, st.Site)
		}
		b.WriteByte('\n')
	}
	return os.WriteFile(path, []byte(b.String()), 0o666)
}
