package sched

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Step is one decision of a recorded schedule: the goroutine that ran, at
// which of its scheduling points, doing what.
type Step struct {
	G    string
	N    int
	Kind Kind
	Site string
	Ev   int    // Point.Ev (-1 if the file does not say)
	Obj  uint64 // Point.Obj
}

// Same reports whether s and o are the same decision: equal in all but
// the object's address, which differs from run to run.
func (s Step) Same(o Step) bool {
	s.Obj, o.Obj = 0, 0
	return s == o
}

// DiffSteps returns "" when a and b are the same decisions (Same), else
// where they first differ.
func DiffSteps(a, b []Step) string {
	for i := 0; i < len(a) && i < len(b); i++ {
		if !a[i].Same(b[i]) {
			return fmt.Sprintf("step %d: %s#%d %s %s vs %s#%d %s %s", i, a[i].G, a[i].N, a[i].Kind, a[i].Site, b[i].G, b[i].N, b[i].Kind, b[i].Site)
		}
	}
	if len(a) != len(b) {
		return fmt.Sprintf("%d steps vs %d", len(a), len(b))
	}
	return ""
}

// DigestSteps returns a hash of the decisions: two schedules have the same
// digest when DiffSteps finds no difference (the objects' addresses are
// left out, as in Same). A digest lets a caller compare a run with one it
// did not keep in memory.
func DigestSteps(steps []Step) string {
	h := sha256.New()
	for _, s := range steps {
		fmt.Fprintf(h, "%s\t%d\t%s\t%s\t%d\n", s.G, s.N, s.Kind, s.Site, s.Ev)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// Schedule is a recorded schedule file.
type Schedule struct {
	Strategy string
	Seed     uint64
	Pair     string
	Steps    []Step
	Notes    []Note
}

// scheduleMagic is the first line of a schedule file.
const scheduleMagic = "racekit-schedule 1"

// FormatHeader returns the header lines of a schedule file.
func FormatHeader(strategy string, seed uint64, pair string) string {
	return fmt.Sprintf("%s\nstrategy %s\nseed %d\npair %s\n", scheduleMagic, strategy, seed, pair)
}

// FormatStep returns the line of one step (tab-separated, so that sites
// may hold spaces): goroutine, point index, kind, site, position (Ev), and
// object in hex.
func FormatStep(p Point) string {
	return "step\t" + p.G + "\t" + strconv.Itoa(p.N) + "\t" + p.Kind.String() + "\t" + p.Site +
		"\t" + strconv.Itoa(p.Ev) + "\t" + strconv.FormatUint(p.Obj, 16) + "\n"
}

// FormatNote returns the line of one note.
func FormatNote(n Note) string {
	return "note\t" + n.Kind + "\t" + strings.ReplaceAll(n.Text, "\n", " ") + "\n"
}

// ReadSchedule parses a schedule file. A last line cut short (a run that
// died while writing it) is ignored.
func ReadSchedule(r io.Reader, name string) (*Schedule, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if i := bytes.LastIndexByte(data, '\n'); i+1 < len(data) && i >= 0 {
		data = data[:i+1] // a last line cut short by a crash
	}
	s := &Schedule{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	line := 0
	for sc.Scan() {
		line++
		t := sc.Text()
		if line == 1 {
			if t != scheduleMagic {
				return nil, fmt.Errorf("%s:1: not a racekit schedule (want %q)", name, scheduleMagic)
			}
			continue
		}
		if t == "" {
			continue
		}
		switch {
		case strings.HasPrefix(t, "strategy "):
			s.Strategy = strings.TrimPrefix(t, "strategy ")
		case strings.HasPrefix(t, "seed "):
			n, err := strconv.ParseUint(strings.TrimPrefix(t, "seed "), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: bad seed: %v", name, line, err)
			}
			s.Seed = n
		case strings.HasPrefix(t, "pair "):
			s.Pair = strings.TrimPrefix(t, "pair ")
		case t == "pair":
		case strings.HasPrefix(t, "step\t"):
			f := strings.Split(t, "\t")
			if len(f) != 5 && len(f) != 7 {
				return nil, fmt.Errorf("%s:%d: step wants 4 or 6 fields, has %d", name, line, len(f)-1)
			}
			n, err := strconv.Atoi(f[2])
			k, ok := ParseKind(f[3])
			if err != nil || !ok {
				return nil, fmt.Errorf("%s:%d: bad step %q", name, line, t)
			}
			st := Step{G: f[1], N: n, Kind: k, Site: f[4], Ev: -1}
			if len(f) == 7 {
				ev, err1 := strconv.Atoi(f[5])
				obj, err2 := strconv.ParseUint(f[6], 16, 64)
				if err1 != nil || err2 != nil {
					return nil, fmt.Errorf("%s:%d: bad step %q", name, line, t)
				}
				st.Ev, st.Obj = ev, obj
			}
			s.Steps = append(s.Steps, st)
		case strings.HasPrefix(t, "note\t"):
			f := strings.SplitN(t, "\t", 3)
			if len(f) != 3 {
				return nil, fmt.Errorf("%s:%d: bad note %q", name, line, t)
			}
			s.Notes = append(s.Notes, Note{Kind: f[1], Text: f[2]})
		default:
			return nil, fmt.Errorf("%s:%d: unknown record %q", name, line, t)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if line == 0 {
		return nil, fmt.Errorf("%s: empty schedule file", name)
	}
	return s, nil
}

// NotesOf returns the schedule's notes of one kind.
func (s *Schedule) NotesOf(kind string) []string {
	var out []string
	for _, n := range s.Notes {
		if n.Kind == kind {
			out = append(out, n.Text)
		}
	}
	return out
}

// Replay follows a recorded schedule. At step i it runs the goroutine the
// schedule ran; if that goroutine is not waiting and enabled, or is about
// to do something else than was recorded, the run has diverged: Replay
// notes it once and continues as Random (seeded 0), so the run still ends.
type Replay struct {
	steps    []Step
	i        int
	diverged bool
	notes    []Note
	r        *rand.Rand
}

// NewReplay returns a strategy that follows steps.
func NewReplay(steps []Step) *Replay { return &Replay{steps: steps, r: NewRand(0)} }

// Diverged reports whether the run left the schedule.
func (s *Replay) Diverged() bool { return s.diverged }

// Want implements Wanter.
func (s *Replay) Want() string {
	if s.diverged || s.i >= len(s.steps) {
		return ""
	}
	return s.steps[s.i].G
}

// Notes implements Noter.
func (s *Replay) Notes() []Note {
	n := s.notes
	s.notes = nil
	return n
}

func (s *Replay) diverge(text string) {
	s.diverged = true
	s.notes = append(s.notes, Note{"divergence", fmt.Sprintf("step %d: %s", s.i, text)})
}

// Next implements Strategy. A step that runs an access of the pair while
// another goroutine waits at a racing one (racing: the pair's other
// statement, the same location, a write) is noted as a race, as
// RaceFuzzer notes the race it creates: following a schedule that brings
// the two accesses next to each other makes the race happen (§2.2: replay
// shows the race the seed's run created), and the run says so.
func (s *Replay) Next(w []Point) int {
	i := s.next(w)
	s.notes = append(s.notes, raceNotes(w, i)...)
	return i
}

// raceNotes returns a "race" note for each goroutine waiting in w at an
// access that races with w[i]'s, which runs first.
func raceNotes(w []Point, i int) []Note {
	if i < 0 || i >= len(w) || !w[i].Pair {
		return nil
	}
	var out []Note
	for j := range w {
		if j != i && w[j].Pair && racing(w[i], w[j]) {
			out = append(out, Note{"race", FormatRace(w[i], w[j])})
		}
	}
	return out
}

func (s *Replay) next(w []Point) int {
	if !s.diverged {
		if s.i >= len(s.steps) {
			s.diverge("the run goes on past the end of the schedule")
		} else {
			want := s.steps[s.i]
			for i, p := range w {
				if p.G != want.G {
					continue
				}
				if !p.Enabled {
					s.diverge(fmt.Sprintf("%s is waiting but cannot proceed (%s)", want.G, p))
					break
				}
				if p.N != want.N || p.Kind != want.Kind {
					s.diverge(fmt.Sprintf("%s is at %s, the schedule has %s#%d %s", want.G, p, want.G, want.N, want.Kind))
					break
				}
				s.i++
				return i
			}
			if !s.diverged {
				s.diverge(fmt.Sprintf("%s is not waiting at a scheduling point", want.G))
			}
		}
	}
	en := enabled(w)
	if len(en) == 0 {
		return 0
	}
	return en[s.r.IntN(len(en))]
}

// ClipStep is one step of a partial schedule: goroutine G runs up to and
// including its position Ev (Positions of the trace of the run the
// schedule was read from: a PECAN clip, a predicted race's witness).
// Kind (KindOther: any) and Site ("": any) check the last point G ran up
// to Ev, in whose segment the event ran: for an access at a statement
// under test, the access's own point.
type ClipStep struct {
	G    string
	Ev   int
	Kind Kind
	Site string
}

// Clip follows a partial schedule given as events of a recorded trace. It
// needs a traced run (Point.Ev). A run's scheduling points are not the
// recording's (a lock read and its acquire share one point; Resume points
// come and go with the interleaving), so the step (G, Ev) is matched
// against positions, not points: G is run while its next event is at most Ev (a point at Ev is
// the step's own), and the step is done once G waits at a point past Ev
// (or G ended: Ended). A step whose event is not a scheduling point (a
// plain access) is thus ordered only up to G's points around it, which is
// exact for everything a point orders: synchronization and the accesses
// at the statements under test.
//
// While steps remain, only the goroutine of the next step runs; the
// others, whether they have steps later or none left, are held. When that
// goroutine cannot run (it waits for a lock held by a goroutine outside
// the clip, say) a held goroutine runs, one without steps ahead first;
// when it is not at a scheduling point at all (the caller gave it time to
// arrive: Wanter) the clip cannot be followed: Clip notes a departure. A
// goroutine whose last point up to the step's event is not what the step
// says has departed too. After the last step, or the first departure,
// the choices are random (seeded): a run that left the clip has answered
// its question, and holding goroutines for steps it can no longer reach
// only slows it down (each hold waits for the scheduler's timeouts).
type Clip struct {
	steps    []ClipStep
	k        int
	departed bool
	r        *rand.Rand
	notes    []Note
	ended    map[string]bool
	last     map[string]Point // the last point each goroutine ran
}

// NewClip returns a strategy that follows steps, random (seeded with
// seed) elsewhere.
func NewClip(steps []ClipStep, seed uint64) *Clip {
	return &Clip{steps: steps, r: NewRand(seed), ended: map[string]bool{}, last: map[string]Point{}}
}

// Done reports whether every step was reached.
func (s *Clip) Done() bool { return s.k >= len(s.steps) && !s.departed }

// Want implements Wanter.
func (s *Clip) Want() string {
	s.skipEnded()
	if s.k < len(s.steps) {
		return s.steps[s.k].G
	}
	return ""
}

// Ended implements Ender: the steps of a goroutine that ended are done
// (its clip events are a prefix of its events, all run).
func (s *Clip) Ended(g string) { s.ended[g] = true }

func (s *Clip) skipEnded() {
	for s.k < len(s.steps) && s.ended[s.steps[s.k].G] {
		s.consume()
	}
}

// consume ends the current step. Its event ran in the segment of the last
// point its goroutine ran (G runs only points up to the step's position;
// several points may share a position: a read and a write of x++), so
// that point is checked against the step's kind and site.
func (s *Clip) consume() {
	st := s.steps[s.k]
	if st.Kind != KindOther || st.Site != "" {
		p, ok := s.last[st.G]
		switch {
		case !ok:
			s.depart("%s ran no point up to its position %d", st.G, st.Ev)
		case !s.fits(st, p):
			s.depart("%s ran %s for its position %d, the clip has %s %s", st.G, p, st.Ev, st.Kind, st.Site)
		}
	}
	if !s.departed {
		s.k++
	}
}

// Notes implements Noter.
func (s *Clip) Notes() []Note {
	n := s.notes
	s.notes = nil
	return n
}

// depart notes a departure and gives up the clip.
func (s *Clip) depart(format string, args ...any) {
	s.notes = append(s.notes, Note{"departure", fmt.Sprintf("clip step %d: ", s.k) + fmt.Sprintf(format, args...)})
	s.departed = true
	s.k = len(s.steps)
}

// ahead returns the index of g's next step at or after k, or -1.
func (s *Clip) ahead(g string) int {
	for j := s.k; j < len(s.steps); j++ {
		if s.steps[j].G == g {
			return j
		}
	}
	return -1
}

// Next implements Strategy.
func (s *Clip) Next(w []Point) int {
	for s.skipEnded(); s.k < len(s.steps); s.skipEnded() {
		st := s.steps[s.k]
		i := -1
		for j := range w {
			if w[j].G == st.G {
				i = j
			}
		}
		if i < 0 {
			if s.inSegment(st) {
				s.consume()
				continue
			}
			// Not born yet (its creator's fork is not in the clip), or
			// out of control: goroutines without steps ahead may run.
			if free := s.free(w); len(free) > 0 {
				return free[s.r.IntN(len(free))]
			}
			s.depart("%s is not at a scheduling point", st.G)
			continue
		}
		p := w[i]
		if p.Ev < 0 {
			s.depart("%s: the run records no trace, positions are unknown", st.G)
			break
		}
		if p.Ev > st.Ev {
			s.consume() // ran past it
			continue
		}
		if !p.Enabled {
			break
		}
		s.last[p.G] = p
		if p.Ev == st.Ev && s.fits(st, p) {
			// The step's event is the first its operation records, before
			// G can reach another point: done, even if G then blocks
			// (a receive that waits for a send later in the clip).
			s.consume()
		}
		return i
	}
	en := enabled(w)
	if len(en) == 0 {
		return 0
	}
	if s.k >= len(s.steps) {
		return en[s.r.IntN(len(en))]
	}
	// The next step's goroutine waits and cannot proceed: someone else
	// must run; without steps ahead first.
	free := s.free(w)
	if len(free) == 0 {
		s.depart("%s cannot proceed and every other goroutine has steps after it", s.steps[s.k].G)
		free = en
	}
	return free[s.r.IntN(len(free))]
}

// Parked implements Parker.
func (s *Clip) Parked(g string) bool {
	s.skipEnded()
	if s.k < len(s.steps) && s.steps[s.k].G == g && s.inSegment(s.steps[s.k]) {
		s.consume()
		return true
	}
	return false
}

// inSegment reports whether step st, whose goroutine is not at a point,
// can be taken as run in the segment of the last point it ran: the
// goroutine is inside that point's operation (parked in a channel
// operation, its own events recorded when it started: a send's snd) or
// out of control, and the step says nothing the point contradicts. Its
// next point is checked against its later steps as usual.
func (s *Clip) inSegment(st ClipStep) bool {
	p, ok := s.last[st.G]
	return ok && p.Ev <= st.Ev && s.fits(st, p)
}

// fits reports whether point p is what step st says (its kind and site,
// when given).
func (s *Clip) fits(st ClipStep, p Point) bool {
	return (st.Kind == KindOther || st.Kind == p.Kind) && (st.Site == "" || p.Site == "" || siteEq(st.Site, p.Site))
}

// free returns the enabled goroutines of w that have no steps ahead.
func (s *Clip) free(w []Point) []int {
	var out []int
	for i := range w {
		if w[i].Enabled && s.ahead(w[i].G) < 0 {
			out = append(out, i)
		}
	}
	return out
}

// Ender is implemented by strategies that want to know when a goroutine
// ends (or returns into untraced code for good).
type Ender interface {
	Ended(g string)
}

// SameSite compares two file:line sites, one possibly a path suffix of
// the other.
func SameSite(a, b string) bool { return siteEq(a, b) }

// siteEq compares two file:line sites, one possibly a path suffix of the
// other.
func siteEq(a, b string) bool {
	fa, la, oka := splitSite(a)
	fb, lb, okb := splitSite(b)
	if !oka || !okb {
		return a == b
	}
	return la == lb && (sameFile(fa, fb) || sameFile(fb, fa))
}
