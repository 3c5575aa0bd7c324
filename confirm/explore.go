package confirm

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/racekit/racekit/analyze"
	"github.com/racekit/racekit/detect/anomaly"
	"github.com/racekit/racekit/detect/leak"
)

// racekit fuzz -deadlocks's exploration: runs of each target under
// sched.DelayFuzzer (a random scheduler that stalls goroutines at a few
// points while sleepers wake), for the blocking bugs no lock-order cycle
// names: a WaitGroup or a channel waited on in the wrong order, a lost
// Cond wakeup, behind a branch the recorded runs did not take.

// ExploredBlocking is a deadlock runs under DelayFuzzer made happen, or
// goroutines they left blocked when they ended (a leak): the same blocked
// operations in each of them.
type ExploredBlocking struct {
	Package string `json:"package"`
	Kind    string `json:"kind"` // "deadlock" or "leak"
	// Blocked is the first run's blocked goroutines: for a deadlock each
	// "G#N kind site" (the operation it waits in, rt's note), for a leak
	// "kind site" (detect/leak's kind: "chan send", "sync.WaitGroup.Wait").
	Blocked []string `json:"blocked"`
	Runs    int      `json:"runs"` // the package's exploration runs
	Made    int      `json:"made"` // those that deadlocked (or leaked) so
	Seeds   []uint64 `json:"seeds"`
	Replay  string   `json:"replay"`
	// Replayed tells whether the first seed's run, made again, deadlocked
	// with the same blocked operations.
	Replayed bool    `json:"replayed"`
	Seconds  float64 `json:"seconds"`
	// Clip is a deadlock's first run drawn as report.ClipHTML draws a
	// clip: its last steps and each goroutine's blocked operation.
	Clip *anomaly.Anomaly `json:"-"`
}

// delayFuzzEnv puts a run under DelayFuzzer with seed. A deadlock is
// declared after 1s with no goroutine able to proceed: longer than
// DeadlockFuzzer's 300ms (deadlockFuzzEnv), because exploration runs every
// package, not only those with a predicted cycle, and a goroutine waiting
// for untraced code (I/O) must get its answer first.
func delayFuzzEnv(seed uint64) []string {
	return []string{
		"RACEKIT_SCHED=delayfuzzer",
		"RACEKIT_SEED=" + strconv.FormatUint(seed, 10),
		"RACEKIT_SCHED_DEADLOCK=1s",
	}
}

// blockedKey names a deadlock or a leak by what its goroutines wait in,
// not by the goroutines' names or point indices: each "kind site" (a
// deadlock note's "G#N" dropped), sorted.
func blockedKey(blocked []string) string {
	var ops []string
	for _, b := range blocked {
		if g, rest, ok := strings.Cut(b, " "); ok && strings.Contains(g, "#") {
			b = rest
		}
		ops = append(ops, b)
	}
	slices.Sort(ops)
	return strings.Join(ops, "; ")
}

// exploreRun is one run of t under DelayFuzzer with seed, its trace
// written to trace (and removed): a deadlock (every goroutine blocked:
// rt's notes), or else the goroutines it left blocked when it ended
// (detect/leak on the trace: a leak this schedule made), each "G#N kind
// site" or "kind site"; kind "" when neither.
func (c *Campaign) exploreRun(t *Target, seed uint64, name string) (r Run, kind string, blocked []string, err error) {
	sch, tr := filepath.Join(c.Tmp, name+".sched"), filepath.Join(c.Tmp, name+".rkt")
	defer os.Remove(sch)
	defer os.Remove(tr)
	r, err = controlledRun(t, c.TestArgs, append(delayFuzzEnv(seed), "RACEKIT_TRACE="+tr), sch, c.Timeout, nil)
	r.Seed = seed
	if err != nil {
		return r, "", nil, err
	}
	if notes := r.Schedule.NotesOf("deadlock"); r.Outcome == "deadlock" && len(notes) > 0 {
		return r, "deadlock", notes, nil
	}
	if r.Outcome != "none" && r.Outcome != "test failure" {
		// A panic, an exit, a timeout: the run stopped with goroutines
		// at points they could go on from; leaks are the goroutines a run
		// that ended left blocked.
		return r, "", nil, nil
	}
	if blocked = traceLeaks(tr, c.LeaksIgnore); len(blocked) == 0 {
		return r, "", nil, nil
	}
	return r, "leak", blocked, nil
}

// traceLeaks is the goroutines the run traced to path left blocked when
// it ended (detect/leak, less those blocked in ignore's functions), each
// "kind site"; none when the trace cannot be read (a crash).
func traceLeaks(path string, ignore []string) []string {
	a, err := analyze.Trace(path, analyze.Options{Algos: []string{analyze.LeakAlgo}})
	if err != nil {
		return nil
	}
	var blocked []string
	for _, l := range leak.Without(a.Leaks, a.Meta, ignore) {
		blocked = append(blocked, l.Kind()+" "+a.Meta.Site(l.Ops[0].Site).String())
	}
	return blocked
}

// leakText is a leak's "kind site" as printed: "kind at site", the site
// relative to the working directory.
func leakText(b string) string {
	i := strings.LastIndexByte(b, ' ')
	return b[:max(i, 0)] + " at " + relSite(b[i+1:])
}

