package confirm

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// racekit fuzz -deadlocks's exploration: runs of each target under
// sched.DelayFuzzer (a random scheduler that stalls goroutines at a few
// points while sleepers wake), for the blocking bugs no lock-order cycle
// names: a WaitGroup or a channel waited on in the wrong order, a lost
// Cond wakeup, behind a branch the recorded runs did not take.

// ExploredDeadlock is a deadlock runs under DelayFuzzer made happen: the
// same blocked operations in each of them.
type ExploredDeadlock struct {
	Package string `json:"package"`
	// Blocked is the first run's blocked goroutines, each "G#N kind
	// site" (the operation it waits in).
	Blocked   []string `json:"blocked"`
	Runs      int      `json:"runs"`      // the package's exploration runs
	Deadlocks int      `json:"deadlocks"` // those that deadlocked so
	Seeds     []uint64 `json:"seeds"`
	Replay    string   `json:"replay"`
	// Replayed tells whether the first seed's run, made again, deadlocked
	// with the same blocked operations.
	Replayed bool    `json:"replayed"`
	Seconds  float64 `json:"seconds"`
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

// blockedKey names a deadlock by what its goroutines wait in, not by the
// goroutines' names or point indices: "kind site" of each, sorted.
func blockedKey(notes []string) string {
	var ops []string
	for _, n := range notes {
		if f := strings.SplitN(n, " ", 2); len(f) == 2 {
			ops = append(ops, f[1])
		} else {
			ops = append(ops, n)
		}
	}
	slices.Sort(ops)
	return strings.Join(ops, "; ")
}

// ExploreDeadlocks runs each target runs times under DelayFuzzer (seeds
// c.Seed, c.Seed+1, ...) and returns the deadlocks the runs made happen,
// one per set of blocked operations, each with its first seed made again
// to check that it replays.
func ExploreDeadlocks(c *Campaign, runs int) ([]ExploredDeadlock, error) {
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
	results := make([]Run, len(tasks))
	tally := newFuzzTally(prog, len(targets)).named("package", "deadlocked")
	err := inParallel(len(tasks), c.Jobs, func(i int) error {
		tk := tasks[i]
		t := targets[tk.t]
		if c.pastDeadline() {
			tally.done(tk.t, t.Pkg, runs, Run{})
			return nil // not run: Outcome "" (not counted)
		}
		path := filepath.Join(c.Tmp, fmt.Sprintf("explore%d-%d.sched", tk.t, tk.seed))
		r, err := controlledRun(t, c.TestArgs, delayFuzzEnv(tk.seed), path, c.Timeout, nil)
		os.Remove(path)
		r.Seed = tk.seed
		r.Created = r.Outcome == "deadlock" && len(r.Schedule.NotesOf("deadlock")) > 0
		if r.Created {
			r.Detail = blockedKey(r.Schedule.NotesOf("deadlock")) + "\x00" + strings.Join(r.Schedule.NotesOf("deadlock"), "\x00")
		}
		r.Schedule = nil
		results[i] = r
		tally.done(tk.t, t.Pkg, runs, r)
		return err
	})
	if err != nil {
		return nil, err
	}
	var out []ExploredDeadlock
	for ti, t := range targets {
		byKey := map[string]int{}
		var mine []int
		n, secs := 0, 0.0
		for i, tk := range tasks {
			r := results[i]
			if tk.t != ti || r.Outcome == "" {
				continue
			}
			n++
			secs += r.Elapsed.Seconds()
			if !r.Created {
				continue
			}
			f := strings.Split(r.Detail, "\x00")
			j, ok := byKey[f[0]]
			if !ok {
				j = len(out)
				byKey[f[0]] = j
				mine = append(mine, j)
				out = append(out, ExploredDeadlock{Package: t.Pkg, Blocked: f[1:],
					Replay: replayCommand(r.Seed, "-delays", "", t.Pkg, c.GoFlags)})
			}
			out[j].Deadlocks++
			out[j].Seeds = append(out[j].Seeds, r.Seed)
		}
		for _, j := range mine {
			out[j].Runs, out[j].Seconds = n, secs
			// The first seed again: a run of DelayFuzzer is its seed's.
			d := &out[j]
			path := filepath.Join(c.Tmp, fmt.Sprintf("explore%d-%d.replay.sched", ti, d.Seeds[0]))
			r, err := controlledRun(t, c.TestArgs, delayFuzzEnv(d.Seeds[0]), path, c.Timeout, nil)
			if err != nil {
				return nil, err
			}
			os.Remove(path)
			d.Replayed = r.Outcome == "deadlock" && blockedKey(r.Schedule.NotesOf("deadlock")) == blockedKey(d.Blocked)
		}
	}
	return out, nil
}

// PrintExplored prints the deadlocks ExploreDeadlocks made happen, as
// PrintDeadlocks prints the cycles: the blocked goroutines, the seeds and
// the replay command.
func PrintExplored(w io.Writer, ds []ExploredDeadlock, runs int) {
	for _, d := range ds {
		fmt.Fprintf(w, "==================\n")
		fmt.Fprintf(w, "DEADLOCK (confirmed: %d of %d runs deadlocked under random delays)\n", d.Deadlocks, d.Runs)
		fmt.Fprintf(w, "Package %s: every goroutine blocked (seed %d):\n", d.Package, d.Seeds[0])
		for _, b := range d.Blocked {
			fmt.Fprintf(w, "  %s\n", relNote(b))
		}
		replayed := "the first seed's run, made again, deadlocked the same way"
		if !d.Replayed {
			replayed = "the first seed's run, made again, did NOT deadlock the same way"
		}
		fmt.Fprintf(w, "Seeds: %s (%s)\nReplay: %s\n", seedList(d.Seeds), replayed, d.Replay)
	}
	fmt.Fprintf(w, "==================\nracekit fuzz: %d deadlock(s) made to happen in %d run(s) per package under random delays\n", len(ds), runs)
}
