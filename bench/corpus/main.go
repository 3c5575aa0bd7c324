// Command corpus runs go test -race and racekit test over a pinned corpus
// of third-party modules and compares their verdicts test by test.
//
// For each module of the corpus (modules.go), fetched with go mod download
// and copied to a writable directory (go mod tidy there; a go.mod is
// written when the module has none; replaces of directories it does not
// hold are dropped), it runs
//
//	go test -race -json -count=1 -p=1 -timeout=T ./...
//	racekit test -json -count=1 -p=1 -timeout=T ./...   (-runs times)
//
// and records each test's verdict (pass, fail, skip) and races in each
// run. Results go to -out (JSON, rewritten after each module) and the
// table to -readme. With -render it only renders -readme from -out.
//
// With -merge it runs nothing: it merges saved results files (partial
// runs, each of a few modules) into -out, keeping each module's last
// measurement and the racekit commit it was made at, and renders -readme
// from that:
//
//	go run ./bench/corpus -merge 'a/results.json,b/results-C.json.gz@0123abc' -out latest.json -readme latest.md
//
// A file ending in .gz is read and written gzip-compressed.
//
//	go build -o /tmp/racekit-corpus ./cmd/racekit
//	go run ./bench/corpus -racekit /tmp/racekit-corpus
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"time"
)

var (
	racekitBin = flag.String("racekit", "/tmp/racekit-corpus", "racekit binary (go build -o /tmp/racekit-corpus ./cmd/racekit)")
	runs       = flag.Int("runs", 3, "racekit runs per module")
	testTO     = flag.Duration("timeout", 5*time.Minute, "go test -timeout of each run")
	capTO      = flag.Duration("cap", 7*time.Minute, "wall-clock limit of one run; a run past it is killed (capped)")
	budget     = flag.Duration("budget", 0, "stop starting modules after this long (0: no limit); the rest are 'not run (time)'")
	outFile    = flag.String("out", "bench/results/corpus/results.json", "JSON results, rewritten after each module")
	readme     = flag.String("readme", "bench/results/corpus/README.md", "table rendered from -out")
	causes     = flag.String("causes", "bench/results/corpus/causes.md", "hand-written analysis included in -readme, if it exists")
	logDir     = flag.String("logs", "", "keep each run's output in DIR (default: a temporary directory, removed)")
	only       = flag.String("only", "", "comma-separated module paths to run (default: all)")
	resume     = flag.Bool("resume", false, "keep the modules already in -out and run the others")
	render     = flag.Bool("render", false, "only render -readme from -out")
	rkFlags    = flag.String("racekit-flags", "", "space-separated flags for racekit test (-include '...' traces every dependency)")
	rkRev      = flag.String("rev", "", "the commit -racekit was built from, recorded in -out (default: git describe of the current tree, which is not the binary's when it was built from a snapshot)")
	merge      = flag.String("merge", "", "run nothing: merge these results files (comma-separated, oldest first; FILE@REV names the commit racekit was built from) into -out, each module's last measurement, and render -readme")
)

// Results is the JSON file.
type Results struct {
	Command string          `json:"command"`
	Racekit string          `json:"racekit"` // racekit's commit, when known; "merged" for -merge
	Go      string          `json:"go"`
	Modules []*ModuleResult `json:"modules"`
	// Merged are the files a -merge read, in order.
	Merged []MergedFile `json:"merged,omitempty"`
}

// ModuleResult is one module's runs.
type ModuleResult struct {
	Path     string       `json:"path"`
	Version  string       `json:"version"`
	Why      string       `json:"why"`
	GoLine   string       `json:"go_line"` // "none": no go.mod or no go line
	Prep     string       `json:"prep,omitempty"`
	Race     *RunSummary  `json:"race"`
	Racekit  []RunSummary `json:"racekit"`
	Compare  *Comparison  `json:"compare,omitempty"`
	TestRows []TestRow    `json:"tests,omitempty"`
	Error    string       `json:"error,omitempty"`
	// From and RacekitAt, in a merge: the file this row comes from (as
	// given to -merge) and the commit racekit was built from there.
	From      string `json:"from,omitempty"`
	RacekitAt string `json:"racekit_at,omitempty"`
}

// TestRow is one test's verdicts: -race's, then each racekit run's, and
// the races each reported in it.
type TestRow struct {
	Test    string `json:"test"`
	Race    string `json:"race"`
	Racekit string `json:"racekit"`         // "pass pass pass"
	Races   string `json:"races,omitempty"` // "1 | 0 0 0"
}