// ExploreBlocking runs each target runs times under DelayFuzzer (seeds
// c.Seed, c.Seed+1, ...) and returns the deadlocks the runs made happen,
// and the goroutines they left blocked when they ended (leaks, as racekit
// test --leaks reports them), one per kind and set of blocked operations,
// each with its first seed made again to check that it replays.
func ExploreBlocking(c *Campaign, runs int) ([]ExploredBlocking, error) {
	targets := inShard(c.Shard, slices.Clone(c.Targets), func(t *Target) string { return shardKey(t.Pkg, "explore") })
	if runs <= 0 || len(targets) == 0 {
		return nil, nil
	}
	type task struct {
		t    int
		seed uint64
	}
	var tasks []task
	for i := range targets {
		for k := 0; k < runs; k++ {
			tasks = append(tasks, task{i, c.Seed + uint64(k)})
		}
	}
	prog := c.Progress
	prog.Printf("exploration: %d package(s), %d runs each under random delays, %d at a time", len(targets), runs, c.Jobs)
	type result struct {
		r       Run
		kind    string
		blocked []string
		clip    *anomaly.Anomaly
	}
	results := make([]result, len(tasks))
	tally := newFuzzTally(prog, len(targets)).named("package", "deadlocked or leaked")
	err := inParallel(len(tasks), c.Jobs, func(i int) error {
		tk := tasks[i]
		t := targets[tk.t]
		if c.pastDeadline() {
			tally.done(tk.t, t.Pkg, runs, Run{})
			return nil // not run: Outcome "" (not counted)
		}
		r, kind, blocked, err := c.exploreRun(t, tk.seed, fmt.Sprintf("explore%d-%d", tk.t, tk.seed))
		r.Created = kind != ""
		var clip *anomaly.Anomaly
		if kind == "deadlock" {
			clip, _ = DeadlockClip(r.Schedule)
		}
		r.Schedule = nil
		results[i] = result{r, kind, blocked, clip}
		tally.done(tk.t, t.Pkg, runs, r)
		return err
	})
	if err != nil {
		return nil, err
	}
	var out []ExploredBlocking
	for ti, t := range targets {
		byKey := map[string]int{}
		var mine []int
		n, secs := 0, 0.0
		for i, tk := range tasks {
			res := results[i]
			if tk.t != ti || res.r.Outcome == "" {
				continue
			}
			n++
			secs += res.r.Elapsed.Seconds()
			if res.kind == "" {
				continue
			}
			key := res.kind + ": " + blockedKey(res.blocked)
			j, ok := byKey[key]
			if !ok {
				j = len(out)
				byKey[key] = j
				mine = append(mine, j)
				out = append(out, ExploredBlocking{Package: t.Pkg, Kind: res.kind, Blocked: res.blocked, Clip: res.clip,
					Replay: replayCommand(res.r.Seed, "-delays", "", t.Pkg, c.GoFlags)})
			}
			out[j].Made++
			out[j].Seeds = append(out[j].Seeds, res.r.Seed)
		}
		for _, j := range mine {
			// The first seed again: a run of DelayFuzzer is its seed's.
			d := &out[j]
			d.Runs, d.Seconds = n, secs
			_, kind, blocked, err := c.exploreRun(t, d.Seeds[0], fmt.Sprintf("explore%d-%d.replay", ti, d.Seeds[0]))
			if err != nil {
				return nil, err
			}
			d.Replayed = kind == d.Kind && blockedKey(blocked) == blockedKey(d.Blocked)
		}
	}
	return out, nil
}

// PrintExplored prints the deadlocks and leaks ExploreBlocking made
// happen, as PrintDeadlocks prints the cycles: the blocked goroutines,
// the seeds and the replay command.
func PrintExplored(w io.Writer, ds []ExploredBlocking, runs int) {
	var deadlocks, leaks int
	for _, d := range ds {
		fmt.Fprintf(w, "==================\n")
		what := "deadlocked"
		if d.Kind == "leak" {
			leaks++
			what = "left goroutines blocked"
			fmt.Fprintf(w, "GOROUTINE LEAK (confirmed: %d of %d runs left these goroutines blocked when they ended, under random delays)\n", d.Made, d.Runs)
			fmt.Fprintf(w, "Package %s (seed %d):\n", d.Package, d.Seeds[0])
			for _, b := range d.Blocked {
				fmt.Fprintf(w, "  blocked in %s\n", leakText(b))
			}
		} else {
			deadlocks++
			fmt.Fprintf(w, "DEADLOCK (confirmed: %d of %d runs deadlocked under random delays)\n", d.Made, d.Runs)
			fmt.Fprintf(w, "Package %s: every goroutine blocked (seed %d):\n", d.Package, d.Seeds[0])
			for _, b := range d.Blocked {
				fmt.Fprintf(w, "  %s\n", relNote(b))
			}
		}
		replayed := "the first seed's run, made again, " + what + " the same way"
		if !d.Replayed {
			replayed = "the first seed's run, made again, did NOT do the same"
		}
		fmt.Fprintf(w, "Seeds: %s (%s)\nReplay: %s\n", seedList(d.Seeds), replayed, d.Replay)
	}
	fmt.Fprintf(w, "==================\nracekit fuzz: %d deadlock(s) and %d leak(s) made to happen in %d run(s) per package under random delays\n", deadlocks, leaks, runs)
}
