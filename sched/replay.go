package sched

import (
	"bufio"
	"bytes"
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
// may hold spaces).
func FormatStep(p Point) string {
	return "step\t" + p.G + "\t" + strconv.Itoa(p.N) + "\t" + p.Kind.String() + "\t" + p.Site + "\n"
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
			if len(f) != 5 {
				return nil, fmt.Errorf("%s:%d: step wants 4 fields, has %d", name, line, len(f)-1)
			}
			n, err := strconv.Atoi(f[2])
			k, ok := ParseKind(f[3])
			if err != nil || !ok {
				return nil, fmt.Errorf("%s:%d: bad step %q", name, line, t)
			}
			s.Steps = append(s.Steps, Step{G: f[1], N: n, Kind: k, Site: f[4]})
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

// Next implements Strategy.
func (s *Replay) Next(w []Point) int {
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

// ClipStep is one step of a partial schedule: goroutine G's N-th
// scheduling point (from 0), optionally checked to be of Kind (KindOther:
// any) at Site ("": any).
//
// Points count a goroutine's scheduling points, not all of its trace
// events: to translate a recorded clip, count only the goroutine's events
// that are scheduling points (its Begin, synchronization operations, and
// accesses at the sites the run is told to stop at).
type ClipStep struct {
	G    string
	N    int
	Kind Kind
	Site string
}

// Clip follows a partial schedule: the steps run in their order, each
// goroutine that has a step ahead is held at it until its turn, and the
// other decisions are random. A goroutine found at a step doing something
// else than the step says, or past it, has departed from the clip: Clip
// notes it and goes on.
type Clip struct {
	steps []ClipStep
	k     int
	r     *rand.Rand
	notes []Note
}

// NewClip returns a strategy that follows steps, random (seeded with
// seed) elsewhere.
func NewClip(steps []ClipStep, seed uint64) *Clip {
	return &Clip{steps: steps, r: NewRand(seed)}
}

// Done reports whether every step was reached.
func (s *Clip) Done() bool { return s.k >= len(s.steps) }

// Want implements Wanter.
func (s *Clip) Want() string {
	if s.k < len(s.steps) {
		return s.steps[s.k].G
	}
	return ""
}

// Notes implements Noter.
func (s *Clip) Notes() []Note {
	n := s.notes
	s.notes = nil
	return n
}

// nextOf returns the index of g's first step at or after k, or -1.
func (s *Clip) nextOf(g string) int {
	for j := s.k; j < len(s.steps); j++ {
		if s.steps[j].G == g {
			return j
		}
	}
	return -1
}

// Next implements Strategy.
func (s *Clip) Next(w []Point) int {
	for s.k < len(s.steps) {
		st := s.steps[s.k]
		i := -1
		for j := range w {
			if w[j].G == st.G {
				i = j
			}
		}
		if i < 0 || !w[i].Enabled {
			break
		}
		p := w[i]
		if p.N < st.N {
			return i // on its way to the step
		}
		if p.N > st.N {
			s.notes = append(s.notes, Note{"departure", fmt.Sprintf("clip step %d: %s passed %s#%d", s.k, p, st.G, st.N)})
			s.k++
			continue
		}
		if (st.Kind != KindOther && st.Kind != p.Kind) || (st.Site != "" && p.Site != "" && !siteEq(st.Site, p.Site)) {
			s.notes = append(s.notes, Note{"departure", fmt.Sprintf("clip step %d: %s is at %s, the clip has %s %s", s.k, st.G, p, st.Kind, st.Site)})
		}
		s.k++
		return i
	}
	// Free: any enabled goroutine not held at a step of its own ahead.
	var free, en []int
	for _, i := range enabled(w) {
		en = append(en, i)
		if j := s.nextOf(w[i].G); j < 0 || w[i].N < s.steps[j].N {
			free = append(free, i)
		}
	}
	if len(free) == 0 {
		if len(en) == 0 {
			return 0
		}
		if s.k < len(s.steps) {
			s.notes = append(s.notes, Note{"departure", fmt.Sprintf("clip step %d: %s cannot proceed and every other goroutine is held", s.k, s.steps[s.k].G)})
			s.k++
		}
		free = en
	}
	return free[s.r.IntN(len(free))]
}

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
