package anomaly

import (
	"sort"

	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/trace"
)

// Step is one event of a clip: what a controlled scheduler needs to
// recognize it in a re-execution (goroutine, its own event index, op,
// object, site) and whether it is one of the anomaly's events.
type Step struct {
	G     string    `json:"g"`     // the goroutine's stable creation-order name (g0, g0.1, ...)
	GID   trace.GID `json:"gid"`   // its ID in the recorded trace
	Index int       `json:"index"` // 0-based position within the goroutine's own events
	Seq   uint64    `json:"seq"`   // the event's Seq in the recorded trace
	Op    string    `json:"op"`    // mnemonic of trace.Op (r, w, acq, rel, snd, rcv, fork, ...)
	Read  bool      `json:"rlock,omitempty"`
	Obj   uint64    `json:"obj"`
	Name  string    `json:"name,omitempty"` // the object's name in the trace, if any
	Site  string    `json:"site,omitempty"` // file:line:col
	Func  string    `json:"func,omitempty"`
	// Anomaly is the 1-based pattern step this event plays, 0 if none.
	Anomaly int `json:"anomaly,omitempty"`
}

// ClipGoroutine describes a goroutine that takes part in a clip.
type ClipGoroutine struct {
	Name     string    `json:"name"`
	GID      trace.GID `json:"gid"`
	Label    string    `json:"label"`            // its display name in the trace (G3, T1)
	Parent   string    `json:"parent,omitempty"` // stable name of the goroutine that forked it
	ForkSite string    `json:"fork_site,omitempty"`
}

// Clip is a "bug hatching clip" (§6): the ordered events of a schedule
// that exposes the anomaly, ending at its last event. Every goroutine runs
// a prefix of its recorded events in program order.
//
// Steps are in schedule order, and each goroutine's steps are in program
// order with Index its position among that goroutine's events in the
// whole trace. A full clip lists every event of the schedule. A compact
// clip (Compact true) omits the plain data accesses (r, w) and the
// function entries and exits (enter, exit) that are not anomaly events,
// except the accesses at the anomaly events' statements (file:line),
// which re-execution schedules: it keeps every other event of each
// goroutine's prefix (locks, messages, atomics, fork, join, begin, end,
// alloc, ...) and every anomaly event, so that a controlled scheduler can
// still follow it, running a goroutine's omitted events between two of
// its listed ones (the gaps in Index). The
// schedule of a long trace runs most of it, hence Options.Clips: by default
// a clip is full up to FullClipSteps events and compact beyond.
type Clip struct {
	// Feasible is true when the schedule passed the static check against
	// the trace's constraints (program order, locks, communication order,
	// anomaly order); false clips are only kept with Options.KeepInfeasible.
	Feasible   bool            `json:"feasible"`
	Compact    bool            `json:"compact,omitempty"` // data accesses and function entries/exits left out (see above)
	Goroutines []ClipGoroutine `json:"goroutines"`
	Steps      []Step          `json:"steps"`
	Anomaly    []int           `json:"anomaly"` // indices into Steps of the anomaly's events, in pattern order
	// Events is the length of the schedule: len(Steps) for a full clip,
	// more for a compact one.
	Events int `json:"events,omitempty"`
}

// ClipMode chooses between full and compact clips (see Clip).
type ClipMode uint8

const (
	ClipAuto    ClipMode = iota // full up to FullClipSteps scheduled events, compact beyond
	ClipFull                    // always full
	ClipCompact                 // always compact
)

// FullClipSteps is the longest schedule ClipAuto gives a full clip.
const FullClipSteps = 10_000

// compactable reports whether a compact clip may leave out an event with
// op o that is not an anomaly event.
func compactable(o trace.Op) bool {
	switch o {
	case trace.OpRead, trace.OpWrite, trace.OpFuncEnter, trace.OpFuncExit:
		return true
	}
	return false
}

