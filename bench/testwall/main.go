// Command testwall times what a user waits for: `go test -race` against
// `racekit test` (full detection: every access recorded, FastTrack over
// the trace) on the same test packages, wall clock from the command's
// start to its end, build included (the build cache warmed by one
// unmeasured run of each). racekit runs twice per round: analyzing each
// trace while its binary runs (the default, testout/early.go) and
// after it (RACEKIT_TEST_FOLLOW=0), so the two are compared in one run.
//
//	go build -o /tmp/rk ./cmd/racekit
//	RACEKIT_ROOT=$PWD go run ./bench/testwall -racekit /tmp/rk -n 5 ./trace/rkt ./detect/vc
//
// With -before BIN -before-root DIR, an earlier racekit (built from a
// checkout at DIR, whose rt its instrumented tests link) runs in place of
// the analysis-after-the-run variant, in the same rounds: the before/after
// comparison of a change.
//
//	git archive REV | tar -x -C /tmp/old && (cd /tmp/old && go build -o /tmp/rk-old ./cmd/racekit)
//	RACEKIT_ROOT=$PWD go run ./bench/testwall -racekit /tmp/rk -before /tmp/rk-old -before-root /tmp/old -n 3 ./trace/rkt
//
// Runs go in rounds (each round runs every variant of a package once), so
// that a machine that slows down weighs on all of them alike; the table
// shows the best and the median of n.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

type variant struct {
	name string
	cmd  func(pkg string) *exec.Cmd
}

func main() {
	rk := flag.String("racekit", "racekit", "the racekit binary")
	n := flag.Int("n", 5, "runs per variant")
	before := flag.String("before", "", "an earlier racekit binary to run in the same rounds (with -before-root)")
	beforeRoot := flag.String("before-root", "", "the checkout -before was built from (its RACEKIT_ROOT)")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("testwall: ")
	if flag.NArg() == 0 {
		log.Fatal("usage: testwall [-racekit BIN] [-before BIN -before-root DIR] [-n N] packages...")
	}
	variants := []variant{
		{"go test -race", func(pkg string) *exec.Cmd { return exec.Command("go", "test", "-race", "-count=1", pkg) }},
		{"racekit test, analysis after the run", func(pkg string) *exec.Cmd {
			c := exec.Command(*rk, "test", "-count=1", pkg)
			c.Env = append(os.Environ(), "RACEKIT_TEST_FOLLOW=0")
			return c
		}},
		{"racekit test", func(pkg string) *exec.Cmd { return exec.Command(*rk, "test", "-count=1", pkg) }},
	}
	if *before != "" {
		if *beforeRoot == "" {
			log.Fatal("-before needs -before-root, the checkout it was built from")
		}
		variants[1] = variant{"racekit test, before", func(pkg string) *exec.Cmd {
			c := exec.Command(*before, "test", "-count=1", pkg)
			c.Env = append(os.Environ(), "RACEKIT_ROOT="+*beforeRoot)
			return c
		}}
	}
	fmt.Printf("Wall time of each command, build included (best and median of %d, in rounds); GOMAXPROCS unset, %s.\n\n", *n, time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	fmt.Print("| package |")
	for _, v := range variants {
		fmt.Printf(" %s |", v.name)
	}
	fmt.Print("\n|---|")
	for range variants {
		fmt.Print("---:|")
	}
	fmt.Println()
	for _, pkg := range flag.Args() {
		times := make([][]time.Duration, len(variants))
		for _, v := range variants { // warm the build cache
			if _, err := run(v.cmd(pkg)); err != nil {
				log.Fatalf("%s %s: %v", v.name, pkg, err)
			}
		}
		for range *n {
			for i, v := range variants {
				d, err := run(v.cmd(pkg))
				if err != nil {
					log.Fatalf("%s %s: %v", v.name, pkg, err)
				}
				times[i] = append(times[i], d)
			}
		}
		fmt.Printf("| %s |", pkg)
		for _, ts := range times {
			slices.Sort(ts)
			fmt.Printf(" %.2fs, %.2fs (%.2fx) |", ts[0].Seconds(), ts[len(ts)/2].Seconds(), ts[0].Seconds()/slices.Min(times[0]).Seconds())
		}
		fmt.Println()
	}
	fmt.Println("\nEach cell: best, median, and the best over go test -race's best.")
}

// run runs c and returns its wall time; a failing test is an error (the
// packages are chosen to pass under both).
func run(c *exec.Cmd) (time.Duration, error) {
	start := time.Now()
	out, err := c.CombinedOutput()
	d := time.Since(start)
	if err != nil {
		return d, fmt.Errorf("%v\n%s", err, strings.TrimSpace(string(out)))
	}
	return d, nil
}