// RunSummary is one run of a module.
type RunSummary struct {
	Verdict   string  `json:"verdict"` // ok, FAIL, build failed, timeout, capped, no tests, error
	Seconds   float64 `json:"seconds"`
	Exit      int     `json:"exit"`
	NPackages int     `json:"npackages"`
	NTests    int     `json:"ntests"`
	// RaceSites counts race reports in tests by their two accesses' sites.
	RaceSites map[string]int `json:"race_sites,omitempty"`
	Failed    []string       `json:"failed_packages,omitempty"`
	*Run
	Stderr string `json:"stderr,omitempty"` // tail of standard error
}

func main() {
	flag.Parse()
	if *merge != "" {
		args := []string{"go", "run", "./bench/corpus"}
		for _, a := range os.Args[1:] {
			args = append(args, shellQuote(a))
		}
		res, err := mergeResults(*merge, strings.Join(args, " "))
		if err != nil {
			fatalf("%v", err)
		}
		save(res)
		writeReadme(res)
		return
	}
	res := &Results{}
	if *resume || *render {
		if r, err := readResults(*outFile); err == nil {
			res = r
		} else if *render || !errors.Is(err, os.ErrNotExist) {
			fatalf("%v", err)
		}
	}
	if *render {
		writeReadme(res)
		return
	}
	res.Command = "go run ./bench/corpus " + strings.Join(os.Args[1:], " ")
	res.Go = runtime.Version()
	res.Racekit = *rkRev
	if res.Racekit == "" {
		res.Racekit = racekitVersion()
	}
	done := map[string]bool{}
	for _, m := range res.Modules {
		done[m.Path] = true
	}
	want := map[string]bool{}
	if *only != "" {
		for _, p := range strings.Split(*only, ",") {
			want[p] = true
		}
	}
	work, err := os.MkdirTemp("", "racekit-corpus-")
	if err != nil {
		fatalf("%v", err)
	}
	defer os.RemoveAll(work)
	logs := *logDir
	if logs == "" {
		logs = filepath.Join(work, "logs")
	}
	if err := os.MkdirAll(logs, 0o755); err != nil {
		fatalf("%v", err)
	}
	start := time.Now()
	for i, m := range corpus {
		if done[m.Path] || (len(want) > 0 && !want[m.Path]) {
			continue
		}
		if *budget > 0 && time.Since(start) > *budget {
			fmt.Fprintf(os.Stderr, "corpus: budget spent, %s not run\n", m.Path)
			continue
		}
		fmt.Fprintf(os.Stderr, "corpus: [%d/%d] %s@%s\n", i+1, len(corpus), m.Path, m.Version)
		mr := runModule(m, filepath.Join(work, fmt.Sprintf("m%02d", i)), filepath.Join(logs, sanitize(m.Path)))
		res.Modules = append(res.Modules, mr)
		save(res)
		writeReadme(res)
		os.RemoveAll(filepath.Join(work, fmt.Sprintf("m%02d", i)))
		if err := devNullOK(os.DevNull); err != nil {
			fatalf("after %s: %v; its row is in %s, but every build after it fails: stopping (make it again: mknod -m 666 /dev/null c 1 3)", m.Path, err, *outFile)
		}
	}
}

// devNullOK reports an error unless path (os.DevNull) is still a
// character device: a module's test run as root can remove it (pk910/dynamic-ssz's
// did twice, session 79's batch GU and session 86's HO), and then every
// later build fails on "open /dev/null", the module's own runs and those
// of the modules after it.
func devNullOK(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.Mode()&os.ModeCharDevice == 0 {
		return fmt.Errorf("%s is no longer a character device (%v)", path, fi.Mode())
	}
	return nil
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "corpus: "+format+"\n", args...)
	os.Exit(1)
}

func save(res *Results) {
	if err := writeResults(*outFile, res); err != nil {
		fatalf("%v", err)
	}
}