// Anomaly is one predicted access anomaly: one distinct combination of
// pattern and source sites, with the first instance that got a clip.
type Anomaly struct {
	Pattern  string   `json:"pattern"`
	Kind     Kind     `json:"kind"`
	Doc      string   `json:"doc,omitempty"`
	Evidence string   `json:"evidence"` // "potential": predicted by the hybrid model, not yet re-executed
	Observed bool     `json:"observed"` // the recorded trace itself ran the events in pattern order
	Sites    []string `json:"sites"`    // per pattern step
	Vars     []string `json:"vars"`     // per pattern step
	Seqs     []uint64 `json:"seqs"`     // per pattern step: the events' Seq
	Clip     *Clip    `json:"clip"`

	siteIDs []trace.SiteID
	events  []int32
}

// SiteIDs returns the sites of the anomaly's events, in pattern order.
func (a *Anomaly) SiteIDs() []trace.SiteID { return a.siteIDs }

// Result is what Find found.
type Result struct {
	Anomalies []Anomaly
	Stats     map[string]int64
}

// Detector is the name under which race anomalies appear as findings.
const Detector = "pecan"

// Races returns the data-race anomalies as findings (potential evidence),
// Prev being the earlier event in the trace.
func (r *Result) Races(m *trace.Meta, tr *trace.Trace) []finding.Race {
	var out []finding.Race
	for i := range r.Anomalies {
		a := &r.Anomalies[i]
		if a.Kind != KindRace {
			continue
		}
		x, y := a.events[0], a.events[1]
		if x > y {
			x, y = y, x
		}
		ex, ey := &tr.Events[x], &tr.Events[y]
		out = append(out, finding.Race{Detector: Detector, Evidence: finding.Potential, Addr: ex.Obj,
			Prev: finding.Access{Seq: ex.Seq, G: ex.G, Site: ex.Site, Write: ex.IsWrite()},
			Cur:  finding.Access{Seq: ey.Seq, G: ey.G, Site: ey.Site, Write: ey.IsWrite()}})
	}
	return out
}

