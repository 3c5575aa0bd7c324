package main

import (
	"fmt"
	"os"
	"time"

	"github.com/racekit/racekit/confirm"
	"github.com/racekit/racekit/gotestline"
	"github.com/racekit/racekit/sched"
)

var cmdReplay = register(&command{
	name:      "replay",
	usageLine: "replay -seed S [-pair P | -cycle C | -delays | -split S] [-follow FILE] [-schedule FILE] [-times N] [-timeout D] [-dlv] [-deps=false] [-include P] [-exclude P] [-tags T] [-stats] [go test flags] package [go test flags] [-args test binary arguments...]",
	short:     "re-run one racekit fuzz run exactly, from its seed",
	long: `
Replay re-runs one run of racekit fuzz: the package's instrumented test
binary under the RaceFuzzer scheduler with seed S and pair P (as fuzz
printed them). The same seed gives the same schedule, choice for choice
(RaceFuzzer §2.2: replay needs no recording), so the run shows the same
race resolution and the same outcome. The test binary's output is passed
through; replay then prints the race it created and the run's outcome.
With -cycle C (racekit fuzz -deadlocks prints it) the run is under the
DeadlockFuzzer scheduler instead, and replay says whether the cycle
deadlocked; with -delays (fuzz -deadlocks' exploration) under its random
delays, and replay says whether the run deadlocked or which goroutines
it left blocked. With -split S (racekit fuzz -atomicity prints it) the run is
under AtomFuzzer, and replay says whether another goroutine entered the
region's first critical section between a goroutine's two.

-schedule FILE keeps the run's schedule (the goroutine chosen at each
scheduling point). -follow FILE runs such a recorded schedule instead of
a seed and reports where the run departs from it. -times N runs it N times and checks that every run
has the same schedule, step for step. -dlv prints the command that runs
it under the Delve debugger instead of running it (the test binary is kept).

Exit status: 66 if the run passed and created the race (as racekit fuzz
counts a real race), 0 if it passed without; 1 if it failed (a panic, a
test failure, a deadlock, a timeout), the runs of -times differ or the
build fails; 2 on a usage error.
`,
})

var (
	replayFlags    *frontendFlags
	replaySeed     = cmdReplay.flags.Uint64("seed", 0, "seed of the run (from racekit fuzz)")
	replayPair     = cmdReplay.flags.String("pair", "", "the racing pair, file:line~file:line")
	replayCycle    = cmdReplay.flags.String("cycle", "", "a lock-order cycle (racekit fuzz -deadlocks): held>request,held>request")
	replayDelays   = cmdReplay.flags.Bool("delays", false, "the run is under random delays (racekit fuzz -deadlocks' exploration)")
	replaySplit    = cmdReplay.flags.String("split", "", "an atomic region's two critical sections (racekit fuzz -atomicity): first>second")
	replayFollow   = cmdReplay.flags.String("follow", "", "follow this recorded schedule instead of a seed")
	replaySchedule = cmdReplay.flags.String("schedule", "", "write the run's schedule to FILE")
	replayTimes    = cmdReplay.flags.Int("times", 1, "run N times and check the schedules are identical")
	replayDlv      = cmdReplay.flags.Bool("dlv", false, "print a dlv exec command for the run instead of running it")
	replayTimeout  = cmdReplay.flags.Duration("timeout", time.Minute, "time limit of one run")
)

func init() {
	cmdReplay.run = runReplay
	cmdReplay.goTest = gotestline.Runs
	replayFlags = addBuildFlags(cmdReplay.flags)
}

func runReplay(c *command, args []string) int {
	chosen := 0
	for _, set := range []bool{*replayPair != "", *replayCycle != "", *replaySplit != "", *replayDelays} {
		if set {
			chosen++
		}
	}
	if chosen == 0 && *replayFollow == "" {
		c.errorf("-pair, -cycle, -split or -delays is required (with -seed), or -follow FILE")
		return exitUsage
	}
	if chosen > 1 {
		c.errorf("-pair, -cycle, -split and -delays choose the run's scheduler: give one")
		return exitUsage
	}
	var sp *sched.Split
	if *replaySplit != "" {
		s, err := sched.ParseSplit(*replaySplit)
		if err != nil || *replayPair != "" || *replayCycle != "" {
			c.errorf("-split: %v (and not with -pair or -cycle)", err)
			return exitUsage
		}
		sp = &s
	}
	var cycle sched.Cycle
	if *replayCycle != "" {
		var err error
		if cycle, err = sched.ParseCycle(*replayCycle); err != nil || *replayPair != "" {
			c.errorf("-cycle: %v (and not with -pair)", err)
			return exitUsage
		}
	}
	if *replayPair != "" {
		if _, err := sched.ParsePair(*replayPair); err != nil {
			c.errorf("-pair: %v", err)
			return exitUsage
		}
	}
	if *replayTimes < 1 {
		c.errorf("-times must be at least 1")
		return exitUsage
	}
	pkgs := args
	if len(pkgs) != 1 {
		c.errorf("replay runs one package")
		return exitUsage
	}
	targets, tmp, ok := testBinaries(c, replayFlags, pkgs, "racekit-replay-")
	if !ok {
		return exitError
	}
	if !*replayDlv {
		defer os.RemoveAll(tmp)
	}
	o := &confirm.ReplayOptions{
		Target: targets[0], Tmp: tmp, TestArgs: c.line.BinaryArgs(), Seed: *replaySeed,
		Pair: *replayPair, Cycle: cycle, Split: sp, Delays: *replayDelays, Follow: *replayFollow,
		Times: *replayTimes, Schedule: *replaySchedule, Timeout: *replayTimeout, Out: os.Stdout,
	}
	if *replayDlv {
		cmd, err := o.DebugCommand()
		if err != nil {
			c.errorf("%v", err)
			return exitError
		}
		fmt.Println(cmd)
		fmt.Fprintf(os.Stderr, "racekit replay: the test binary stays in %s; remove it when done\n", tmp)
		return exitOK
	}
	res, err := confirm.Replay(o)
	if err != nil {
		c.errorf("%v", err)
		return exitError
	}
	code := exitOK
	for _, m := range res.Mismatches {
		c.errorf("%s", m)
		code = exitError
	}
	r := res.Run
	if res.Divergence != "" {
		fmt.Printf("racekit replay: the run left the schedule: %s\n", res.Divergence)
	}
	fmt.Printf("racekit replay: %s\n", res.Summary)
	what := r.Outcome
	if r.Detail != "" {
		what += ": " + r.Detail
	}
	fmt.Printf("racekit replay: outcome: %s (%d scheduling decisions", what, r.Steps)
	if r.Escapes > 0 {
		fmt.Printf(", %d escapes: may not replay exactly", r.Escapes)
	}
	fmt.Printf(")\n")
	if *replayTimes > 1 && code == exitOK {
		fmt.Printf("racekit replay: %d runs, identical schedules\n", *replayTimes)
	}
	if code != exitOK {
		return code
	}
	switch {
	case r.Outcome == "none" && r.Created:
		return exitRaces
	case r.Outcome == "none":
		return exitOK
	}
	return exitError
}
