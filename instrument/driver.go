package instrument

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/doc"
	"go/types"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
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
	// NoAllocHook builds without the Go runtime's allocation hook
	// (runtimehook.go), as RACEKIT_ALLOC_HOOK=0 does: for comparisons.
	NoAllocHook bool

	work    string            // the go.work file in use ("" in module mode)
	raceSrc map[string][]byte // files outside std with the race tag's meaning (racetag.go)
	deps    []string          // the targets outside the main modules
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

	modMod bool     // -mod=mod: a vendored module built from copies of its vendored modules (vendor.go)
	deps   []string // the instrumented packages outside the main modules
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
		if err != nil || len(prep.deps) == 0 {
			return prep, err
		}
		failed := unbuildable(&cfg, prep)
		if len(failed) == 0 || len(broken) >= maxBrokenDeps {
			prep.Skipped = append(prep.Skipped, broken...)
			return prep, nil
		}
		for _, f := range failed {
			cfg.Exclude = append(cfg.Exclude, f.Pkg)
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
// main modules' packages are not checked: their errors are the user's to
// see.
func unbuildable(cfg *Config, prep *Prepared) []Skip {
	args := append(append([]string{"build"}, prep.BuildArgs()...), cfg.BuildFlags...)
	cmd := exec.Command("go", append(args, prep.deps...)...)
	cmd.Dir = cfg.Dir
	cmd.Env = append(cfg.goEnv(), prep.Env...)
	out, err := cmd.CombinedOutput()
	if err == nil {
		return nil
	}
	return failedPackages(string(out), prep.deps)
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
		switch {
		case matchAny(cfg.Exclude, p.PkgPath):
			skipped = append(skipped, Skip{p.PkgPath, "excluded"})
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

// instrumentPackages type-checks the targets and instruments their files.
func instrumentPackages(cfg *Config, targets []string, overlay map[string]string, deps map[string]*depModule, prep *Prepared) error {
	pkgs, err := loadPackages(cfg, targets)
	if err != nil {
		return err
	}
	// Calls into packages outside this set are BarrierPairs (barrier.go).
	traced := map[string]bool{}
	for _, p := range pkgs {
		if len(p.Errors) == 0 && len(p.TypeErrors) == 0 && !usesCgo(p) {
			traced[strings.TrimSuffix(p.PkgPath, "_test")] = true
		}
	}
	in := &pkgInstrumenter{
		cfg:          cfg,
		overlay:      overlay,
		deps:         deps,
		prep:         prep,
		isTraced:     func(path string) bool { return traced[path] },
		excluded:     func(path string) bool { return matchAny(cfg.Exclude, path) },
		done:         map[string]bool{},
		instrumented: map[string]bool{},
		tests:        newPkgTests(),
	}
	for _, p := range pkgs {
		if err := in.instrumentPackage(p); err != nil {
			return err
		}
	}
	if err := in.addTestMains(); err != nil {
		return err
	}
	sort.Strings(prep.Instrumented)
	return nil
}

// loadPackages loads and type-checks the targets, non-test variants first.
func loadPackages(cfg *Config, targets []string) ([]*packages.Package, error) {
	lcfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedCompiledGoFiles | packages.NeedSyntax |
			packages.NeedTypes | packages.NeedTypesInfo | packages.NeedModule,
		Dir:        cfg.Dir,
		Env:        cfg.goEnv(),
		BuildFlags: cfg.BuildFlags,
		Tests:      cfg.Tests,
		Overlay:    cfg.raceSrc,
	}
	pkgs, err := packages.Load(lcfg, targets...)
	if err != nil {
		return nil, fmt.Errorf("loading packages: %v", err)
	}
	// Non-test variants first, so that a package's own files are
	// instrumented with its own type information.
	sort.SliceStable(pkgs, func(i, j int) bool {
		return !strings.Contains(pkgs[i].ID, "[") && strings.Contains(pkgs[j].ID, "[")
	})
	return pkgs, nil
}

// pkgTests is what instrumentPackages learns of the packages' test files,
// to give each test binary what finishes its trace (addTestMains).
type pkgTests struct {
	hasTests    map[string]string // package path → package name, for packages with test files
	hasSrc      map[string]bool   // package path → it has non-test files
	extName     map[string]string // package path → the name of its external test package, if any
	hasTestMain map[string]bool   // package path (without _test) → TestMain defined
	runsM       map[string]bool   // package path (without _test) → its TestMain calls m.Run itself
	hasExample  map[string]bool   // package path (without _test) → an example go test runs
	testDir     map[string]string // package path → directory
}

// newPkgTests returns an empty pkgTests.
func newPkgTests() *pkgTests {
	return &pkgTests{
		hasTests:    map[string]string{},
		hasSrc:      map[string]bool{},
		extName:     map[string]string{},
		hasTestMain: map[string]bool{},
		runsM:       map[string]bool{},
		hasExample:  map[string]bool{},
		testDir:     map[string]string{},
	}
}

// note records what the file f (named name) of package p, whose path
// without _test is base, tells of its package's tests. Files of
// dependencies (inDep) count for nothing.
func (t *pkgTests) note(p *packages.Package, base string, f *ast.File, name string, isTest, inDep bool) {
	if !isTest && !inDep {
		t.hasSrc[base] = true
	}
	if isTest && !inDep && strings.HasSuffix(p.Name, "_test") {
		t.extName[base] = p.Name
	}
	if isTest && !inDep {
		t.hasTests[base] = strings.TrimSuffix(p.Name, "_test")
		t.testDir[base] = filepath.Dir(name)
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.Name == "TestMain" {
				t.hasTestMain[base] = true
				if callsMRun(fd, p.TypesInfo) {
					t.runsM[base] = true
				}
			}
		}
		for _, ex := range doc.Examples(f) {
			if ex.Output != "" || ex.EmptyOutput { // go test runs it
				t.hasExample[base] = true
			}
		}
	}
}

// pkgInstrumenter is the state of instrumentPackages: where the
// instrumented files go (overlay, deps), what prep reports, and the files
// and packages done so far.
type pkgInstrumenter struct {
	cfg      *Config
	overlay  map[string]string
	deps     map[string]*depModule
	prep     *Prepared
	isTraced func(path string) bool
	excluded func(path string) bool

	done         map[string]bool // files instrumented (or left as they are) already
	instrumented map[string]bool // package paths in prep.Instrumented
	tests        *pkgTests
}

// instrumentPackage instruments the files of package p, or reports it
// skipped if it does not type-check or uses cgo.
func (in *pkgInstrumenter) instrumentPackage(p *packages.Package) error {
	if strings.HasSuffix(p.ID, ".test") && !strings.Contains(p.ID, "[") {
		return nil // generated test main
	}
	base := strings.TrimSuffix(p.PkgPath, "_test")
	if len(p.Errors) > 0 || len(p.TypeErrors) > 0 {
		msg := "does not type-check"
		if len(p.Errors) > 0 {
			msg = p.Errors[0].Msg
		}
		in.prep.Skipped = append(in.prep.Skipped, Skip{p.ID, msg})
		return nil
	}
	if usesCgo(p) {
		in.prep.Skipped = append(in.prep.Skipped, Skip{p.ID, "uses cgo"})
		return nil
	}
	for i, f := range p.Syntax {
		if i >= len(p.CompiledGoFiles) {
			break
		}
		name := p.CompiledGoFiles[i]
		isTest := strings.HasSuffix(name, "_test.go")
		inDep := p.Module != nil && !p.Module.Main && p.Module.Dir != "" && strings.HasPrefix(name, p.Module.Dir+string(filepath.Separator))
		in.tests.note(p, base, f, name, isTest, inDep)
		if in.done[name] || !strings.HasSuffix(name, ".go") {
			continue
		}
		in.done[name] = true
		if err := in.instrumentFile(p, base, f, name, isTest, inDep); err != nil {
			return err
		}
	}
	return nil
}

// instrumentFile instruments the file f (named name) of package p and
// puts the result in the overlay or, for a dependency's file (inDep), in
// its module's copy. A file the rewriter fails on is left as it is, and
// reported skipped.
func (in *pkgInstrumenter) instrumentFile(p *packages.Package, base string, f *ast.File, name string, isTest, inDep bool) error {
	cfg, prep := in.cfg, in.prep
	src, ok := cfg.raceSrc[filepath.Clean(name)]
	if !ok {
		var err error
		if src, err = os.ReadFile(name); err != nil {
			return err
		}
	}
	res, err := File(FileInput{Fset: p.Fset, File: f, Src: src, Info: p.TypesInfo, Pkg: p.Types, Path: name, IsTest: isTest, Traced: in.isTraced, Excluded: in.excluded})
	if err != nil {
		prep.Skipped = append(prep.Skipped, Skip{p.ID, err.Error()})
		cfg.logf("racekit: %v (file left uninstrumented)\n", err)
		return nil
	}
	if !res.Changed {
		return nil
	}
	modGo := ""
	if p.Module != nil {
		modGo = p.Module.GoVersion
	}
	if res.Src, err = hookGoSrc(res.Src, modGo); err != nil {
		prep.Skipped = append(prep.Skipped, Skip{p.ID, fmt.Sprintf("%s: %v", name, err)})
		cfg.logf("racekit: %s: %v (file left uninstrumented)\n", name, err)
		return nil
	}
	// A dependency replaced by a directory (replace m => ../m) is
	// overlaid as the main module is: a second replacement of it
	// would conflict with the user's.
	if m := p.Module; inDep && !(m.Replace != nil && m.Replace.Version == "") {
		// A dependency's files are in the module cache, which an
		// overlay may not replace: the module is copied instead.
		d := in.deps[m.Path]
		if d == nil {
			d = &depModule{path: m.Path, dir: m.Dir, files: map[string][]byte{}}
			in.deps[m.Path] = d
		}
		d.files[name[len(m.Dir)+1:]] = res.Src
	} else {
		dst, err := writeCached(cfg.CacheDir, "files", ".go", res.Src)
		if err != nil {
			return err
		}
		in.overlay[name] = dst
	}
	prep.Files++
	if !in.instrumented[base] {
		in.instrumented[base] = true
		prep.Instrumented = append(prep.Instrumented, base)
	}
	return nil
}

// addTestMains gives the test binaries what finishes their traces: a
// TestMain, or checkpoints, in a generated file of the overlay.
func (in *pkgInstrumenter) addTestMains() error {
	t := in.tests
	// A test binary must finish its trace when it exits: packages without a
	// TestMain get one, unless they have examples, which run on the main
	// goroutine under m.Run and would see it on their stacks: then the
	// trace is checkpointed at the end of each test instead (an init
	// function calls rttest.Checkpoints; rt/checkpoint.go). So is it when
	// the package's TestMain hands m to untraced code
	// (goleak.VerifyTestMain(m)), which calls m.Run and os.Exit where no
	// hook of racekit's finishes the trace.
	for pkg, name := range t.hasTests {
		if t.hasTestMain[pkg] && t.runsM[pkg] {
			continue
		}
		if !t.hasSrc[pkg] && t.extName[pkg] != "" {
			// A directory of external tests alone (package x_test, no
			// package x): the file joins them, or it would make a
			// package of test files only, which go vet refuses.
			name = t.extName[pkg]
		}
		src := fmt.Sprintf(testMainSrc, name, RTModule+"/rt", RTModule+"/rt/rttest")
		if t.hasExample[pkg] || t.hasTestMain[pkg] {
			src = fmt.Sprintf(checkpointsSrc, name, RTModule+"/rt/rttest")
		}
		dst, err := writeCached(in.cfg.CacheDir, "files", ".go", []byte(src))
		if err != nil {
			return err
		}
		in.overlay[filepath.Join(t.testDir[pkg], "zz_racekit_testmain_test.go")] = dst
	}
	return nil
}

const testMainSrc = `// Code generated by racekit. DO NOT EDIT.

package %s

import (
	"testing"

	_rk %q
	_rkt %q
)

// TestMain finishes racekit's trace when the tests are done.
func TestMain(m *testing.M) { _rk.Exit(_rkt.MRunDone(m.Run(), 0)) }
`

const checkpointsSrc = `// Code generated by racekit. DO NOT EDIT.

package %s

import _rkt %q

// The package has examples: no TestMain, whose frame they would see. The
// trace is checkpointed at the end of every test instead.
func init() { _rkt.Checkpoints() }
`

// callsMRun reports whether the body of TestMain fd calls Run on a
// *testing.M itself (the rewriter hooks that call: rttest.MRunDone).
func callsMRun(fd *ast.FuncDecl, info *types.Info) bool {
	found := false
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || found {
			return !found
		}
		se, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || se.Sel.Name != "Run" {
			return true
		}
		if sel := info.Selections[se]; sel != nil {
			if fn, ok := sel.Obj().(*types.Func); ok && methodKey(fn) == "testing.M.Run" {
				found = true
			}
		}
		return !found
	})
	return found
}

