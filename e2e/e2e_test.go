// Package e2e runs racekit end to end on small Go programs whose races are
// known: each program under testdata/src marks the lines of its racing
// accesses with a "// race: TAG" comment (the two sides of one race share
// a tag; a race of a line with itself has one line), and a program with no
// such comment is race-free. The test instruments all programs, builds them
// in one go build, runs each, analyzes its trace with the hb detector
// (every distinct racing site pair) and fasttrack, and requires exactly the
// marked line pairs.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/detect/hb"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/instrument"
	"github.com/racekit/racekit/trace"
	"github.com/racekit/racekit/trace/tracefile"
)

// expected reads the "// race: TAG" marks of the .go files in dir and
// returns the line pairs they stand for, as "file:L1-file:L2" strings.
func expected(t *testing.T, dir string) []string {
	t.Helper()
	lines := map[string][]string{} // tag → "file:line"
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for n := 1; sc.Scan(); n++ {
			_, tags, ok := strings.Cut(sc.Text(), "// race:")
			if !ok {
				continue
			}
			for _, tag := range strings.Fields(tags) {
				lines[tag] = append(lines[tag], fmt.Sprintf("%s:%d", filepath.Base(f), n))
			}
		}
	}
	var pairs []string
	for _, ls := range lines {
		if len(ls) == 1 {
			pairs = append(pairs, pairName(ls[0], ls[0]))
		}
		for i := range ls {
			for j := i + 1; j < len(ls); j++ {
				pairs = append(pairs, pairName(ls[i], ls[j]))
			}
		}
	}
	sort.Strings(pairs)
	return pairs
}

func pairName(a, b string) string {
	if b < a {
		a, b = b, a
	}
	return a + " " + b
}

func siteName(m *trace.Meta, id trace.SiteID) string {
	s := m.Site(id)
	return fmt.Sprintf("%s:%d", filepath.Base(s.File), s.Line)
}

// result is what the detectors found in one trace.
type result struct {
	hbPairs []string // distinct racing line pairs (hb)
	// callees: the std function each racing access's site stands for
	// (trace.Site.Callee), by site name; none for a site of its own.
	callees   map[string]string
	fastRaces int // distinct races (fasttrack)
	events    int64
	warnings  []string
}

func analyze(path string) (*result, error) {
	f, err := tracefile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	hbc, ftc := finding.NewCollector(), finding.NewCollector()
	n, err := detect.Run(f, hb.New(hbc), hb.NewFastTrack(ftc))
	if err != nil {
		return nil, err
	}
	res := &result{fastRaces: ftc.Len(), events: n, callees: map[string]string{}}
	seen := map[string]bool{}
	for _, g := range hbc.Groups() {
		for _, id := range []trace.SiteID{g.Prev.Site, g.Cur.Site} {
			if c := f.Meta().Site(id).Callee; !c.IsZero() {
				res.callees[siteName(f.Meta(), id)] = c.Func
			}
		}
		p := pairName(siteName(f.Meta(), g.Prev.Site), siteName(f.Meta(), g.Cur.Site))
		if !seen[p] {
			seen[p] = true
			res.hbPairs = append(res.hbPairs, p)
		}
	}
	sort.Strings(res.hbPairs)
	if w, ok := f.Reader.(trace.Warner); ok {
		res.warnings = w.Warnings()
	}
	return res, nil
}

