// Package verdictdiff checks that racekit preserves behaviour: for each
// module of a corpus it runs the tests of the chosen packages with plain
// go test and with racekit test, and compares go test's verdict per
// package. A package counts when its plain tests pass; the share that
// also pass instrumented is the figure of merit (the target is 100%).
// Races racekit reports do not make a package fail here: only go test's
// own verdict counts. racekit corpus is a command over it.
//
// A module is given by a spec, MODULE@VERSION[:PATTERNS], fetched through
// the Go module proxy (go mod download) and copied to a writable
// directory, or self[:PATTERNS] for the current directory's module;
// PATTERNS is a comma-separated list of package patterns (./... by
// default). [Run] runs both over each spec and returns each package's
// pair of verdicts ([Package]); [Print] writes the table and the share.
//
// bench/corpus measures something else: go test -race against racekit
// test, test by test, over a pinned list of third-party modules.
package verdictdiff

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// DefaultSelf are racekit's own packages in the default corpus: the core
// (the runtime's dependencies among them), not the commands and harnesses
// whose tests build and run racekit themselves, nor the detectors'
// differential tests, whose instrumented runs record billions of events.
const DefaultSelf = "./trace,./trace/rkt,./trace/text,./finding,./report,./filter,./detect/shadow,./detect/vc,./detect/clock,./solver"

// DefaultModules are the third-party modules of the default corpus.
var DefaultModules = []string{
	"golang.org/x/sync@v0.24.0",
	"golang.org/x/mod@v0.42.0:./semver,./module,./modfile,./sumdb/note,./sumdb/dirhash,./sumdb/tlog",
	"golang.org/x/tools@v0.52.0:./container/intsets,./go/ast/astutil,./go/ast/inspector,./go/types/typeutil,./go/cfg,./txtar,./cover,./go/buildutil",
}

// DefaultSpecs is the default corpus: self:DefaultSelf, then
// DefaultModules.
func DefaultSpecs() []string {
	return append([]string{"self:" + DefaultSelf}, DefaultModules...)
}

// Options are a comparison's.
type Options struct {
	// Specs are the modules (DefaultSpecs when empty).
	Specs []string
	// Racekit is the racekit binary whose test command runs the tests
	// instrumented.
	Racekit string
	// Work holds the module copies and the runs' logs (mN.plain.log,
	// mN.racekit.log); "" means a temporary directory, removed.
	Work string
	// Logf, when not nil, receives the progress lines (a module's
	// patterns, its time) and each module's error as it happens.
	Logf func(format string, args ...any)
	// Output, when not nil, receives both runs' output of each module.
	Output io.Writer
}

// Package is one package's outcome in both runs.
type Package struct {
	Module  string `json:"module"`
	Package string `json:"package"`
	Plain   string `json:"plain"`   // ok, FAIL, no tests
	Racekit string `json:"racekit"` // ok, FAIL, no tests, missing
	Races   int    `json:"races"`   // data races racekit reported
}

// Result is a comparison's outcome; its JSON form is WriteJSON's.
type Result struct {
	Specs    []string  `json:"specs"`
	Packages []Package `json:"packages"`
	// Passing counts the packages whose tests pass plainly, Kept those of
	// them that pass instrumented.
	Passing int `json:"passing_plain"`
	Kept    int `json:"passing_instrumented"`
	// Errors are the modules that could not be compared (fetched, or
	// their tests run), each already given to Options.Logf.
	Errors []error `json:"-"`
}

// Run compares the plain and instrumented verdicts of each spec's
// packages. A module's error leaves it out (Result.Errors); the error
// returned is the work directory's.
func Run(opts Options) (*Result, error) {
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	res := &Result{Specs: opts.Specs}
	if len(res.Specs) == 0 {
		res.Specs = DefaultSpecs()
	}
	work := opts.Work
	if work == "" {
		var err error
		if work, err = os.MkdirTemp("", "racekit-corpus-"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(work)
	} else if err := os.MkdirAll(work, 0o755); err != nil {
		return nil, err
	}
	for i, spec := range res.Specs {
		pkgs, err := runModule(spec, filepath.Join(work, fmt.Sprintf("m%d", i)), &opts)
		if err != nil {
			opts.Logf("%v", err)
			res.Errors = append(res.Errors, err)
			continue
		}
		res.Packages = append(res.Packages, pkgs...)
	}
	res.Passing, res.Kept = tally(res.Packages)
	return res, nil
}

// runModule fetches spec's module into the directory into (for self, it
// uses the current directory), runs its tests plainly and instrumented,
// keeps both logs beside into (into.plain.log, into.racekit.log) and
// returns the packages' verdicts.
func runModule(spec, into string, opts *Options) ([]Package, error) {
	mod, dir, patterns, err := fetch(spec, into)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", spec, err)
	}
	opts.Logf("%s: %s", mod, strings.Join(patterns, " "))
	start := time.Now()
	plain, plainOut, err := goTest(dir, "go", append([]string{"test", "-count=1", "-timeout=10m"}, patterns...))
	if err != nil {
		return nil, fmt.Errorf("%s: go test: %v", mod, err)
	}
	rkArgs := append([]string{"test"}, patterns...)
	rkArgs = append(rkArgs, "--", "-timeout=10m")
	rk, rkOut, err := goTest(dir, opts.Racekit, rkArgs)
	if err != nil {
		return nil, fmt.Errorf("%s: racekit test: %v", mod, err)
	}
	for _, log := range []struct {
		name string
		out  []byte
	}{{"plain", plainOut}, {"racekit", rkOut}} {
		_ = os.WriteFile(fmt.Sprintf("%s.%s.log", into, log.name), log.out, 0o644)
		if opts.Output != nil {
			fmt.Fprintf(opts.Output, "--- %s, %s:\n%s", mod, log.name, log.out)
		}
	}
	opts.Logf("%s: done in %v", mod, time.Since(start).Round(time.Second))
	return merge(mod, plain, rk), nil
}
