// Command blocking measures racekit on the blocking-bug kernels of
// bench/blocking/testdata/src (issue 30): small Go tests modelled on the
// classes of blocking bugs reported for real Go projects (resource
// deadlocks, channels, channels with locks, WaitGroups, condition
// variables), and check-then-act atomicity violations on locked data (two
// critical sections of one lock in one function), each with its ground
// truth in its package comment ("truth: deadlock", "leak", "atomicity" or
// "none"), and race-free, block-free controls. Every kernel passes under
// go test: the bug needs an interleaving the plain run does not take, or
// leaves a goroutine blocked after the test returns.
//
// For each kernel it runs go test -race, racekit test --deadlocks --leaks
// (predicted cycles, observed leaks), racekit fuzz -deadlocks (cycles made
// to happen by DeadlockFuzzer, deadlocks by its exploration under random
// delays) and, for a deadlock made to happen, the replay command fuzz
// printed; on atomicity kernels and controls, racekit hatch
// with its defaults (AtomFuzzer's confirmed regions); and writes a table:
//
//	go build -o /tmp/racekit ./cmd/racekit
//	go run ./bench/blocking -racekit /tmp/racekit -out bench/results/blocking.md
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"time"
)

type kernel struct {
	name, class, truth string
}

type result struct {
	k                    kernel
	race                 string // go test -race: "ok", "FAIL", "DATA RACE"
	cycles, rwr, leaks   int    // racekit test --deadlocks --leaks
	lockChan, stalls     int    // the same: a lock held across a channel operation; a test stuck for good
	doubleLocks          int    // racekit vet -tests: locks taken while surely held
	confirmed, fuzzRuns  int    // racekit fuzz -deadlocks
	potential            int    // cycles fuzz did not make happen
	replayed             string // "yes", "no", ""
	found, falseAlarm    bool
	testSecs, fuzzSecs   float64
	testExit, fuzzExit   int
	testErr, fuzzErrText string
	// racekit hatch (its AtomFuzzer phase), on atomicity kernels and
	// controls: runs that interleaved a region and failed, of how many,
	// and the first failure's words.
	hatchConfirmed, hatchRuns int
	hatchFailure              string
	hatchSecs                 float64
	hatched                   bool
}

var (
	truthRE = regexp.MustCompile(`(?m)^// truth: (\w+)`)
	classRE = regexp.MustCompile(`(?m)^// Package \w+: ([^.:\n]+)`)
)

func main() {
	racekit := flag.String("racekit", "", "the racekit binary (go build -o /tmp/racekit ./cmd/racekit)")
	out := flag.String("out", "", "write the table here (default: stdout only)")
	runs := flag.Int("runs", 10, "racekit fuzz -deadlocks runs per cycle")
	flag.Parse()
	if *racekit == "" {
		fmt.Fprintln(os.Stderr, "blocking: -racekit is required")
		os.Exit(2)
	}
	dir, err := filepath.Abs("bench/blocking/testdata/src")
	if err != nil {
		fail(err)
	}
	ks, err := kernels(dir)
	if err != nil {
		fail(err)
	}
	var rs []result
	for _, k := range ks {
		fmt.Fprintf(os.Stderr, "blocking: %s\n", k.name)
		rs = append(rs, measure(*racekit, dir, k, *runs))
	}
	var b bytes.Buffer
	table(&b, rs, *runs)
	os.Stdout.Write(b.Bytes())
	if *out != "" {
		if err := os.WriteFile(*out, b.Bytes(), 0o666); err != nil {
			fail(err)
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "blocking:", err)
	os.Exit(1)
}

// kernels reads each kernel's class and truth from its package comment.
func kernels(dir string) ([]kernel, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var ks []kernel
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(dir, e.Name(), "*_test.go"))
		if len(files) == 0 {
			continue
		}
		src, err := os.ReadFile(files[0])
		if err != nil {
			return nil, err
		}
		t, c := truthRE.FindSubmatch(src), classRE.FindSubmatch(src)
		if t == nil || c == nil {
			return nil, fmt.Errorf("%s: no '// Package x: class.' or '// truth: ...' line", files[0])
		}
		ks = append(ks, kernel{e.Name(), string(c[1]), string(t[1])})
	}
	sort.Slice(ks, func(i, j int) bool { return ks[i].name < ks[j].name })
	return ks, nil
}

