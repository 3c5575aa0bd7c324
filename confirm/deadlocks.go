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
	"github.com/racekit/racekit/detect/deadlock"
	"github.com/racekit/racekit/sched"
	"github.com/racekit/racekit/trace"
)

// racekit fuzz -deadlocks: DeadlockFuzzer (Joshi, Park, Sen, Naik,
// PLDI'09) over the lock-order cycles iGoodlock predicts from recorded
// runs (detect/deadlock), with the controlled scheduler's seeds and replay.

// DeadlockCycle is one predicted cycle and what phase 2 made of it.
type DeadlockCycle struct {
	Cycle   string `json:"cycle"` // held>request per goroutine (sched.ParseCycle)
	Package string `json:"package"`
	// Verdict is "confirmed" (a run deadlocked with the cycle's
	// goroutines blocked at its requests) or "potential".
	Verdict   string   `json:"verdict"`
	Runs      int      `json:"runs"`
	Deadlocks int      `json:"deadlocks"`
	Seeds     []uint64 `json:"seeds"`             // the runs that deadlocked
	Blocked   []string `json:"blocked,omitempty"` // the first one's blocked operations
	// Other outcomes of the runs, by kind ("none", "test failure", ...).
	Outcomes map[string]int `json:"outcomes"`
	Replay   string         `json:"replay,omitempty"`
	Seconds  float64        `json:"seconds"`
}

type cycleJob struct {
	t     *Target
	cycle sched.Cycle
}

// FuzzDeadlocks is DeadlockFuzzer: phase 1 predicts the lock-order
// cycles of each recorded run (iGoodlock, detect/deadlock); phase 2 runs
// the cycle's target c.Runs times under a scheduler that pauses a
// goroutine about to take a lock at one of the cycle's requests while it
// holds the lock of that link, until the cycle's other goroutines reach
// theirs. A cycle is confirmed by a run that deadlocks with the cycle's
// goroutines blocked at its requests.
func FuzzDeadlocks(c *Campaign) ([]DeadlockCycle, error) {
	// Phase 1: iGoodlock's lock-order cycles over recorded runs.
	var jobs []cycleJob
	seen := map[string]bool{}
	prog := c.Progress
	err := c.forEachRecording(c.recordRun, func(t *Target, path string, i, records int) error {
		a, err := analyze.Trace(path, analyze.Options{Algos: []string{analyze.DeadlockAlgo}})
		if err != nil {
			return err
		}
		for _, cy := range a.Cycles {
			sc, ok := schedCycle(a.Meta, cy)
			if !ok || seen[t.Pkg+" "+sc.String()] {
				continue
			}
			seen[t.Pkg+" "+sc.String()] = true
			jobs = append(jobs, cycleJob{t, sc})
		}
		prog.Printf("phase 1: %s: recorded run %d/%d, %d lock-order cycles so far", t.Pkg, i+1, records, len(jobs))
		return nil
	})
	if err != nil {
		return nil, err
	}
	jobs = inShard(c.Shard, jobs, func(jb cycleJob) string { return shardKey(jb.t.Pkg, jb.cycle.String()) })

	// Phase 2: DeadlockFuzzer, c.Runs seeds per cycle.
	type task struct {
		j, k int
		seed uint64
	}
	var tasks []task
	results := make([][]Run, len(jobs))
	for j := range jobs {
		results[j] = make([]Run, c.Runs)
		for k := 0; k < c.Runs; k++ {
			tasks = append(tasks, task{j, k, c.Seed + uint64(k)})
		}
	}
	prog.Printf("phase 2: %d lock-order cycles, %d runs each, %d at a time", len(jobs), c.Runs, c.Jobs)
	tally := newFuzzTally(prog, len(jobs)).named("cycle", "deadlocked")
	err = inParallel(len(tasks), c.Jobs, func(i int) error {
		tk := tasks[i]
		jb := jobs[tk.j]
		if c.pastDeadline() {
			tally.done(tk.j, jb.cycle.String(), c.Runs, Run{})
			return nil // not run: Outcome "" (not counted)
		}
		path := filepath.Join(c.Tmp, fmt.Sprintf("cycle%d-%d.sched", tk.j, tk.seed))
		r, err := controlledRun(jb.t, c.TestArgs, deadlockFuzzEnv(tk.seed, jb.cycle), path, c.Timeout, nil)
		os.Remove(path)
		r.Seed = tk.seed
		r.Created = r.Outcome == "deadlock" && closes(jb.cycle, r.Schedule.NotesOf("deadlock"))
		r.Schedule = nil
		results[tk.j][tk.k] = r
		tally.done(tk.j, jb.cycle.String(), c.Runs, r)
		return err
	})
	if err != nil {
		return nil, err
	}
	var out []DeadlockCycle
	for j, jb := range jobs {
		dc := DeadlockCycle{Cycle: jb.cycle.String(), Package: jb.t.Pkg, Verdict: "potential", Outcomes: map[string]int{}}
		for _, r := range results[j] {
			if r.Outcome == "" {
				continue // past the deadline
			}
			dc.Runs++
			dc.Seconds += r.Elapsed.Seconds()
			if !r.Created {
				dc.Outcomes[r.Outcome]++
				continue
			}
			dc.Deadlocks++
			dc.Seeds = append(dc.Seeds, r.Seed)
			if dc.Blocked == nil {
				dc.Blocked = strings.Split(r.Detail, "; ")
				dc.Replay = replayCommand(r.Seed, "-cycle", dc.Cycle, jb.t.Pkg, c.GoFlags)
			}
		}
		if dc.Deadlocks > 0 {
			dc.Verdict = "confirmed"
		}
		out = append(out, dc)
	}
	return out, nil
}