func racekitVersion() string {
	out, err := exec.Command("git", "describe", "--always", "--dirty").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

func sanitize(p string) string {
	return strings.NewReplacer("/", "_", "@", "_").Replace(p)
}

// runModule fetches m into dir, runs it with -race once and with racekit
// -runs times, and compares.
func runModule(m Module, dir, logPrefix string) *ModuleResult {
	mr := &ModuleResult{Path: m.Path, Version: m.Version, Why: m.Why}
	if err := fetch(m, dir, mr); err != nil {
		mr.Error = err.Error()
		fmt.Fprintf(os.Stderr, "corpus:   %v\n", err)
		return mr
	}
	common := []string{"-json", "-count=1", "-p=1", "-timeout=" + testTO.String(), "./..."}
	race, raceOut := runOnce(dir, "go", append([]string{"test", "-race"}, common...), logPrefix+".race")
	mr.Race = race
	fmt.Fprintf(os.Stderr, "corpus:   -race: %s, %d tests, %d races, %.0fs\n", race.Verdict, race.NTests, race.Races, race.Seconds)
	_ = raceOut
	var rks []*Run
	for i := 0; i < *runs; i++ {
		args := append(append([]string{"test"}, strings.Fields(*rkFlags)...), common...)
		rk, _ := runOnce(dir, *racekitBin, args, fmt.Sprintf("%s.racekit%d", logPrefix, i+1))
		mr.Racekit = append(mr.Racekit, *rk)
		rks = append(rks, rk.Run)
		fmt.Fprintf(os.Stderr, "corpus:   racekit %d: %s, %d tests, %d races, %.0fs\n", i+1, rk.Verdict, rk.NTests, rk.Races, rk.Seconds)
		if rk.Verdict == "capped" && i+1 < *runs {
			mr.Prep = strings.TrimSpace(mr.Prep + fmt.Sprintf(" racekit run %d hit the %v cap: later runs skipped.", i+1, *capTO))
			break
		}
	}
	c := Compare(race.Run, rks)
	mr.Compare = &c
	mr.TestRows = testRows(race.Run, rks)
	fmt.Fprintf(os.Stderr, "corpus:   same verdict in all runs: %d of %d tests (%d differ)\n", c.Same, c.Union, len(c.Differ))
	return mr
}

func testRows(race *Run, rks []*Run) []TestRow {
	var rows []TestRow
	names := map[string]bool{}
	for n := range race.Tests {
		names[n] = true
	}
	for _, r := range rks {
		for n := range r.Tests {
			names[n] = true
		}
	}
	for _, n := range sortedKeys(names) {
		v, rr := verdictOf(race, n)
		row := TestRow{Test: n, Race: v}
		var vs, rs []string
		any := rr > 0
		for _, r := range rks {
			v, k := verdictOf(r, n)
			vs = append(vs, v)
			rs = append(rs, fmt.Sprint(k))
			if k > 0 {
				any = true
			}
		}
		row.Racekit = strings.Join(vs, " ")
		if any {
			row.Races = fmt.Sprintf("%d | %s", rr, strings.Join(rs, " "))
		}
		rows = append(rows, row)
	}
	return rows
}

// fetch downloads m, copies it to dir and makes it ready to test.
func fetch(m Module, dir string, mr *ModuleResult) error {
	out, err := exec.Command("go", "mod", "download", "-json", m.Path+"@"+m.Version).Output()
	var info struct{ Dir, Error string }
	_ = json.Unmarshal(out, &info)
	if info.Error != "" {
		return fmt.Errorf("go mod download: %s", info.Error)
	}
	if err != nil {
		return fmt.Errorf("go mod download: %v", err)
	}
	// A writable copy of the read-only module cache's files.
	if err := os.CopyFS(dir, os.DirFS(info.Dir)); err != nil {
		return err
	}
	mr.GoLine = "none"
	gomod := filepath.Join(dir, "go.mod")
	if b, err := os.ReadFile(gomod); err == nil {
		if g := regexp.MustCompile(`(?m)^go\s+(\S+)`).FindSubmatch(b); g != nil {
			mr.GoLine = string(g[1])
		}
	} else {
		// A module without go.mod (+incompatible): the go line stays absent.
		if err := os.WriteFile(gomod, []byte("module "+m.Path+"\n"), 0o644); err != nil {
			return err
		}
		mr.Prep = "no go.mod: wrote one with the module line only."
	}
	if n, err := dropMissingReplaces(dir); err != nil {
		return err
	} else if n > 0 {
		mr.Prep = strings.TrimSpace(fmt.Sprintf("%s dropped %d replace directives to directories the module does not hold (a monorepo's siblings): the required versions come from the proxy.", mr.Prep, n))
	}
	tidy := exec.Command("go", "mod", "tidy")
	tidy.Dir = dir
	tidy.Env = runEnv()
	if out, err := tidy.CombinedOutput(); err != nil {
		mr.Prep = strings.TrimSpace(mr.Prep + " go mod tidy failed (runs use -mod=mod): " + firstLines(string(out), 3))
	}
	return nil
}

// dropMissingReplaces removes from dir's go.mod each replace directive
// whose target is a local directory that is not there: a module of a
// monorepo (OpenTelemetry's collector) replaces its siblings by relative
// paths, which its copy from the proxy does not hold, so that neither go
// test -race nor racekit could build it. It returns how many it dropped.
func dropMissingReplaces(dir string) (int, error) {
	cmd := exec.Command("go", "mod", "edit", "-json")
	cmd.Dir = dir
	cmd.Env = runEnv()
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("go mod edit -json: %v", err)
	}
	var mod struct {
		Replace []struct {
			Old, New struct{ Path, Version string }
		}
	}
	if err := json.Unmarshal(out, &mod); err != nil {
		return 0, fmt.Errorf("go mod edit -json: %v", err)
	}
	var drop []string
	for _, r := range mod.Replace {
		if r.New.Version != "" || !isDirPath(r.New.Path) {
			continue // a module path: fetched from the proxy
		}
		target := r.New.Path
		if !filepath.IsAbs(target) {
			target = filepath.Join(dir, target)
		}
		if _, err := os.Stat(filepath.Join(target, "go.mod")); err == nil {
			continue
		}
		old := r.Old.Path
		if r.Old.Version != "" {
			old += "@" + r.Old.Version
		}
		drop = append(drop, "-dropreplace="+old)
	}
	if len(drop) == 0 {
		return 0, nil
	}
	cmd = exec.Command("go", append([]string{"mod", "edit"}, drop...)...)
	cmd.Dir = dir
	cmd.Env = runEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("go mod edit: %v: %s", err, firstLines(string(out), 3))
	}
	return len(drop), nil
}