// writeCached stores data under dir/kind/<hash><ext> (once: the name is
// the content's hash) and returns the path.
func writeCached(cache, kind, ext string, data []byte) (string, error) {
	h := sha256.Sum256(data)
	dir := filepath.Join(cache, kind)
	p := filepath.Join(dir, hex.EncodeToString(h[:16])+ext)
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return "", err
	}
	return p, writeAtomic(p, data)
}

func writeAtomic(p string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), p)
}

func writeOverlay(cache string, m map[string]string) (string, error) {
	data, err := json.MarshalIndent(struct{ Replace map[string]string }{m}, "", "\t")
	if err != nil {
		return "", err
	}
	return writeCached(cache, "overlay", ".json", data)
}

// runtimeDirs are the packages of racekit's runtime (relative to the source
// root): rt, rt/rttest and the std-only packages they import (the trace
// codec, the scheduler's strategies, the filters rt applies while
// recording, and the shadow memory TREE keeps its addresses in). A
// directory a source tree lacks is left out.
var runtimeDirs = []string{"rt", "rt/rttest", "trace", "trace/rkt", "sched", "filter", "filter/sample", "filter/tree", "detect/shadow"}

// runtimeFiles lists the files of racekit's runtime, relative to the
// source root.
func runtimeFiles(root string) ([]string, error) {
	var files []string
	for _, dir := range runtimeDirs {
		ents, err := os.ReadDir(filepath.Join(root, dir))
		if errors.Is(err, fs.ErrNotExist) && dir != "rt" {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			n := e.Name()
			if e.IsDir() || strings.HasSuffix(n, "_test.go") || n == "mkatomic.go" {
				continue
			}
			if strings.HasSuffix(n, ".go") || strings.HasSuffix(n, ".s") {
				files = append(files, path.Join(dir, n))
			}
		}
	}
	return files, nil
}

