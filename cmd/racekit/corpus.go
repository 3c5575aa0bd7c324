package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

var cmdCorpus = register(&command{
	name:      "corpus",
	usageLine: "corpus [-keep DIR] [-json FILE] [-v] [SPEC ...]",
	short:     "measure whether instrumented tests pass as they do plainly, over a corpus of modules",
	long: `
Corpus checks that racekit preserves behaviour: for each module of the
corpus it runs the tests of the chosen packages with plain go test and with
racekit test, and reports per package whether each passed. A package counts
when its plain tests pass; the share that also pass instrumented is the
figure of merit (the target is 100%). Races racekit reports do not make a
package fail here: only go test's own verdict counts.

A SPEC is MODULE@VERSION[:PATTERNS], fetched through the Go module proxy
(go mod download) and copied to a temporary directory, or self[:PATTERNS]
for racekit's own module (the current directory's); PATTERNS is a comma-
separated list of package patterns (./... by default). Without SPECs the
corpus is:

` + "\t" + `self:` + defaultSelfPatterns + `
` + "\t" + strings.Join(defaultCorpus, "\n\t") + `

Both runs use -count=1 and -timeout=10m.

Exit status: 0 when every package that passes plainly passes instrumented,
1 otherwise or on an error.
`,
})

var (
	corpusKeep = cmdCorpus.flags.String("keep", "", "keep the module copies and logs in `DIR`")
	corpusJSON = cmdCorpus.flags.String("json", "", "also write the results as JSON to `FILE`")
	corpusV    = cmdCorpus.flags.Bool("v", false, "print go test's and racekit test's output")
)

// defaultSelfPatterns are racekit's own packages in the default corpus:
// the core (the runtime's dependencies among them), not the commands and
// harnesses whose tests build and run racekit themselves, nor the
// detectors' differential tests, whose instrumented runs record billions
// of events.
const defaultSelfPatterns = "./trace,./trace/rkt,./trace/text,./finding,./report,./filter,./detect/shadow,./detect/vc,./detect/clock,./solver"

var defaultCorpus = []string{
	"golang.org/x/sync@v0.24.0",
	"golang.org/x/mod@v0.42.0:./semver,./module,./modfile,./sumdb/note,./sumdb/dirhash,./sumdb/tlog",
	"golang.org/x/tools@v0.52.0:./container/intsets,./go/ast/astutil,./go/ast/inspector,./go/types/typeutil,./go/cfg,./txtar,./cover,./go/buildutil",
}

func init() { cmdCorpus.run = runCorpus }

// corpusPkg is one package's outcome in both runs.
type corpusPkg struct {
	Module  string `json:"module"`
	Package string `json:"package"`
	Plain   string `json:"plain"`   // ok, FAIL, no tests
	Racekit string `json:"racekit"` // ok, FAIL, no tests, missing
	Races   int    `json:"races"`   // data races racekit reported
}

func runCorpus(c *command, args []string) int {
	specs := args
	if len(specs) == 0 {
		specs = append([]string{"self:" + defaultSelfPatterns}, defaultCorpus...)
	}
	self, err := os.Executable()
	if err != nil {
		c.errorf("%v", err)
		return exitError
	}
	work := *corpusKeep
	if work == "" {
		if work, err = os.MkdirTemp("", "racekit-corpus-"); err != nil {
			c.errorf("%v", err)
			return exitError
		}
		defer os.RemoveAll(work)
	} else if err := os.MkdirAll(work, 0o755); err != nil {
		c.errorf("%v", err)
		return exitError
	}
	var all []corpusPkg
	code := exitOK
	for i, spec := range specs {
		mod, dir, patterns, err := corpusModule(spec, filepath.Join(work, fmt.Sprintf("m%d", i)))
		if err != nil {
			c.errorf("%s: %v", spec, err)
			code = exitError
			continue
		}
		fmt.Fprintf(os.Stderr, "racekit corpus: %s: %s\n", mod, strings.Join(patterns, " "))
		start := time.Now()
		plain, plainOut, err := corpusRun(dir, "go", append([]string{"test", "-count=1", "-timeout=10m"}, patterns...))
		if err != nil {
			c.errorf("%s: go test: %v", mod, err)
			code = exitError
			continue
		}
		rkArgs := append([]string{"test"}, patterns...)
		rkArgs = append(rkArgs, "--", "-timeout=10m")
		rk, rkOut, err := corpusRun(dir, self, rkArgs)
		if err != nil {
			c.errorf("%s: racekit test: %v", mod, err)
			code = exitError
			continue
		}
		for _, log := range []struct {
			name string
			out  []byte
		}{{"plain", plainOut}, {"racekit", rkOut}} {
			_ = os.WriteFile(filepath.Join(work, fmt.Sprintf("m%d.%s.log", i, log.name)), log.out, 0o644)
			if *corpusV {
				fmt.Fprintf(os.Stderr, "--- %s, %s:\n%s", mod, log.name, log.out)
			}
		}
		fmt.Fprintf(os.Stderr, "racekit corpus: %s: done in %v\n", mod, time.Since(start).Round(time.Second))
		all = append(all, mergeCorpus(mod, plain, rk)...)
	}
	passing, kept := printCorpus(os.Stdout, all)
	if *corpusJSON != "" {
		b, _ := json.MarshalIndent(struct {
			Specs    []string    `json:"specs"`
			Packages []corpusPkg `json:"packages"`
			Passing  int         `json:"passing_plain"`
			Kept     int         `json:"passing_instrumented"`
		}{specs, all, passing, kept}, "", "  ")
		if err := os.WriteFile(*corpusJSON, append(b, '\n'), 0o644); err != nil {
			c.errorf("%v", err)
			code = exitError
		}
	}
	if kept < passing && code == exitOK {
		code = exitError
	}
	return code
}

