package instrument

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"

	"golang.org/x/tools/go/packages"
)

// Config says what to instrument.
type Config struct {
	Dir        string   // directory the go command runs in; "" is the current one
	Patterns   []string // package patterns, as for go build/test
	Tests      bool     // include the packages' tests
	Include    []string // import-path patterns ("..." wildcard) traced besides the main module's packages
	Deps       bool     // trace every package of the build outside the standard library, as go test -race instruments them all
	Exclude    []string // import-path patterns never traced
	BuildFlags []string // flags for the go command's package loading (-tags=...)
	CacheDir   string   // "" means $RACEKIT_CACHE, else os.UserCacheDir()/racekit
	Root       string   // racekit's source tree; "" means FindRoot
	Log        io.Writer
	// Status, if not nil, is kept up to date with the step Prepare is in,
	// for progress lines.
	Status *Status
	// NoAllocHook builds without the Go runtime's allocation hook
	// (runtimehook.go), as RACEKIT_ALLOC_HOOK=0 does: for comparisons.
	NoAllocHook bool
	// Toolexec, if not nil, returns the -toolexec that the build after
	// Prepare will give the go command, for the overlay Prepare wrote:
	// Prepare's own compile of the dependencies (unbuildable) runs under
	// it too, since go keys its cache on the tools' versions as the
	// -toolexec reports them (racekit test's: vetoriginals.Version), and
	// the build would otherwise compile every package a second time.
	Toolexec func(overlay string) (string, error)

	work    string            // the go.work file in use ("" in module mode)
	raceSrc map[string][]byte // files outside std with the race tag's meaning (racetag.go)
	deps    []string          // the targets outside the main modules
	// broken are the packages whose instrumented code did not compile,
	// left untraced (Prepare): unlike Exclude's, the calls into them
	// keep rt.DepBefore and DepAfter's order (depReceiver), as any
	// untraced dependency's.
	broken []string
	roots  map[string]bool // the packages the patterns name (whose tests go test builds)
}

// Skip is a package left uninstrumented, and why.
type Skip struct {
	Pkg    string
	Reason string
}

// Prepared is what a build needs: go build/test -overlay=Overlay
// -modfile=ModFile, with Env added to the environment. In workspace mode
// there is no ModFile: the overlay replaces the go.work file instead.
type Prepared struct {
	Overlay      string
	ModFile      string   // "" in workspace mode
	Env          []string // GOWORK=off (-modfile does not work in workspace mode), or GOWORK=<the go.work file>
	Instrumented []string // import paths (test variants included once)
	Files        int      // instrumented files
	Skipped      []Skip

	modMod bool // -mod=mod: a vendored module built from copies of its vendored modules (vendor.go)
	// deps are the instrumented packages Prepare compiles to leave
	// untraced those the compiler rejects (unbuildable): those outside
	// the main modules, and the main modules' that use cgo (cgo.go's
	// rewrite is the least certain; their other errors the user sees).
	deps []string
}

// BuildArgs returns the go command flags that make a build see the
// instrumented files and the runtime.
func (p *Prepared) BuildArgs() []string {
	if p.ModFile == "" {
		return []string{"-overlay=" + p.Overlay}
	}
	if p.modMod {
		return []string{"-overlay=" + p.Overlay, "-modfile=" + p.ModFile, "-mod=mod"}
	}
	return []string{"-overlay=" + p.Overlay, "-modfile=" + p.ModFile}
}

// CacheDir returns the cache directory: $RACEKIT_CACHE, else racekit under
// the user's cache directory.
func CacheDir() (string, error) {
	if d := os.Getenv("RACEKIT_CACHE"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory (set RACEKIT_CACHE): %v", err)
	}
	return filepath.Join(d, "racekit"), nil
}

// FindRoot returns racekit's source tree, from which the runtime is copied:
// $RACEKIT_ROOT if set, else the tree this package was compiled from (the
// path the compiler recorded for this file: a checkout, or the module
// cache for go install ...@version).
func FindRoot() (string, error) {
	if d := os.Getenv("RACEKIT_ROOT"); d != "" {
		if err := checkRoot(d); err != nil {
			return "", fmt.Errorf("RACEKIT_ROOT: %v", err)
		}
		return d, nil
	}
	_, file, _, ok := runtime.Caller(0)
	if ok && filepath.IsAbs(file) {
		d := filepath.Dir(filepath.Dir(file))
		if checkRoot(d) == nil {
			return d, nil
		}
	}
	return "", errors.New("cannot find racekit's source tree (the runtime is copied from it): set RACEKIT_ROOT to the directory holding racekit's go.mod")
}