// copyRuntime writes the runtime under cache/rt/<hash> as module RTModule
// (imports of racekit's packages renamed), so that a user's build needs no
// requirement beyond it, and returns its directory. Its go.mod has the
// main module's go line, goVersion ("" for none): a dependency may not ask
// for a newer Go than the main module. When that is older than
// minRuntimeGo, each Go file gets a go1.N constraint, which raises its
// language version alone (goversion.go).
func copyRuntime(root, cache, goVersion string) (string, error) {
	files, err := runtimeFiles(root)
	if err != nil {
		return "", fmt.Errorf("copying racekit's runtime: %v", err)
	}
	mod := "module " + RTModule + "\n"
	if goVersion != "" {
		mod += "\ngo " + goVersion + "\n"
	}
	raise := langBefore(goVersion, minRuntimeGo)
	contents := map[string][]byte{"go.mod": []byte(mod)}
	h := sha256.New()
	h.Write(contents["go.mod"])
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			return "", err
		}
		data = bytes.ReplaceAll(data, []byte(`"github.com/racekit/racekit/`), []byte(`"`+RTModule+`/`))
		if raise && strings.HasSuffix(f, ".go") {
			if data, err = requireGo(data, minRuntimeGo); err != nil {
				return "", fmt.Errorf("copying racekit's runtime: %s: %v", f, err)
			}
		}
		contents[f] = data
		fmt.Fprintf(h, "%s\x00%d\x00", f, len(data))
		h.Write(data)
	}
	dir := filepath.Join(cache, "rt", hex.EncodeToString(h.Sum(nil)[:12]))
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
		return dir, nil
	}
	tmp, err := os.MkdirTemp(filepath.Join(cache), ".rt-*")
	if err != nil {
		if err := os.MkdirAll(cache, 0o777); err != nil {
			return "", err
		}
		if tmp, err = os.MkdirTemp(cache, ".rt-*"); err != nil {
			return "", err
		}
	}
	for f, data := range contents {
		p := filepath.Join(tmp, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			return "", err
		}
		if err := os.WriteFile(p, data, 0o666); err != nil {
			return "", err
		}
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o777); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		if _, serr := os.Stat(filepath.Join(dir, "go.mod")); serr != nil {
			return "", err
		}
	}
	return dir, nil
}