// snapshot hashes every file under dir, to check that racekit changed none.
func snapshot(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	m := map[string][32]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		m[p] = sha256.Sum256(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func checkUnchanged(t *testing.T, before, after map[string][32]byte) {
	t.Helper()
	for p, h := range before {
		if after[p] != h {
			t.Errorf("racekit modified the user's file %s", p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("racekit created %s in the user's tree", p)
		}
	}
}

// built is the instrumented build of testdata/src, shared by the tests.
var built struct {
	once sync.Once
	dir  string // binaries
	err  error
	prep *instrument.Prepared
	took time.Duration
}

func buildAll(t *testing.T) (string, *instrument.Prepared) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs instrumented programs")
	}
	built.once.Do(func() {
		start := time.Now()
		src, _ := filepath.Abs("testdata/src")
		built.dir, built.err = os.MkdirTemp("", "racekit-e2e-")
		if built.err != nil {
			return
		}
		var status instrument.Status
		built.prep, built.err = instrument.Prepare(instrument.Config{Dir: src, Patterns: []string{"./..."}, Tests: true, Status: &status})
		if built.err != nil {
			return
		}
		// The progress lines' last step: every package loaded instrumented
		// (testdata/src has no dependencies to compile).
		if st := status.String(); !regexp.MustCompile(`^instrumenting packages: ([1-9][0-9]*) of ([1-9][0-9]*) done$`).MatchString(st) ||
			strings.Fields(st)[2] != strings.Fields(st)[4] {
			built.err = fmt.Errorf("instrument.Status after Prepare: %q, want every package instrumented", st)
			return
		}
		args := append([]string{"build"}, built.prep.BuildArgs()...)
		args = append(args, "-o", built.dir+string(filepath.Separator), "./...")
		cmd := exec.Command("go", args...)
		cmd.Dir = src
		cmd.Env = append(os.Environ(), built.prep.Env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
		built.took = time.Since(start)
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.dir, built.prep
}

func TestMain(m *testing.M) {
	// A normal exit waits GORACE's atexit_sleep_ms, a second unless set,
	// as under -race (rt/exit.go). The programs here run hundreds of
	// times: they run without the wait, but for those whose "// env:"
	// mark asks for it (exitwait).
	if _, ok := os.LookupEnv("GORACE"); !ok {
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	if racekitBin.dir != "" {
		os.RemoveAll(racekitBin.dir)
	}
	os.Exit(code)
}

// exitMark reads a program's "// exit: CODE" comment: its expected exit
// code, "killed" (by SIGKILL), or "signal" (it waits for one); "0" if none.
func exitMark(t *testing.T, mainFile string) string {
	data, err := os.ReadFile(mainFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "// exit: "); ok {
			return strings.TrimSpace(v)
		}
	}
	return "0"
}

// envMark reads the "// env: NAME=VALUE" comments of the program a binary
// of testdata/src was built from: environment it runs with.
func envMark(bin string) []string {
	data, err := os.ReadFile(filepath.Join("testdata", "src", filepath.Base(bin), "main.go"))
	if err != nil {
		return nil // not one of testdata/src's programs
	}
	var env []string
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "// env: "); ok {
			env = append(env, strings.TrimSpace(v))
		}
	}
	return env
}

// runProgram runs an instrumented binary, checks how it ended, and returns
// its trace's path.
func runProgram(t *testing.T, bin, exit string) string {
	t.Helper()
	tr, _ := execProgram(t, bin, exit)
	return tr
}

// execProgram runs an instrumented binary with its program's "// env:"
// marks and more environment, tracing, checks how it ended, and returns
// its trace's path and its output.
func execProgram(t *testing.T, bin, exit string, env ...string) (string, []byte) {
	t.Helper()
	tr := filepath.Join(t.TempDir(), "trace.rkt")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin)
	cmd.Env = append(append(append(os.Environ(), envMark(bin)...), "RACEKIT_TRACE="+tr), env...)
	out, err := cmd.CombinedOutput()
	code := "0"
	if ee, ok := err.(*exec.ExitError); ok {
		code = fmt.Sprint(ee.ExitCode())
		if ee.ExitCode() < 0 {
			code = "killed"
		}
	} else if err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	if code != exit {
		t.Fatalf("%s ended with %s, want %s\n%s", bin, code, exit, out)
	}
	return tr, out
}

// TestPrograms is the ground truth: every marked race is reported, and
// nothing else.
func TestPrograms(t *testing.T) {
	src, _ := filepath.Abs("testdata/src")
	before := snapshot(t, src)
	bins, prep := buildAll(t)
	t.Logf("instrumented %d files of %d packages and built them in %v", prep.Files, len(prep.Instrumented), built.took)
	checkUnchanged(t, before, snapshot(t, src))

	dirs, _ := filepath.Glob(filepath.Join(src, "*", "main.go"))
	if len(dirs) < 20 {
		t.Fatalf("found %d programs", len(dirs))
	}
	for _, mf := range dirs {
		dir := filepath.Dir(mf)
		name := filepath.Base(dir)
		exit := exitMark(t, mf)
		if exit == "signal" {
			continue // TestRunSignal
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			want := expected(t, dir)
			res, err := analyze(runProgram(t, filepath.Join(bins, name), exit))
			if err != nil {
				t.Fatal(err)
			}
			// Only a killed program leaves a trace without its end.
			if (len(res.warnings) > 0) != (exit == "killed") {
				t.Errorf("trace warnings: %v", res.warnings)
			}
			if strings.Join(res.hbPairs, "\n") != strings.Join(want, "\n") {
				t.Errorf("racing line pairs (hb):\n got %q\nwant %q", res.hbPairs, want)
			}
			if (res.fastRaces > 0) != (len(want) > 0) {
				t.Errorf("fasttrack found %d races, want some: %v", res.fastRaces, len(want) > 0)
			}
		})
	}
}