// isDirPath reports whether a replacement is a directory, as go.mod's
// rule says: a path that starts ./ or ../ or is absolute.
func isDirPath(p string) bool {
	return strings.HasPrefix(p, "./") || strings.HasPrefix(p, "../") || p == "." || p == ".." || filepath.IsAbs(p)
}

func runEnv() []string {
	return append(os.Environ(), "GOWORK=off", "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod")
}

// runOnce runs name args in dir with the wall-clock cap and parses its
// go test -json output.
func runOnce(dir, name string, args []string, log string) (*RunSummary, []byte) {
	ctx, cancel := context.WithTimeout(context.Background(), *capTO)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = runEnv()
	// Its own TMPDIR, removed after: a run killed at the cap (SIGKILL, to
	// reach the test binaries too) leaves racekit's traces there, which
	// reached 12 GB on xsync.
	if tmp, err := os.MkdirTemp("", "racekit-corpus-run-"); err == nil {
		defer os.RemoveAll(tmp)
		cmd.Env = append(cmd.Env, "TMPDIR="+tmp)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr strings.Builder
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	s := &RunSummary{Seconds: time.Since(start).Seconds()}
	out := []byte(stdout.String())
	_ = os.WriteFile(log+".json", out, 0o644)
	_ = os.WriteFile(log+".stderr", []byte(stderr.String()), 0o644)
	s.Run = ParseJSON(out)
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		s.Exit = ee.ExitCode()
	default:
		s.Exit = -1
		s.Stderr = err.Error()
	}
	if s.Stderr == "" {
		s.Stderr = stderrTail(stderr.String())
	}
	for _, p := range sortedKeys(s.Packages) {
		s.NPackages++
		if s.Packages[p] == Fail {
			s.Failed = append(s.Failed, p)
		}
	}
	s.NTests = len(s.Tests)
	for _, t := range s.Tests {
		for _, site := range t.Sites {
			if s.RaceSites == nil {
				s.RaceSites = map[string]int{}
			}
			s.RaceSites[site]++
		}
	}
	s.Verdict = runVerdict(s, ctx.Err() != nil)
	return s, out
}

func runVerdict(s *RunSummary, capped bool) string {
	switch {
	case capped:
		return "capped"
	case len(s.BuildFailed) > 0:
		return fmt.Sprintf("build failed (%d pkg)", len(s.BuildFailed))
	case len(s.TimedOut) > 0:
		return "timeout"
	case len(s.Failed) > 0:
		return "FAIL"
	case s.NPackages == 0 && s.Exit != 0:
		return fmt.Sprintf("error (exit %d)", s.Exit)
	case s.NTests == 0:
		return "no tests"
	case s.Exit != 0:
		return fmt.Sprintf("ok? (exit %d)", s.Exit)
	}
	return "ok"
}

// stderrTail keeps standard error's lines that say something: not go's
// download chatter.
func stderrTail(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if l == "" || strings.HasPrefix(l, "go: downloading") || strings.HasPrefix(l, "go: finding") {
			continue
		}
		keep = append(keep, l)
	}
	if len(keep) > 40 {
		keep = append(keep[:40], fmt.Sprintf("... (%d more lines)", len(keep)-40))
	}
	return strings.Join(keep, "\n")
}

func firstLines(s string, n int) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	if len(l) > n {
		l = l[:n]
	}
	return strings.Join(l, " / ")
}
