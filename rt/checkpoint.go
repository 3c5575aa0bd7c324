package rt

// Checkpoints: a test binary whose tests' package has examples gets no
// TestMain of racekit's (instrument's driver.go: it would be a frame on
// the examples' stacks, which run on the main goroutine under m.Run), and
// exits through the testing package's os.Exit. Where the Go runtime is
// patched, the exit hook finishes the trace there (exit.go, exitHook);
// elsewhere nothing of racekit's runs then. So package rttest also
// checkpoints the trace at the end of every top-level test, example,
// benchmark and fuzz target: what was recorded so far goes to the file,
// which then ends with an end block (rkt.Writer.SetCheckpoints), replaced
// by the next block written, so that the file reads as a finished trace
// whenever the process exits between two writes. Without the exit hook,
// what goroutines still running record after the last checkpoint reaches
// the file only with the writer's next flush.

// Checkpoints makes every flush of the trace a checkpoint: the file then
// ends with an end block.
func Checkpoints() {
	if !on {
		return
	}
	wmu.Lock()
	defer wmu.Unlock()
	if finished {
		return
	}
	if err := w.SetCheckpoints(true); err != nil {
		fail(err)
		return
	}
	if err := w.Flush(); err != nil {
		fail(err)
	}
}

// Checkpoint writes everything recorded so far (as Flush) and, in
// checkpoint mode, leaves the file a finished trace; the controlled
// scheduler's schedule is flushed too (as Finish does).
func Checkpoint() {
	schedFlush()
	if !on {
		return
	}
	wmu.Lock()
	defer wmu.Unlock()
	if finished {
		return
	}
	round(roundForce)
	if err := w.Flush(); err != nil {
		fail(err)
	}
}