// TestTestMode runs go test on instrumented test packages: sequential
// tests, subtests, parallel subtests, cleanups, examples and a TestMain
// share state race-free, and only the marked race is reported.
func TestTestMode(t *testing.T) {
	src, _ := filepath.Abs("testdata/src")
	_, prep := buildAll(t)
	dir := t.TempDir()
	args := append([]string{"test", "-count=1"}, prep.BuildArgs()...)
	args = append(args, "./testpkg", "./testmainpkg")
	cmd := exec.Command("go", args...)
	cmd.Dir = src
	cmd.Env = append(append(os.Environ(), prep.Env...), "RACEKIT_TRACE_DIR="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go test: %v\n%s", err, out)
	}
	traces, _ := filepath.Glob(filepath.Join(dir, "*.rkt"))
	if len(traces) != 2 {
		t.Fatalf("got traces %v, want one per test binary", traces)
	}
	for _, tr := range traces {
		f, err := tracefile.Open(tr)
		if err != nil {
			t.Fatal(err)
		}
		for {
			var e trace.Event
			if f.Next(&e) != nil {
				break
			}
		}
		prog := strings.TrimPrefix(f.Meta().NameOf(0), "program ")
		f.Close()
		pkg := strings.TrimSuffix(strings.TrimPrefix(prog, "racekit.test/e2e/"), ".test")
		res, err := analyze(tr)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.warnings) > 0 {
			t.Errorf("%s: trace warnings: %v", pkg, res.warnings)
		}
		want := expected(t, filepath.Join(src, pkg))
		if strings.Join(res.hbPairs, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: racing line pairs (hb):\n got %q\nwant %q", pkg, res.hbPairs, want)
		}
	}
}

// TestExitWait: main's return waits as a -race binary's exit does, so
// what the program's other goroutines do in that second happens (and
// their race is reported: TestPrograms), as under go test -race.
// TestCtxCause: ctxcause's HTTP call returns the cause its context was
// cancelled with (TestPrograms: and racekit reports no race on it).
func TestCtxCause(t *testing.T) {
	bins, _ := buildAll(t)
	_, out := execProgram(t, filepath.Join(bins, "ctxcause"), "0")
	if !strings.Contains(string(out), "upload failed") {
		t.Errorf("ctxcause printed %q, want the cancel's cause", out)
	}
}

func TestExitWait(t *testing.T) {
	bins, _ := buildAll(t)
	_, out := execProgram(t, filepath.Join(bins, "exitwait"), "0")
	if !strings.Contains(string(out), "written after main returned") {
		t.Errorf("exitwait's output %q lacks what its goroutine prints after main returned", out)
	}
}