// Kinds selects patterns by family.
func Kinds(ps []*Pattern, kinds ...Kind) []*Pattern {
	var out []*Pattern
	for _, p := range ps {
		for _, k := range kinds {
			if p.Kind == k {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// Find searches tr for instances of the patterns (§5), generates a clip
// for each (§6) and returns one anomaly per distinct pattern and site
// combination (the paper's "unique in terms of the source code line
// numbers"). Patterns with the same structure as an earlier one are
// skipped. The data-race patterns are searched together and give one
// anomaly per unordered site pair, whose clip runs the pair in the order
// the trace did not show when that is feasible (Figure 1).
func Find(tr *trace.Trace, patterns []*Pattern, opt Options) *Result {
	m := NewModel(tr, opt)
	return m.Find(patterns, opt)
}

// Find is Find on a model already built.
func (m *Model) Find(patterns []*Pattern, opt Options) *Result {
	s := newSearcher(m, opt)
	seen := map[string]bool{}
	var races []*Pattern
	var rest []*Pattern
	for _, p := range patterns {
		st := p.structure()
		if seen[st] {
			s.stats["duplicate_patterns"]++
			continue
		}
		seen[st] = true
		if p.Kind == KindRace && p.Len() == 2 && p.Consecutive {
			races = append(races, p)
		} else {
			rest = append(rest, p)
		}
	}
	if len(races) > 0 {
		s.races(races)
	}
	for i, p := range rest {
		s.generic(i, p)
	}
	rank := map[Kind]int{KindRace: 0, KindAtomicity: 1, KindASV: 2, KindUser: 3}
	last := func(a *Anomaly) int32 {
		l := a.events[0]
		for _, e := range a.events {
			l = max(l, e)
		}
		return l
	}
	sort.SliceStable(s.out, func(i, j int) bool {
		a, b := &s.out[i], &s.out[j]
		if rank[a.Kind] != rank[b.Kind] {
			return rank[a.Kind] < rank[b.Kind]
		}
		return last(a) < last(b)
	})
	s.stats["anomalies"] = int64(len(s.out))
	s.stats["events"] = int64(len(m.Events))
	s.stats["regions"] = int64(m.Regions())
	s.stats["goroutines"] = int64(len(m.gs))
	return &Result{Anomalies: s.out, Stats: s.stats}
}

// clip turns a schedule into a Clip.
func (m *Model) clip(steps, P []int32, feasible bool, mode ClipMode) *Clip {
	compact := mode == ClipCompact || (mode == ClipAuto && len(steps) > FullClipSteps)
	role := func(e int32) int {
		for n, p := range P {
			if p == e {
				return n + 1
			}
		}
		return 0
	}
	in := make([]bool, len(m.gs))
	kept := steps
	if compact {
		omit := m.omittable()
		// Accesses at the anomaly's statements stay: re-execution makes
		// every access there a scheduling point (RACEKIT_PAIR names the
		// statements, file:line), so their order is part of the schedule
		// (another instance of a write between the anomaly's write and
		// read changes what the read reads).
		type line struct {
			file string
			line int
		}
		lines := map[line]bool{}
		for _, p := range P {
			s := m.Meta.Site(m.Events[p].Site)
			lines[line{s.File, s.Line}] = true
		}
		kept = make([]int32, 0, len(steps)/4)
		for _, e := range steps {
			in[m.g[e]] = true
			ev := &m.Events[e]
			if !omit[e] || role(e) > 0 {
				kept = append(kept, e)
			} else if ev.Op.IsAccess() {
				if s := m.Meta.Site(ev.Site); s.Line > 0 && lines[line{s.File, s.Line}] {
					kept = append(kept, e)
				}
			}
		}
	}
	c := &Clip{Feasible: feasible, Compact: compact, Steps: make([]Step, 0, len(kept)), Anomaly: make([]int, 0, len(P)), Events: len(steps)}
	for _, e := range kept {
		g := m.g[e]
		in[g] = true
		ev := &m.Events[e]
		site, fn := m.siteStrings(ev.Site)
		st := Step{G: m.gs[g].name, GID: ev.G, Index: int(m.pos[e]), Seq: ev.Seq, Op: ev.Op.String(),
			Read: ev.ReadLock(), Obj: ev.Obj, Name: m.Meta.NameOf(ev.Obj), Site: site, Func: fn, Anomaly: role(e)}
		if st.Anomaly > 0 {
			c.Anomaly = append(c.Anomaly, len(c.Steps))
		}
		c.Steps = append(c.Steps, st)
	}
	for g := range m.gs {
		if !in[g] {
			continue
		}
		gr := &m.gs[g]
		info := m.Meta.Goroutine(gr.gid)
		cg := ClipGoroutine{Name: gr.name, GID: gr.gid, Label: info.Label()}
		if gr.parent >= 0 {
			cg.Parent = m.gs[gr.parent].name
		}
		if info.Site != trace.NoSite {
			cg.ForkSite = m.Meta.Site(info.Site).String()
		}
		c.Goroutines = append(c.Goroutines, cg)
	}
	return c
}

// omittable returns, per event, whether a compact clip may leave it out
// when it is not an anomaly event (computed once per model).
func (m *Model) omittable() []bool {
	m.omitOnce.Do(func() {
		m.omit = make([]bool, len(m.Events))
		for i := range m.Events {
			m.omit[i] = compactable(m.Events[i].Op)
		}
	})
	return m.omit
}

// siteStrings returns a site's file:line:col ("" for NoSite) and
// function, computed once per model so that clips share the strings.
func (m *Model) siteStrings(id trace.SiteID) (string, string) {
	m.siteOnce.Do(func() {
		m.siteStr = make([][2]string, len(m.Meta.Sites))
		for i := range m.siteStr {
			site := m.Meta.Site(trace.SiteID(i))
			m.siteStr[i] = [2]string{site.String(), site.Func}
		}
		if len(m.siteStr) > 0 {
			m.siteStr[trace.NoSite][0] = ""
		}
	})
	if id == trace.NoSite {
		return "", m.Meta.Site(id).Func
	}
	if int(id) >= len(m.siteStr) {
		return "?", ""
	}
	v := &m.siteStr[id]
	return v[0], v[1]
}