// corpusModule makes the module of spec available in a writable directory
// and returns its path, its directory and the package patterns.
func corpusModule(spec, into string) (mod, dir string, patterns []string, err error) {
	mod, pats, _ := strings.Cut(spec, ":")
	patterns = []string{"./..."}
	if pats != "" {
		patterns = strings.Split(pats, ",")
	}
	if mod == "self" {
		dir, err = os.Getwd()
		return "self", dir, patterns, err
	}
	if !strings.Contains(mod, "@") {
		return "", "", nil, fmt.Errorf("want MODULE@VERSION[:PATTERNS] or self[:PATTERNS]")
	}
	out, err := exec.Command("go", "mod", "download", "-json", mod).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return "", "", nil, fmt.Errorf("go mod download: %v\n%s%s", err, out, ee.Stderr)
		}
		return "", "", nil, err
	}
	var info struct{ Dir, Error string }
	if err := json.Unmarshal(out, &info); err != nil {
		return "", "", nil, fmt.Errorf("go mod download: %v", err)
	}
	if info.Error != "" {
		return "", "", nil, fmt.Errorf("go mod download: %s", info.Error)
	}
	// A writable copy of the read-only module cache's files (a kept
	// -keep directory's earlier copy is replaced).
	if err := os.RemoveAll(into); err != nil {
		return "", "", nil, err
	}
	if err := os.CopyFS(into, os.DirFS(info.Dir)); err != nil {
		return "", "", nil, err
	}
	// The module's go.sum may lack entries for its tests' dependencies.
	tidy := exec.Command("go", "mod", "download", "all")
	tidy.Dir = into
	if out, err := tidy.CombinedOutput(); err != nil {
		return "", "", nil, fmt.Errorf("go mod download all: %v\n%s", err, out)
	}
	return mod, into, patterns, nil
}

// corpusRun runs a go test-like command in dir and returns each package's
// verdict from its output. A failing exit status is not an error: the
// verdicts say what failed.
func corpusRun(dir, name string, args []string) (map[string]pkgVerdict, []byte, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	out, err := cmd.CombinedOutput()
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			return nil, out, err
		}
	}
	v := parseGoTest(out)
	if len(v) == 0 && err != nil {
		return nil, out, fmt.Errorf("%v, and no package results in its output:\n%s", err, lastLines(out, 20))
	}
	return v, out, nil
}

type pkgVerdict struct {
	result string // ok, FAIL, no tests
	races  int
}

var (
	goTestOK     = regexp.MustCompile(`^ok\s+(\S+)\s`)
	goTestFail   = regexp.MustCompile(`^FAIL\s+(\S+)(\s+\[[^\]]*\]|\s+[0-9.]+s)?\s*$`)
	goTestNone   = regexp.MustCompile(`^\?\s+(\S+)\s+\[no test files\]`)
	racekitRaces = regexp.MustCompile(`^FAIL\s+(\S+)\s+\(racekit: (\d+) data races?\)`)
)

// parseGoTest reads go test's summary lines ("ok", "FAIL", "?") and
// racekit test's race lines.
func parseGoTest(out []byte) map[string]pkgVerdict {
	v := map[string]pkgVerdict{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := racekitRaces.FindStringSubmatch(line); m != nil {
			p := v[m[1]]
			fmt.Sscan(m[2], &p.races)
			v[m[1]] = p
			continue
		}
		var pkg, res string
		switch {
		case goTestOK.MatchString(line):
			pkg, res = goTestOK.FindStringSubmatch(line)[1], "ok"
		case goTestNone.MatchString(line):
			pkg, res = goTestNone.FindStringSubmatch(line)[1], "no tests"
		case goTestFail.MatchString(line):
			pkg, res = goTestFail.FindStringSubmatch(line)[1], "FAIL"
		default:
			continue
		}
		p := v[pkg]
		p.result = res
		v[pkg] = p
	}
	return v
}

func mergeCorpus(mod string, plain, rk map[string]pkgVerdict) []corpusPkg {
	var out []corpusPkg
	for pkg, p := range plain {
		if p.result == "" {
			continue
		}
		r, ok := rk[pkg]
		res := r.result
		if !ok || res == "" {
			res = "missing"
		}
		out = append(out, corpusPkg{Module: mod, Package: pkg, Plain: p.result, Racekit: res, Races: r.races})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Package < out[j].Package })
	return out
}

// printCorpus prints the table and the summary, and returns how many
// packages pass plainly and how many of those pass instrumented.
func printCorpus(w io.Writer, all []corpusPkg) (passing, kept int) {
	fmt.Fprintf(w, "%-60s %-9s %-9s %s\n", "package", "plain", "racekit", "races")
	for _, p := range all {
		mark := ""
		if p.Plain == "ok" {
			passing++
			if p.Racekit == "ok" {
				kept++
			} else {
				mark = "  BEHAVIOUR CHANGED"
			}
		}
		fmt.Fprintf(w, "%-60s %-9s %-9s %d%s\n", p.Package, p.Plain, p.Racekit, p.Races, mark)
	}
	share := 0.0
	if passing > 0 {
		share = 100 * float64(kept) / float64(passing)
	}
	fmt.Fprintf(w, "\n%d of %d packages whose tests pass plainly pass instrumented (%.1f%%)\n", kept, passing, share)
	return passing, kept
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