// forEachRecording gives visit each trace phase 1 of FuzzDeadlocks or
// FuzzAtomicity works on: per target, c.Record runs of its tests and
// c.RecordRandom more under the random scheduler (record records the one
// of index k: negative for the Record ones, k >= 0 for the k-th random
// one), or c.Trace once, for the first target. It stops at the first
// error, naming the package.
func (c *Campaign) forEachRecording(record func(t *Target, path string, k int) error, visit func(t *Target, path string, i, records int) error) error {
	for _, t := range c.Targets {
		given := c.Traces[t.Pkg]
		records := len(given) + c.records()
		for i, path := range given {
			if err := visit(t, path, i, records); err != nil {
				return fmt.Errorf("%s: %v", t.Pkg, err)
			}
		}
		for i := len(given); i < records; i++ {
			if c.pastDeadline() {
				c.Progress.Printf("phase 1: %s: the time budget ran out after %d of %d recorded runs", t.Pkg, i, records)
				break
			}
			path := c.Trace
			if path == "" {
				path = filepath.Join(c.Tmp, fmt.Sprintf("%s.%d.rkt", filepath.Base(t.Bin), i))
				if err := record(t, path, i-len(given)-c.plain()); err != nil {
					return fmt.Errorf("%s: %v", t.Pkg, err)
				}
			}
			if err := visit(t, path, i, records); err != nil {
				return fmt.Errorf("%s: %v", t.Pkg, err)
			}
			if c.Trace != "" {
				return nil // one trace: on the first package
			}
		}
	}
	return nil
}

// deadlockFuzzEnv puts a run under DeadlockFuzzer for cycle. A deadlock
// is declared after 300ms with every goroutine at a point and none
// enabled (rt/sched.go "Deadlocks"; 5s by default, for programs whose
// goroutines come and go in untraced code).
func deadlockFuzzEnv(seed uint64, cycle sched.Cycle) []string {
	return []string{
		"RACEKIT_SCHED=deadlockfuzzer",
		"RACEKIT_SEED=" + strconv.FormatUint(seed, 10),
		"RACEKIT_CYCLE=" + cycle.String(),
		"RACEKIT_SCHED_DEADLOCK=300ms",
	}
}

// schedCycle turns a lock-order cycle of detect/deadlock into the links
// DeadlockFuzzer pauses at: for each goroutine, where it took the lock the
// previous one requests, and where it requests the next one's.
// RWMutex read-write-read findings are not lock-order cycles (false).
func schedCycle(m *trace.Meta, cy deadlock.Cycle) (sched.Cycle, bool) {
	if cy.Kind == deadlock.LockChannel {
		return lockChannelLinks(m, cy)
	}
	if cy.Kind != deadlock.LockOrder || len(cy.Deps) < 2 {
		return nil, false
	}
	var out sched.Cycle
	for i, d := range cy.Deps {
		prev := cy.Deps[(i+len(cy.Deps)-1)%len(cy.Deps)]
		var held trace.SiteID
		found := false
		for _, h := range d.Held {
			if h.Lock == prev.Lock {
				held, found = h.Site, true
			}
		}
		hs, rs := m.Site(held), m.Site(d.Site)
		if !found || hs.Line == 0 || rs.Line == 0 {
			return nil, false
		}
		out = append(out, sched.Link{
			Held:    sched.Stmt{File: hs.File, Line: hs.Line},
			Request: sched.Stmt{File: rs.File, Line: rs.Line},
		})
	}
	return out, true
}

