package instrument

// Instrumenting the selected packages: type-checking them, rewriting each
// file into the overlay or a dependency copy, and the TestMain each test
// binary gets to finish its trace.

import (
	"fmt"
	"go/ast"
	"go/doc"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"golang.org/x/tools/go/packages"
)

// instrumentPackages type-checks the targets and instruments their files.
func instrumentPackages(cfg *Config, targets []string, overlay map[string]string, deps map[string]*depModule, prep *Prepared) error {
	cfg.Status.set(fmt.Sprintf("parsing and type-checking %d packages", len(targets)), 0)
	pkgs, err := loadPackages(cfg, targets)
	if err != nil {
		return err
	}
	// Calls into packages outside this set are BarrierPairs (barrier.go).
	traced := map[string]bool{}
	cgo := map[*packages.Package]*cgoPackage{}
	cgoErr := map[*packages.Package]error{}
	for _, p := range pkgs {
		if len(p.Errors) > 0 || len(p.TypeErrors) > 0 {
			continue
		}
		if usesCgo(p) {
			c, err := checkCgo(p, cfg.raceSrc)
			if err != nil {
				cgoErr[p] = err
				continue
			}
			cgo[p] = c
		}
		traced[strings.TrimSuffix(p.PkgPath, "_test")] = true
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
		cgo:          cgo,
		cgoErr:       cgoErr,
		varWrites:    writtenPkgVars(pkgs),
	}
	cfg.Status.set("instrumenting packages", len(pkgs))
	for _, p := range pkgs {
		if err := in.instrumentPackage(p); err != nil {
			return err
		}
		cfg.Status.add(1)
	}
	if err := in.addTestMains(); err != nil {
		return err
	}
	sort.Strings(prep.Instrumented)
	return nil
}

// loadPackages loads and type-checks the targets, non-test variants first,
// and the test variants of the main module's packages (cfg.Tests).
func loadPackages(cfg *Config, targets []string) ([]*packages.Package, error) {
	load := newTypeLoader(cfg).load
	// A dependency's test files are not built (go test builds only the
	// patterns' tests): its test variant is not loaded, so its test files
	// and their imports are neither type-checked nor instrumented. The
	// main module's packages then see the dependencies' types through
	// export data, as they see std's.
	var pkgs []*packages.Package
	var err error
	if cfg.Tests && len(cfg.deps) > 0 {
		isDep := map[string]bool{}
		for _, d := range cfg.deps {
			isDep[d] = true
		}
		var mains, deps []string
		for _, t := range targets {
			if isDep[t] && !cfg.roots[t] {
				deps = append(deps, t)
			} else {
				mains = append(mains, t)
			}
		}
		// No patterns would load the current directory's package.
		if len(deps) > 0 {
			if pkgs, err = load(false, deps); err != nil {
				return nil, err
			}
		}
		if len(mains) > 0 {
			m, err := load(true, mains)
			if err != nil {
				return nil, err
			}
			pkgs = append(pkgs, m...)
		}
	} else if pkgs, err = load(cfg.Tests, targets); err != nil {
		return nil, err
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
func (t *pkgTests) note(p *packages.Package, info *types.Info, base string, f *ast.File, name string, isTest, inDep bool) {
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
				if callsMRun(fd, info) {
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
	cgo          map[*packages.Package]*cgoPackage // packages that use cgo, checked as written
	cgoErr       map[*packages.Package]error       // those that could not be
	varWrites    pkgVarWrites                      // package variables written after their declaration (initonly.go)
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
	names, syntax, info, tpkg := p.CompiledGoFiles, p.Syntax, p.TypesInfo, p.Types
	if usesCgo(p) {
		c := in.cgo[p]
		if c == nil {
			in.prep.Skipped = append(in.prep.Skipped, Skip{p.ID, fmt.Sprintf("uses cgo, and its files do not type-check as written: %v", in.cgoErr[p])})
			return nil
		}
		names, syntax, info, tpkg = p.GoFiles, nil, c.info, c.pkg
		if p.Module != nil && p.Module.Main && !slices.Contains(in.prep.deps, base) {
			in.prep.deps = append(in.prep.deps, base)
		}
		for _, name := range names {
			syntax = append(syntax, c.files[name])
		}
	}
	for i, f := range syntax {
		if i >= len(names) {
			break
		}
		name := names[i]
		isTest := strings.HasSuffix(name, "_test.go")
		inDep := p.Module != nil && !p.Module.Main && p.Module.Dir != "" && strings.HasPrefix(name, p.Module.Dir+string(filepath.Separator))
		in.tests.note(p, info, base, f, name, isTest, inDep)
		if in.done[name] || !strings.HasSuffix(name, ".go") {
			continue
		}
		in.done[name] = true
		if err := in.instrumentFile(p, info, tpkg, base, f, name, isTest, inDep); err != nil {
			return err
		}
	}
	return nil
}

// instrumentFile instruments the file f (named name) of package p and
// puts the result in the overlay or, for a dependency's file (inDep), in
// its module's copy. A file the rewriter fails on is left as it is, and
// reported skipped.
func (in *pkgInstrumenter) instrumentFile(p *packages.Package, info *types.Info, tpkg *types.Package, base string, f *ast.File, name string, isTest, inDep bool) error {
	cfg, prep := in.cfg, in.prep
	src, ok := cfg.raceSrc[filepath.Clean(name)]
	if !ok {
		var err error
		if src, err = os.ReadFile(name); err != nil {
			return err
		}
	}
	res, err := File(FileInput{Fset: p.Fset, File: f, Src: src, Info: info, Pkg: tpkg, Path: name, IsTest: isTest, Traced: in.isTraced, Excluded: in.excluded, InitOnly: in.varWrites.initOnly})
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
	// function calls rttest.Checkpoints; rt/checkpoint.go), and finished
	// by the patched runtime's exit hook where there is one
	// (runtimehook.go, exitPatch). So is it when the package's TestMain
	// hands m to untraced code (goleak.VerifyTestMain(m)), which calls
	// m.Run and os.Exit itself.
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
		checkpoints := t.hasExample[pkg] || t.hasTestMain[pkg]
		if checkpoints {
			src = fmt.Sprintf(checkpointsSrc, name, RTModule+"/rt/rttest")
		}
		if err := in.addTestFile(t.testDir[pkg], "zz_racekit_testmain_test.go", src); err != nil {
			return err
		}
		if checkpoints && t.hasSrc[pkg] && t.extName[pkg] != "" && t.extName[pkg] != name {
			// The external tests' package is initialized after the
			// package's own: its sites and variables, recorded then,
			// would follow the first checkpoint, and a binary that ran
			// no test (-run matching none) would end without one.
			src := fmt.Sprintf(checkpointsSrc, t.extName[pkg], RTModule+"/rt/rttest")
			if err := in.addTestFile(t.testDir[pkg], "zz_racekit_checkpoint_x_test.go", src); err != nil {
				return err
			}
		}
	}
	return nil
}

// addTestFile adds the generated test file src to the overlay as name in
// dir.
func (in *pkgInstrumenter) addTestFile(dir, name, src string) error {
	dst, err := writeCached(in.cfg.CacheDir, "files", ".go", []byte(src))
	if err != nil {
		return err
	}
	in.overlay[filepath.Join(dir, name)] = dst
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