// depModule is a dependency module with instrumented files.
type depModule struct {
	path, dir string
	files     map[string][]byte // path relative to dir → instrumented source
}

// copyDeps copies each dependency module with instrumented files under
// cache/deps/<hash>, the instrumented files in place of the originals, and
// returns the replace directives (module path → copy) for the alternate
// go.mod.
func copyDeps(cache string, deps map[string]*depModule) (map[string]string, error) {
	out := map[string]string{}
	for _, d := range deps {
		h := sha256.New()
		fmt.Fprintf(h, "%s\x00%s\x00", d.path, d.dir)
		var names []string
		for n := range d.files {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(h, "%s\x00%d\x00", n, len(d.files[n]))
			h.Write(d.files[n])
		}
		dst := filepath.Join(cache, "deps", hex.EncodeToString(h.Sum(nil)[:12]))
		out[d.path] = dst
		if _, err := os.Stat(filepath.Join(dst, "go.mod")); err == nil {
			continue
		}
		if err := os.MkdirAll(filepath.Join(cache, "deps"), 0o777); err != nil {
			return nil, err
		}
		tmp, err := os.MkdirTemp(filepath.Join(cache, "deps"), ".tmp-*")
		if err != nil {
			return nil, err
		}
		err = filepath.WalkDir(d.dir, func(p string, e os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(d.dir, p)
			target := filepath.Join(tmp, rel)
			if e.IsDir() {
				return os.MkdirAll(target, 0o777)
			}
			if !e.Type().IsRegular() {
				return nil
			}
			data, ok := d.files[filepath.ToSlash(rel)]
			if !ok {
				if data, err = os.ReadFile(p); err != nil {
					return err
				}
			}
			return os.WriteFile(target, data, 0o666)
		})
		if err == nil && !fileExists(filepath.Join(tmp, "go.mod")) {
			// A module without a go.mod file: give the copy one.
			err = os.WriteFile(filepath.Join(tmp, "go.mod"), []byte("module "+d.path+"\n"), 0o666)
		}
		if err != nil {
			os.RemoveAll(tmp)
			return nil, fmt.Errorf("copying %s: %v", d.path, err)
		}
		if err := os.Rename(tmp, dst); err != nil {
			os.RemoveAll(tmp)
			if !fileExists(filepath.Join(dst, "go.mod")) {
				return nil, err
			}
		}
	}
	return out, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// writeModFile writes the alternate go.mod: the user's, plus the runtime
// required and replaced by its copy, and the replacements of dependency
// modules by their instrumented copies, with a copy of the user's go.sum
// beside it (the go command reads alt.sum for alt.mod).
func writeModFile(gomod, rtDir, cache string, replaces map[string]string, extra string) (string, error) {
	mod, err := os.ReadFile(gomod)
	if err != nil {
		return "", err
	}
	sum, err := os.ReadFile(filepath.Join(filepath.Dir(gomod), "go.sum"))
	if err != nil && !os.IsNotExist(err) {
		return "", err
	}
	var b bytes.Buffer
	b.Write(mod)
	if len(mod) > 0 && mod[len(mod)-1] != '\n' {
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "\n// Added by racekit.\nrequire %s v0.0.0\n\nreplace %s => %s\n", RTModule, RTModule, rtDir)
	var paths []string
	for p := range replaces {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		fmt.Fprintf(&b, "replace %s => %s\n", p, replaces[p])
	}
	b.WriteString(extra)
	h := sha256.New()
	h.Write(b.Bytes())
	h.Write([]byte{0})
	h.Write(sum)
	dir := filepath.Join(cache, "mod", hex.EncodeToString(h.Sum(nil)[:12]))
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return "", err
	}
	p := filepath.Join(dir, "go.mod")
	if err := writeAtomic(p, b.Bytes()); err != nil {
		return "", err
	}
	if err := writeAtomic(filepath.Join(dir, "go.sum"), sum); err != nil {
		return "", err
	}
	return p, nil
}

// writeWorkFile writes the go.work file the overlay puts in place of the
// user's (at the same path, so that its relative paths and go.work.sum
// stay valid): the user's, plus a use of the runtime copy and the
// replacements of dependency modules by their instrumented copies.
func writeWorkFile(work, rtDir, cache string, replaces map[string]string) (string, error) {
	data, err := os.ReadFile(work)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	b.Write(data)
	if len(data) > 0 && data[len(data)-1] != '\n' {
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "\n// Added by racekit.\nuse %s\n", rtDir)
	var paths []string
	for p := range replaces {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		fmt.Fprintf(&b, "replace %s => %s\n", p, replaces[p])
	}
	return writeCached(cache, "work", ".work", b.Bytes())
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