// lockChannelLinks are DeadlockFuzzer's links for a lock held across a
// channel operation: the waiter, holding the lock taken at its acquire,
// pauses at its channel operation; the other goroutine, holding nothing
// the cycle needs, at its request of the lock.
func lockChannelLinks(m *trace.Meta, cy deadlock.Cycle) (sched.Cycle, bool) {
	w, r := cy.Deps[0], cy.Deps[1]
	var held trace.SiteID
	for _, h := range w.Held {
		if h.Lock == r.Lock {
			held = h.Site
		}
	}
	hs, ws, rs := m.Site(held), m.Site(w.Site), m.Site(r.Site)
	if held == 0 || hs.Line == 0 || ws.Line == 0 || rs.Line == 0 {
		return nil, false
	}
	return sched.Cycle{
		{Held: sched.Stmt{File: hs.File, Line: hs.Line}, Request: sched.Stmt{File: ws.File, Line: ws.Line}},
		{Request: sched.Stmt{File: rs.File, Line: rs.Line}},
	}, true
}

// closes reports whether a deadlocked run's blocked operations (rt's
// deadlock notes, "G#N lock file:line:col") include a lock request at
// each of the cycle's request statements: the predicted cycle, not
// another deadlock.
func closes(cycle sched.Cycle, notes []string) bool {
	for _, l := range cycle {
		found := false
		for _, n := range notes {
			f := strings.Fields(n)
			if len(f) < 3 || (f[1] != "lock" && f[1] != "rlock" && f[1] != "send" && f[1] != "recv") {
				continue
			}
			if st, ok := sched.ParseStmt(f[2]); ok && l.Request.Compatible(sched.Stmt{File: st.File, Line: st.Line}) {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// printDeadlockFuzz writes fuzz -deadlocks' result as text.
func PrintDeadlocks(w io.Writer, cycles []DeadlockCycle) {
	if len(cycles) == 0 {
		fmt.Fprintln(w, "racekit fuzz: no lock-order cycle predicted")
		return
	}
	n := 0
	for i, dc := range cycles {
		fmt.Fprintf(w, "==================\n")
		if dc.Verdict == "confirmed" {
			n++
			fmt.Fprintf(w, "DEADLOCK (confirmed: %d of %d runs deadlocked)\n", dc.Deadlocks, dc.Runs)
		} else {
			fmt.Fprintf(w, "POTENTIAL DEADLOCK %d (not made to happen in %d runs)\n", i+1, dc.Runs)
		}
		fmt.Fprintf(w, "Package %s, cycle (held > requested, per goroutine):\n", dc.Package)
		// A link with no held statement ("*") makes it a lock held
		// across a channel operation: the other link waits in that.
		lockChan := strings.Contains(dc.Cycle, ",*>")
		for _, l := range strings.Split(dc.Cycle, ",") {
			h, r, _ := strings.Cut(l, ">")
			switch {
			case h == "*":
				fmt.Fprintf(w, "  requests the lock at %s\n", relSite(r))
			case lockChan:
				fmt.Fprintf(w, "  holds the lock taken at %s, waits in the channel operation at %s\n", relSite(h), relSite(r))
			default:
				fmt.Fprintf(w, "  holds the lock taken at %s, requests the lock at %s\n", relSite(h), relSite(r))
			}
		}
		if len(dc.Blocked) > 0 {
			fmt.Fprintf(w, "Blocked (seed %d):\n", dc.Seeds[0])
			for _, b := range dc.Blocked {
				fmt.Fprintf(w, "  %s\n", relNote(b))
			}
			fmt.Fprintf(w, "Seeds: %s\nReplay: %s\n", seedList(dc.Seeds), dc.Replay)
		}
		if len(dc.Outcomes) > 0 {
			var o []string
			for k, v := range dc.Outcomes {
				o = append(o, fmt.Sprintf("%s %d", k, v))
			}
			slices.Sort(o)
			fmt.Fprintf(w, "Other runs: %s\n", strings.Join(o, ", "))
		}
	}
	fmt.Fprintf(w, "==================\nracekit fuzz: %d lock-order cycle(s), %d confirmed\n", len(cycles), n)
}

// relNote shortens the site of a point's text "G#N kind site" (relSite).
func relNote(p string) string {
	f := strings.SplitN(p, " ", 3)
	if len(f) < 3 {
		return p
	}
	return f[0] + " " + f[1] + " " + relSite(f[2])
}
