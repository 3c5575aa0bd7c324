package main

import (
	"fmt"
	"os"

	"github.com/racekit/racekit/analyze"
	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/detect/deadlock"
	"github.com/racekit/racekit/report"
	"github.com/racekit/racekit/trace"
	"github.com/racekit/racekit/trace/tracefile"
)

var cmdDeadlocks = register(&command{
	name:      "deadlocks",
	usageLine: "deadlocks [-json] [-max-length N] TRACE",
	short:     "predict lock-order deadlocks from a recorded run (iGoodlock)",
	long: `
Deadlocks reads a trace (racekit run or racekit test -keep-trace DIR
records them) and reports the lock-order cycles that another interleaving
of the same run could deadlock on (iGoodlock: Joshi, Park, Sen and Naik,
PLDI'09): goroutines that each hold a lock and request one the next holds
(A then B in one goroutine, B then A in another; or a longer ring), with no
lock held in common by two of them (a guard lock), each request able to
wait for the next holder (a reader does not wait for a reader, a writer
waits for readers), and no two requests ordered by happens-before through
fork, join, channels, WaitGroups or atomics.

It also reports Go's RWMutex read-write-read: a goroutine that read-locks
a lock it already holds in read mode while another goroutine's Lock of it
is unordered with that second RLock. A pending Lock makes new RLocks
wait, so a Lock that comes between the two deadlocks both (sync.RWMutex
forbids recursive read locking for this reason).

Each cycle is printed like Go's race report: per goroutine, the lock it
requests with the request's stack, the locks it holds with where each was
taken, and where each goroutine was created. The run recorded did not
deadlock: the cycles are potential (data and control flow may keep a
reordering from happening).

-max-length bounds the number of goroutines in a cycle (default 4).

Exit status: 0 no cycle, 66 cycles found, 1 bad input, 2 usage.
`,
})

func init() { cmdDeadlocks.run = runDeadlocks }

var (
	deadlocksJSON   = cmdDeadlocks.flags.Bool("json", false, "print the cycles as JSON")
	deadlocksMaxLen = cmdDeadlocks.flags.Int("max-length", 4, "the most goroutines in a cycle")
)

func runDeadlocks(c *command, args []string) int {
	if len(args) != 1 {
		c.errorf("expected exactly one trace file, got %d arguments", len(args))
		return exitUsage
	}
	f, err := tracefile.Open(args[0])
	if err != nil {
		c.errorf("%v", err)
		return exitError
	}
	defer f.Close()
	st := analyze.NewStacks(f.Meta(), "")
	d := deadlock.New(deadlock.Options{
		MaxLength: *deadlocksMaxLen,
		Stack:     func(g trace.GID) []trace.Site { return st.Stack(f.Meta(), g) },
	})
	// stacks first: a request's stack ends at the request.
	_, err = detect.Run(f, st, d)
	printWarnings(c, f.Reader)
	if err != nil {
		c.errorf("%v", err)
		return exitError
	}
	cycles := d.Cycles()
	if *deadlocksJSON {
		err = report.DeadlocksJSON(os.Stdout, f.Meta(), cycles)
	} else {
		gids := map[trace.GID]bool{}
		for _, cy := range cycles {
			for _, dep := range cy.Deps {
				gids[dep.G] = true
			}
		}
		err = report.Deadlocks(os.Stdout, f.Meta(), cycles, st.CreationStacks(f.Meta(), gids))
		if err == nil && len(cycles) > 0 {
			fmt.Printf("Found %d potential deadlock(s)\n", len(cycles))
		}
	}
	if err != nil {
		c.errorf("%v", err)
		return exitError
	}
	if len(cycles) > 0 {
		return exitRaces
	}
	return exitOK
}