// run runs a command in dir and returns its exit status and output.
func run(dir string, timeout time.Duration, name string, args ...string) (int, string, float64) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off")
	start := time.Now()
	outb, err := cmd.CombinedOutput()
	secs := time.Since(start).Seconds()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(outb), secs
	} else if err != nil {
		return -1, err.Error() + "\n" + string(outb), secs
	}
	return 0, string(outb), secs
}

var (
	confirmedRE = regexp.MustCompile(`(?:DEADLOCK|GOROUTINE LEAK) \(confirmed: (\d+) of (\d+) runs`)
	atomRE      = regexp.MustCompile(`ATOMICITY VIOLATION \(confirmed: (\d+) of (\d+) runs`)
	failureRE   = regexp.MustCompile(`(?m)^Failure \(seed \d+\): (.*)$`)
)

func measure(racekit, dir string, k kernel, runs int) result {
	r := result{k: k}
	pkg := "./" + k.name
	code, out, _ := run(dir, 5*time.Minute, "go", "test", "-race", "-count=1", pkg)
	switch {
	case strings.Contains(out, "WARNING: DATA RACE"):
		r.race = "DATA RACE"
	case code == 0:
		r.race = "ok"
	default:
		r.race = "FAIL"
	}
	r.testExit, out, r.testSecs = run(dir, 5*time.Minute, racekit, "test", "-count=1", "--deadlocks", "--leaks", pkg)
	r.cycles = strings.Count(out, "WARNING: POTENTIAL DEADLOCK (lock-order")
	r.rwr = strings.Count(out, "WARNING: POTENTIAL DEADLOCK (RWMutex")
	r.leaks = strings.Count(out, "WARNING: GOROUTINE LEAK")
	r.lockChan = strings.Count(out, "WARNING: POTENTIAL DEADLOCK (a lock held across")
	r.stalls = strings.Count(out, "WARNING: DEADLOCK in")
	if r.testExit != 0 && r.testExit != 1 {
		r.testErr = firstLine(out)
	}
	_, vout, _ := run(dir, 5*time.Minute, racekit, "vet", "-q", "-tests", pkg)
	r.doubleLocks = strings.Count(vout, ": potential deadlock: ")
	r.fuzzExit, out, r.fuzzSecs = run(dir, 10*time.Minute, racekit, "fuzz", "-deadlocks", "-q", "-runs", fmt.Sprint(runs), "-j", fmt.Sprint(runtime.NumCPU()), pkg)
	for _, m := range confirmedRE.FindAllStringSubmatch(out, -1) {
		var c, n int
		fmt.Sscan(m[1], &c)
		fmt.Sscan(m[2], &n)
		r.confirmed += c
		r.fuzzRuns += n
	}
	r.potential = strings.Count(out, "POTENTIAL DEADLOCK ")
	if r.fuzzExit != 0 && r.fuzzExit != 66 {
		r.fuzzErrText = firstLine(out)
	}
	if i := strings.Index(out, "Replay: racekit "); i >= 0 {
		line := out[i+len("Replay: racekit "):]
		line = line[:strings.IndexByte(line, '\n')]
		var args []string
		for _, f := range strings.Fields(line) {
			args = append(args, strings.Trim(f, "'"))
		}
		_, rout, _ := run(dir, 5*time.Minute, racekit, args...)
		r.replayed = "no"
		if strings.Contains(rout, "racekit replay: the cycle deadlocked") || strings.Contains(rout, "racekit replay: the run deadlocked") || strings.Contains(rout, "racekit replay: the run left ") {
			r.replayed = "yes"
		}
	}
	if k.truth == "atomicity" || k.truth == "none" {
		// racekit hatch with its defaults: PECAN's clips, then AtomFuzzer
		// on the regions whose critical sections on one lock are split.
		r.hatched = true
		_, out, r.hatchSecs = run(dir, 5*time.Minute, racekit, "hatch", "-q", pkg)
		for _, m := range atomRE.FindAllStringSubmatch(out, -1) {
			var c, n int
			fmt.Sscan(m[1], &c)
			fmt.Sscan(m[2], &n)
			r.hatchConfirmed += c
			r.hatchRuns += n
		}
		if m := failureRE.FindStringSubmatch(out); m != nil {
			r.hatchFailure = m[1]
		}
	}
	switch k.truth {
	case "atomicity":
		r.found = r.hatchConfirmed > 0
	case "deadlock":
		r.found = r.cycles+r.rwr+r.lockChan+r.stalls+r.doubleLocks+r.confirmed > 0
	case "leak":
		r.found = r.leaks+r.stalls+r.confirmed > 0
	case "none":
		r.falseAlarm = r.cycles+r.rwr+r.lockChan+r.stalls+r.leaks+r.doubleLocks > 0 || r.confirmed > 0 || r.hatchConfirmed > 0
	}
	return r
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

func table(b *bytes.Buffer, rs []result, runs int) {
	fmt.Fprintf(b, "# racekit on blocking-bug kernels (issue 30)\n\n")
	fmt.Fprintf(b, "Generated by `go run ./bench/blocking -racekit BIN -out bench/results/blocking.md` (%s, %s/%s, %d CPUs); do not edit by hand.\n", runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	fmt.Fprintf(b, "Kernels: bench/blocking/testdata/src, each a test that passes under `go test` (the bug needs another interleaving, or leaves a goroutine blocked after the test returns), with its truth in its package comment.\n\n")
	fmt.Fprintf(b, "Columns: `go test -race -count=1`; `racekit test -count=1 --deadlocks --leaks` (lock-order cycles and RWMutex read-write-read predicted by iGoodlock, a lock held across a channel operation, a test whose goroutines all blocked on each other, goroutines left blocked on channel, lock, WaitGroup or Cond operations); `racekit vet -tests` (locks taken while surely held: double locking); `racekit fuzz -deadlocks -runs %d` (runs in which DeadlockFuzzer deadlocked the program with the cycle's goroutines blocked at its requests, over all of the kernel's cycles, plus the runs of its exploration under random delays, 20 by default, in which every goroutine blocked or that left goroutines blocked when they ended), and whether the first printed `racekit replay -seed S -cycle C` (or `-delays`) deadlocked (or left them blocked) again; on atomicity kernels and controls, `racekit hatch` with its defaults (its AtomFuzzer phase: runs that interleaved a region whose critical sections on one lock are split in two and failed, the test's own words, and hatch's wall time).\n\n", runs)
	fmt.Fprintf(b, "| kernel | class | truth | go test -race | cycles / rwr / lock-chan / stuck / leaks | vet double locks | fuzz -deadlocks | replay | hatch (AtomFuzzer) | verdict |\n|---|---|---|---|---|---|---|---|---|---|\n")
	var bugs, found, controls, alarms, made, raced int
	for _, r := range rs {
		fz := "—"
		if r.fuzzRuns > 0 || r.potential > 0 {
			fz = fmt.Sprintf("%d of %d runs", r.confirmed, r.fuzzRuns)
			if r.potential > 0 {
				fz += fmt.Sprintf(", %d cycle(s) not made to happen", r.potential)
			}
		}
		if r.fuzzErrText != "" {
			fz = "error: " + r.fuzzErrText
		}
		verdict := ""
		switch {
		case r.k.truth == "none" && r.falseAlarm:
			verdict, controls, alarms = "FALSE ALARM", controls+1, alarms+1
		case r.k.truth == "none":
			verdict, controls = "quiet (correct)", controls+1
		case r.found:
			bugs, found = bugs+1, found+1
			verdict = "found"
			if r.confirmed > 0 || r.hatchConfirmed > 0 {
				verdict, made = "found, made to happen", made+1
			}
		default:
			bugs++
			verdict = "MISSED"
		}
		if r.race == "DATA RACE" {
			raced++
		}
		rk := fmt.Sprintf("%d / %d / %d / %d / %d", r.cycles, r.rwr, r.lockChan, r.stalls, r.leaks)
		if r.testErr != "" {
			rk += " (error: " + r.testErr + ")"
		}
		rp := r.replayed
		if rp == "" {
			rp = "—"
		}
		hz := "—"
		if r.hatched {
			hz = fmt.Sprintf("%d of %d runs failed, %.0fs", r.hatchConfirmed, r.hatchRuns, r.hatchSecs)
			if r.hatchFailure != "" {
				hz += ": " + strings.ReplaceAll(r.hatchFailure, "|", "\\|")
			}
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %d | %s | %s | %s | %s |\n", r.k.name, r.k.class, r.k.truth, r.race, rk, r.doubleLocks, fz, rp, hz, verdict)
	}
	fmt.Fprintf(b, "\nBugs: %d, reported (predicted or observed) %d, of them made to happen by DeadlockFuzzer, fuzz -deadlocks' exploration under random delays or AtomFuzzer %d; controls: %d, false alarms %d. `go test -race` reports no blocking bug (a data race in %d kernel(s): its column).\n", bugs, found, made, controls, alarms, raced)
}