func checkRoot(d string) error {
	for _, f := range []string{"go.mod", "rt/rt.go", "rt/rttest/rttest.go", "trace/event.go", "trace/rkt/writer.go"} {
		if _, err := os.Stat(filepath.Join(d, f)); err != nil {
			return fmt.Errorf("%s is not racekit's source tree: %v", d, err)
		}
	}
	return nil
}

func (c *Config) logf(format string, args ...any) {
	if c.Log != nil {
		fmt.Fprintf(c.Log, format, args...)
	}
}

// goEnv returns the environment for the go command: in module mode
// GOWORK=off, since -modfile is refused in workspace mode.
func (c *Config) goEnv() []string {
	if c.work != "" {
		return append(os.Environ(), "GOWORK="+c.work)
	}
	return append(os.Environ(), "GOWORK=off")
}

// goEnvVar returns the go command's value of the variable name in dir.
func goEnvVar(dir string, env []string, name string) (string, error) {
	cmd := exec.Command("go", "env", name)
	cmd.Dir = dir
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go env %s: %v", name, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// workFile returns the go.work file the go command uses in dir ("" for
// none).
func workFile(dir string) (string, error) {
	p, err := goEnvVar(dir, nil, "GOWORK")
	if err != nil {
		return "", err
	}
	if p == "off" {
		p = ""
	}
	return p, nil
}

// Prepare instruments the packages the patterns build (with their tests
// if cfg.Tests) that belong to the main module or match cfg.Include, and
// writes, under the cache directory, the instrumented files, a copy of the
// runtime as module RTModule, an alternate go.mod (the user's, plus a
// requirement of the runtime replaced by that copy) with its go.sum, and
// the overlay file. The user's files are only read.
func Prepare(cfg Config) (*Prepared, error) {
	var broken []Skip
	for {
		prep, err := prepareOnce(cfg)
		if err != nil {
			return nil, err
		}
		if len(prep.deps) == 0 {
			prep.Skipped = append(prep.Skipped, broken...)
			return prep, nil
		}
		failed, err := unbuildable(&cfg, prep)
		if err != nil {
			return nil, err
		}
		failed = ours(&cfg, failed)
		if len(failed) == 0 || len(broken) >= maxBrokenDeps {
			prep.Skipped = append(prep.Skipped, broken...)
			return prep, nil
		}
		for _, f := range failed {
			cfg.broken = append(cfg.broken, f.Pkg)
			broken = append(broken, f)
			cfg.logf("racekit: not traced: %s: its instrumented code does not compile (a racekit bug; please report it): %s\n", f.Pkg, f.Reason)
		}
	}
}

// maxBrokenDeps bounds the dependency packages left untraced because their
// instrumented code does not compile, one build each.
const maxBrokenDeps = 8

// unbuildable compiles the instrumented dependency packages (go build,
// whose cache the test build then reuses) and returns those the compiler
// rejects, with the first error of each: a dependency racekit cannot
// instrument is left untraced rather than failing the user's build. The
// main modules' packages are not checked, but for those that use cgo
// (Prepared.deps): their errors are the user's to see.
func unbuildable(cfg *Config, prep *Prepared) ([]Skip, error) {
	cfg.Status.set(fmt.Sprintf("compiling %d instrumented dependency packages (go build)", len(prep.deps)), 0)
	args := append(append([]string{"build"}, prep.BuildArgs()...), cfg.BuildFlags...)
	if cfg.Toolexec != nil {
		te, err := cfg.Toolexec(prep.Overlay)
		if err != nil {
			return nil, err
		}
		args = append(args, "-toolexec="+te)
	}
	cmd := exec.Command("go", append(args, prep.deps...)...)
	cmd.Dir = cfg.Dir
	cmd.Env = append(cfg.goEnv(), prep.Env...)
	out, err := cmd.CombinedOutput()
	if err == nil {
		return nil, nil
	}
	return failedPackages(string(out), prep.deps), nil
}

// ours returns the packages of failed that compile without racekit. The
// others fail go test as they fail go test -race, traced or not (an old
// golang.org/x/tools' tokeninternal, whose check of go/token.FileSet's size
// fails under Go 1.26 though go/types, at Prepare's load, computes it
// equal): leaving them untraced would cost another round of Prepare and
// blame racekit for them. One plain go build of failed, in the user's
// environment.
func ours(cfg *Config, failed []Skip) []Skip {
	if len(failed) == 0 {
		return nil
	}
	var pkgs []string
	for _, f := range failed {
		pkgs = append(pkgs, f.Pkg)
	}
	cmd := exec.Command("go", append(append([]string{"build"}, cfg.BuildFlags...), pkgs...)...)
	cmd.Dir = cfg.Dir
	out, err := cmd.CombinedOutput()
	if err == nil {
		return failed
	}
	anyway := map[string]bool{}
	for _, f := range failedPackages(string(out), pkgs) {
		anyway[f.Pkg] = true
	}
	var keep []Skip
	for _, f := range failed {
		if !anyway[f.Pkg] {
			keep = append(keep, f)
		}
	}
	return keep
}

// failedPackages reads go build's output: the packages among deps it
// names in a "# path" header, each with the first line under it.
func failedPackages(out string, deps []string) []Skip {
	isDep := map[string]bool{}
	for _, d := range deps {
		isDep[d] = true
	}
	var failed []Skip
	cur := false
	for _, line := range strings.Split(out, "\n") {
		if pkg, ok := strings.CutPrefix(line, "# "); ok {
			pkg, _, _ = strings.Cut(pkg, " ")
			if cur = isDep[pkg]; cur {
				failed = append(failed, Skip{Pkg: pkg})
			}
			continue
		}
		if cur && failed[len(failed)-1].Reason == "" {
			failed[len(failed)-1].Reason = strings.TrimSpace(line)
		}
	}
	return failed
}

func prepareOnce(cfg Config) (*Prepared, error) {
	if cfg.CacheDir == "" {
		d, err := CacheDir()
		if err != nil {
			return nil, err
		}
		cfg.CacheDir = d
	}
	if cfg.Root == "" {
		d, err := FindRoot()
		if err != nil {
			return nil, err
		}
		cfg.Root = d
	}
	// In a workspace, the runtime copy joins it: the overlay gives the go
	// command a go.work that also uses the copy (-modfile is refused in
	// workspace mode). Otherwise an alternate go.mod requires the copy.
	work, err := workFile(cfg.Dir)
	if err != nil {
		return nil, err
	}
	cfg.work = work
	gomod := work // its go line is the runtime copy's
	if work == "" {
		if gomod, err = goModPath(cfg.Dir); err != nil {
			return nil, err
		}
	}
	modGo, err := moduleGoVersion(gomod)
	if err != nil {
		return nil, err
	}
	rtDir, err := copyRuntime(cfg.Root, cfg.CacheDir, modGo)
	if err != nil {
		return nil, err
	}
	targets, skipped, err := selectPackages(&cfg)
	if err != nil {
		return nil, err
	}
	prep := &Prepared{Env: []string{"GOWORK=off"}, Skipped: skipped, deps: cfg.deps}
	if work != "" {
		prep.Env = []string{"GOWORK=" + work}
	}
	overlay := map[string]string{}
	for name, src := range cfg.raceSrc { // instrumented files replace theirs below
		if overlay[name], err = writeCached(cfg.CacheDir, "files", ".go", src); err != nil {
			return nil, err
		}
	}
	deps := map[string]*depModule{}
	if len(targets) > 0 {
		if err := instrumentPackages(&cfg, targets, overlay, deps, prep); err != nil {
			return nil, err
		}
	}
	replaces, err := copyDeps(cfg.CacheDir, deps)
	if err != nil {
		return nil, err
	}
	if cfg.work != "" {
		overlay[cfg.work], err = writeWorkFile(cfg.work, rtDir, cfg.CacheDir, replaces)
	} else {
		var vendored string
		if vendorMode(gomod, modGo) {
			if vendored, err = vendorDirectives(gomod, cfg.CacheDir); err != nil {
				return nil, fmt.Errorf("vendor directory: %v", err)
			}
			prep.modMod = true
		}
		prep.ModFile, err = writeModFile(gomod, rtDir, cfg.CacheDir, replaces, vendored)
	}
	if err != nil {
		return nil, err
	}
	note, err := allocHookOverlay(&cfg, rtDir, overlay)
	if err != nil {
		return nil, fmt.Errorf("the runtime's allocation hook: %v", err)
	}
	if note != "" && cfg.Log != nil {
		fmt.Fprintln(cfg.Log, note)
	}
	ov, err := writeOverlay(cfg.CacheDir, overlay)
	if err != nil {
		return nil, err
	}
	prep.Overlay = ov
	return prep, nil
}

func goModPath(dir string) (string, error) {
	p, err := goEnvVar(dir, append(os.Environ(), "GOWORK=off"), "GOMOD")
	if err != nil {
		return "", err
	}
	if p == "" || p == os.DevNull {
		return "", errors.New("not in a Go module: racekit builds the main module's packages with an alternate go.mod")
	}
	return p, nil
}

// matchPattern reports whether import path p matches pattern pat, where
// "..." matches any string (as in go list patterns).
func matchPattern(pat, p string) bool {
	if !strings.Contains(pat, "...") {
		return pat == p
	}
	parts := strings.Split(pat, "...")
	if !strings.HasPrefix(p, parts[0]) {
		return false
	}
	rest := p[len(parts[0]):]
	for i, part := range parts[1:] {
		if i == len(parts)-2 {
			return strings.HasSuffix(rest, part)
		}
		j := strings.Index(rest, part)
		if j < 0 {
			return false
		}
		rest = rest[j+len(part):]
	}
	return true
}

func matchAny(pats []string, p string) bool {
	for _, pat := range pats {
		if matchPattern(pat, p) {
			return true
		}
	}
	return false
}

// neverTraced are packages racekit's runtime is made of.
func neverTraced(p string) bool {
	return p == RTModule || strings.HasPrefix(p, RTModule+"/")
}

// selectPackages lists (cheaply, without type checking) the packages the
// patterns build and picks the ones to trace.
func selectPackages(cfg *Config) (targets []string, skipped []Skip, err error) {
	cfg.Status.set("listing packages and their dependencies (go list)", 0)
	lcfg := &packages.Config{
		Mode:       packages.NeedName | packages.NeedModule | packages.NeedImports | packages.NeedDeps | packages.NeedFiles,
		Dir:        cfg.Dir,
		Env:        cfg.goEnv(),
		BuildFlags: cfg.BuildFlags,
		Tests:      cfg.Tests,
	}
	pkgs, err := packages.Load(lcfg, cfg.Patterns...)
	if err != nil {
		return nil, nil, fmt.Errorf("loading packages: %v", err)
	}
	seen := map[string]bool{}
	set := map[string]bool{}
	cfg.roots = map[string]bool{}
	for _, p := range pkgs {
		cfg.roots[strings.TrimSuffix(p.PkgPath, "_test")] = true
	}
	var userFiles []string // the .go files of packages outside std and racekit, those constraints leave out too
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		if p.PkgPath == "" || strings.HasSuffix(p.ID, ".test") { // the generated test main
			return
		}
		main := p.Module != nil && p.Module.Main
		std := p.Module == nil && stdPath(p.PkgPath)
		if !std && !neverTraced(p.PkgPath) {
			// Every variant: a test variant has the test files. Traced
			// or not, as go test -race builds them all with the tag.
			userFiles = append(append(userFiles, p.GoFiles...), p.IgnoredFiles...)
		}
		if seen[p.PkgPath] || !(main || cfg.Deps && !std || matchAny(cfg.Include, p.PkgPath)) || neverTraced(p.PkgPath) {
			return
		}
		seen[p.PkgPath] = true
		// An external test package (p_test) stands for p: its files
		// are loaded with p's.
		base := strings.TrimSuffix(p.PkgPath, "_test")
		switch {
		case matchAny(cfg.Exclude, base):
			skipped = append(skipped, Skip{p.PkgPath, "excluded"})
		case slices.Contains(cfg.broken, base):
			// Reported by Prepare, with the compiler's error.
		case std:
			skipped = append(skipped, Skip{p.PkgPath, "standard library"})
		default:
			set[strings.TrimSuffix(p.PkgPath, "_test")] = main
		}
	})
	for p, main := range set {
		targets = append(targets, p)
		if !main {
			cfg.deps = append(cfg.deps, p)
		}
	}
	sort.Strings(cfg.deps)
	sort.Strings(targets)
	modCache, err := goEnvVar(cfg.Dir, cfg.goEnv(), "GOMODCACHE")
	if err != nil {
		return nil, nil, err
	}
	if cfg.raceSrc, err = raceOverlay(userFiles, modCache); err != nil {
		return nil, nil, err
	}
	return targets, skipped, nil
}

// usesCgo reports whether the go command compiles files of p that are not
// its Go files (cgo's generated files).
func usesCgo(p *packages.Package) bool {
	src := map[string]bool{}
	for _, f := range p.GoFiles {
		src[f] = true
	}
	for _, f := range p.CompiledGoFiles {
		if !src[f] {
			return true
		}
	}
	return false
}
