package main

import (
	"fmt"
	"os"

	"github.com/racekit/racekit/analyze"
	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/detect/leak"
	"github.com/racekit/racekit/report"
	"github.com/racekit/racekit/trace"
	"github.com/racekit/racekit/trace/tracefile"
)

var cmdLeaks = register(&command{
	name:      "leaks",
	usageLine: "leaks [-json] [-ignore F,...] TRACE",
	short:     "report goroutines a recorded run left blocked on channel, lock, WaitGroup or Cond operations",
	long: `
Leaks reads a trace recorded with full detection (racekit run or test
-keep-trace; a sampled run's channel events carry no message, and then
nothing is reported) and reports each goroutine that the run left blocked
forever on a channel send, receive or select: it did not end, its last
events begin channel operations none of which completed, and nothing
later in the trace (a close, an operation of the other direction, a
message in or room in the buffer) could have completed them. Each is
printed like a goroutine of Go's race report: the blocked operation and
its stack, then where the goroutine was created. It also reports each
goroutine the runtime found blocked in a Lock, RLock, WaitGroup.Wait or
Cond.Wait as it finished the trace (rt notes what a goroutine blocks on
before such an operation blocks). What goleak reports at a test's end,
here at the end of the run (a goroutine blocked at one test's end and
woken by a later test is not reported). Only goroutines the program
started count (-ignore drops those blocked with a given function on
their stack, as goleak's IgnoreAnyFunction), and only in a run that finished (a trace with its end
block): a crashed run's goroutines stopped wherever they were.

Exit status: 0 no leak, 66 leaks found, 1 bad input, 2 usage.
`,
})

func init() { cmdLeaks.run = runLeaks }

var (
	leaksJSON   = cmdLeaks.flags.Bool("json", false, "print the leaks as JSON")
	leaksIgnore = cmdLeaks.flags.String("ignore", "", "comma-separated functions (pkg.F, pkg.(*T).M): a leak blocked with one of them on its stack is not reported")
)

func runLeaks(c *command, args []string) int {
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
	d := leak.New(leak.Options{Stack: func(g trace.GID) []trace.Site { return st.Stack(f.Meta(), g) }})
	// stacks first: an operation's stack ends at the operation.
	_, err = detect.Run(f, st, d)
	printWarnings(c, f.Reader)
	if err != nil {
		c.errorf("%v", err)
		return exitError
	}
	leaks := leak.Without(d.Leaks(), f.Meta(), splitList(*leaksIgnore))
	if analyze.TraceCut(f) {
		c.errorf("the run did not finish (the trace has no end block): goroutines blocked when it stopped are not leaks; nothing reported")
		leaks = nil
	}
	gids := map[trace.GID]bool{}
	for _, l := range leaks {
		gids[l.G] = true
	}
	created := st.CreationStacks(f.Meta(), gids)
	if *leaksJSON {
		err = report.LeaksJSON(os.Stdout, f.Meta(), leaks, created)
	} else {
		err = report.Leaks(os.Stdout, f.Meta(), leaks, created)
		if err == nil && len(leaks) > 0 {
			fmt.Printf("Found %d leaked goroutine(s)\n", len(leaks))
		}
	}
	if err != nil {
		c.errorf("%v", err)
		return exitError
	}
	if len(leaks) > 0 {
		return exitRaces
	}
	return exitOK
}
