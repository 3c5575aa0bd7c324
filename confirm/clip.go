package confirm

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/racekit/racekit/detect/anomaly"
	"github.com/racekit/racekit/sched"
)

// raceClipBefore is how many scheduling steps before a race's first
// access its page shows: enough to see who got there how, few enough to
// read.
const raceClipBefore = 40

// RaceClip is the interleaving of a run that created a race, as a clip
// report.ClipHTML draws: the scheduling steps from raceClipBefore before
// the race's first access to its second, one lane per goroutine, the two
// accesses numbered 1 and 2. false when the schedule has no race note or
// its accesses are not among its steps.
func RaceClip(s *sched.Schedule, pair string) (*anomaly.Anomaly, bool) {
	notes := s.NotesOf("race")
	if len(notes) == 0 {
		return nil, false
	}
	first, second, ok := strings.Cut(notes[0], " | ")
	if !ok {
		return nil, false
	}
	at := func(p string) int {
		g, n, ok := pointOf(p)
		for i, st := range s.Steps {
			if ok && st.G == g && st.N == n {
				return i
			}
		}
		return -1
	}
	i, j := at(first), at(second)
	if i < 0 || j < 0 {
		return nil, false
	}
	if j < i {
		i, j = j, i
	}
	a, b, _ := strings.Cut(pair, "~")
	out := &anomaly.Anomaly{Pattern: "race", Kind: "race", Evidence: "confirmed",
		Doc:   "a run under RaceFuzzer's scheduler in which the two accesses ran back to back",
		Sites: []string{sched.LineSite(a), sched.LineSite(b)},
		Clip:  &anomaly.Clip{Feasible: true, Events: len(s.Steps)}}
	lanes := map[string]bool{}
	for k := max(0, i-raceClipBefore); k <= j; k++ {
		st := s.Steps[k]
		if !lanes[st.G] {
			lanes[st.G] = true
			out.Clip.Goroutines = append(out.Clip.Goroutines, anomaly.ClipGoroutine{Name: st.G, Label: st.G})
		}
		step := anomaly.Step{G: st.G, Index: st.N, Op: st.Kind.String(), Obj: st.Obj, Site: st.Site}
		switch k {
		case i:
			step.Anomaly = 1
		case j:
			step.Anomaly = 2
		}
		if step.Anomaly > 0 {
			out.Clip.Anomaly = append(out.Clip.Anomaly, len(out.Clip.Steps))
		}
		out.Clip.Steps = append(out.Clip.Steps, step)
	}
	return out, true
}

// DeadlockClip is the end of a run in which every goroutine blocked, as a
// clip report.ClipHTML draws: its last raceClipBefore scheduling steps,
// one lane per goroutine, then each goroutine's blocked operation (rt's
// deadlock notes), numbered 1, 2, ... false when the run did not
// deadlock.
func DeadlockClip(s *sched.Schedule) (*anomaly.Anomaly, bool) {
	notes := s.NotesOf("deadlock")
	if len(notes) == 0 {
		return nil, false
	}
	out := &anomaly.Anomaly{Pattern: "deadlock", Kind: "deadlock", Evidence: "confirmed",
		Doc:  "a run under random delays in which every goroutine blocked: its last steps, then what each goroutine waits in",
		Clip: &anomaly.Clip{Feasible: true, Events: len(s.Steps)}}
	lanes := map[string]bool{}
	lane := func(g string) {
		if !lanes[g] {
			lanes[g] = true
			out.Clip.Goroutines = append(out.Clip.Goroutines, anomaly.ClipGoroutine{Name: g, Label: g})
		}
	}
	for _, st := range s.Steps[max(0, len(s.Steps)-raceClipBefore):] {
		lane(st.G)
		out.Clip.Steps = append(out.Clip.Steps, anomaly.Step{G: st.G, Index: st.N, Op: st.Kind.String(), Obj: st.Obj, Site: st.Site})
	}
	for i, n := range notes {
		g, k, ok := pointOf(n)
		f := strings.Fields(n)
		if !ok || len(f) < 3 {
			continue
		}
		lane(g)
		out.Sites = append(out.Sites, sched.LineSite(f[2]))
		out.Clip.Anomaly = append(out.Clip.Anomaly, len(out.Clip.Steps))
		out.Clip.Steps = append(out.Clip.Steps, anomaly.Step{G: g, Index: k, Op: f[1] + " (blocked)", Site: f[2], Anomaly: i + 1})
	}
	return out, true
}

// pointOf parses a point's "G#N kind site" into G and N.
func pointOf(p string) (string, int, bool) {
	f := strings.Fields(p)
	if len(f) == 0 {
		return "", 0, false
	}
	g, n, ok := strings.Cut(f[0], "#")
	k, err := strconv.Atoi(n)
	return g, k, ok && err == nil
}

// KeptSchedule reads the schedule a campaign with RaceOptions.Keep kept of
// pair p's run with seed: the file phase 2 wrote as Keep/INDEX-SEED.sched.
func KeptSchedule(keep string, p FuzzPair, seed uint64) (*sched.Schedule, error) {
	path := filepath.Join(keep, fmt.Sprintf("%d-%d.sched", p.Index, seed))
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return sched.ReadSchedule(f, path)
}
