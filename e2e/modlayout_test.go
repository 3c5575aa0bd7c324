package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/racekit/racekit/instrument"
)

// racyPkg is a package whose test has one race, between the lines marked.
const racyPkg = `package PKG

import "sync"

var X int

func Racy() {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { X = 1; wg.Done() }() // race: TAG
	go func() { X = 2; wg.Done() }() // race: TAG
	wg.Wait()
}
`

func racy(pkg, tag string) string {
	return strings.NewReplacer("PKG", pkg, "TAG", tag).Replace(racyPkg)
}

// oneMarkedRace runs the tests of the module at dir (its dependencies
// replaced by local directories) three times: each run must report
// exactly the one race its files mark.
func oneMarkedRace(t *testing.T, dir string) {
	t.Helper()
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOFLAGS", "")
	for run := 0; run < 3; run++ {
		_, pairs, _ := frontEnd(t, dir, instrument.Config{})
		if want := wantPairs(t, dir, "."); !reflect.DeepEqual(pairs, want) || len(want) != 1 {
			t.Fatalf("run %d: races %q, want %q", run, pairs, want)
		}
	}
}

// mRequiresDep and depGoMod are the go.mod files of module example.com/m
// and of its dependency example.com/dep, in directories m and dep side by
// side (replaced by a directory: racekit copies it when tracing it).
const (
	mRequiresDep = "module example.com/m\n\ngo 1.20\n\nrequire example.com/dep v0.0.0\n\nreplace example.com/dep => ../dep\n"
	depGoMod     = "module example.com/dep\n\ngo 1.18\n"
)

// depMarkedRace is oneMarkedRace on module example.com/m, whose test
// file is mTest, with a dependency example.com/dep (replaced by a
// directory, untraced) whose one file is depSrc.
func depMarkedRace(t *testing.T, mTest, depSrc string) {
	t.Helper()
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"m/go.mod":    mRequiresDep,
		"m/m_test.go": mTest,
		"dep/go.mod":  depGoMod,
		"dep/dep.go":  depSrc,
	})
	oneMarkedRace(t, filepath.Join(root, "m"))
}

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for f, src := range files {
		p := filepath.Join(root, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o666); err != nil {
			t.Fatal(err)
		}
	}
}

// wantPairs is the marked races of the .go files of dirs, relative to root.
func wantPairs(t *testing.T, root string, dirs ...string) []string {
	var all []string
	for _, d := range dirs {
		all = append(all, expected(t, filepath.Join(root, d))...)
	}
	sort.Strings(all)
	return all
}

// TestModuleLayouts builds modules of the shapes real ones have: a
// dependency replaced by a relative directory (its package traced with
// --include), a workspace (its other module's package traced too, as the
// main modules' are), files behind a build tag (in a go 1.16 module, so that the
// tag and the go1.21 racekit adds are merged), and a cgo package (its Go
// code traced, as go test -race traces it).
func TestModuleLayouts(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs instrumented modules")
	}
	t.Run("replace", func(t *testing.T) {
		root := t.TempDir()
		writeTree(t, root, map[string]string{
			"m/go.mod":       mRequiresDep,
			"m/m.go":         racy("m", "m"),
			"m/m_test.go":    "package m\n\nimport (\n\t\"testing\"\n\n\t\"example.com/dep\"\n)\n\nfunc TestRacy(t *testing.T) { Racy(); dep.Racy() }\n",
			"dep/go.mod":     depGoMod,
			"dep/dep.go":     racy("dep", "dep"),
			"dep/unused.txt": "",
		})
		before := snapshot(t, root)
		dir := filepath.Join(root, "m")
		_, pairs, _ := frontEnd(t, dir, instrument.Config{Include: []string{"example.com/dep"}})
		if want := wantPairs(t, root, "m", "dep"); !reflect.DeepEqual(pairs, want) {
			t.Errorf("races %q, want %q", pairs, want)
		}
		checkUnchanged(t, before, snapshot(t, root))
	})
	// Dependencies traced (Config.Deps, racekit test's default), as go
	// test -race instruments them: a race between two goroutines of the
	// dependency's own code is reported (serf's tests, hashicorp/mdns's
	// races: missed untraced), and the order the dependency's goroutines
	// keep through its own channels holds (serf's TestSerf_Join_Cancel:
	// memberlist's goroutine called the test's delegate, Join waited for
	// it over TCP; a false race untraced). Untraced, both go wrong: the
	// test checks that too, so that it shows what tracing changes.
	t.Run("dependencies-traced", func(t *testing.T) {
		root := t.TempDir()
		writeTree(t, root, map[string]string{
			"m/go.mod": mRequiresDep,
			"m/m_test.go": `package m

import (
	"testing"

	"example.com/dep"
)

type flag struct{ set bool }

func (f *flag) Notify() { f.set = true }

func TestNoRaceJoin(t *testing.T) {
	f := &flag{}
	n := dep.New(f)
	dep.Join(n)
	if !f.set {
		t.Fatal("not notified")
	}
}

func TestRacy(t *testing.T) { dep.Racy() }
`,
			"dep/go.mod": depGoMod,
			"dep/dep.go": racy("dep", "dep"),
			"dep/node.go": `package dep

type Delegate interface{ Notify() }

type Node struct {
	d   Delegate
	req chan chan bool
}

func New(d Delegate) *Node {
	n := &Node{d: d, req: make(chan chan bool)}
	go n.loop()
	return n
}

func (n *Node) loop() {
	for done := range n.req {
		n.d.Notify()
		done <- true
	}
}

// Join has the node's goroutine notify the delegate, and waits for it.
func Join(n *Node) {
	done := make(chan bool)
	n.req <- done
	<-done
}
`,
		})
		t.Setenv("GOPROXY", "off")
		t.Setenv("GOFLAGS", "")
		dir := filepath.Join(root, "m")
		want := wantPairs(t, root, "dep")
		for run := 0; run < 2; run++ {
			_, pairs, _ := frontEnd(t, dir, instrument.Config{Deps: true})
			if !reflect.DeepEqual(pairs, want) || len(want) != 1 {
				t.Fatalf("run %d, dependencies traced: races %q, want %q", run, pairs, want)
			}
		}
		// Untraced, the dependency's race is missed; the Join orders the
		// delegate's write before the test's read over the dependency's
		// channels, which the runtime's channel hook sees (rt/chanhook.go)
		// and which, without it, left a false race.
		_, pairs, _ := frontEnd(t, dir, instrument.Config{})
		if len(pairs) != 0 {
			t.Errorf("dependencies untraced: races %q, want none (the dependency's missed, the Join's ordered)", pairs)
		}
		t.Setenv("RACEKIT_CHAN_HOOK", "0")
		_, pairs, _ = frontEnd(t, dir, instrument.Config{})
		if slices.Contains(pairs, want[0]) || len(pairs) == 0 {
			t.Errorf("dependencies untraced, no channel hook: races %q, want the dependency's missed and the Join's false one", pairs)
		}
		t.Logf("dependencies untraced, no channel hook: races %q", pairs)
	})
	// A dependency whose instrumented code does not compile (here it
	// declares racekit's own import name) is left untraced, with a line
	// saying so, and the rest runs: the main module's race is found.
	t.Run("dependency-uninstrumentable", func(t *testing.T) {
		root := t.TempDir()
		writeTree(t, root, map[string]string{
			"m/go.mod":    mRequiresDep,
			"m/m.go":      racy("m", "m"),
			"m/m_test.go": "package m\n\nimport (\n\t\"testing\"\n\n\t\"example.com/dep\"\n)\n\nfunc TestRacy(t *testing.T) { Racy(); _ = dep.Clash() }\n" + brokenHandoffTest,
			"dep/go.mod":  depGoMod,
			"dep/dep.go":  "package dep\n\nimport \"sync\"\n\nvar _rk = new(int)\n\nfunc Clash() int { *_rk++; return *_rk }\n\n" + depBox,
		})
		t.Setenv("GOPROXY", "off")
		t.Setenv("GOFLAGS", "")
		var log strings.Builder
		prep, pairs, _ := frontEnd(t, filepath.Join(root, "m"), instrument.Config{Deps: true, Log: &log})
		if want := wantPairs(t, root, "m"); !reflect.DeepEqual(pairs, want) {
			t.Errorf("races %q, want %q", pairs, want)
		}
		if !slices.ContainsFunc(prep.Skipped, func(s instrument.Skip) bool { return s.Pkg == "example.com/dep" }) ||
			!strings.Contains(log.String(), "not traced: example.com/dep: its instrumented code does not compile") {
			t.Errorf("skipped %q, log %q: want example.com/dep left untraced, and said", prep.Skipped, log.String())
		}
	})
	// The go command refuses -modfile in workspace mode: the runtime copy
	// joins the workspace through the overlay's go.work instead.
	t.Run("workspace", func(t *testing.T) {
		root := t.TempDir()
		writeTree(t, root, map[string]string{
			"go.work":     "go 1.21\n\nuse (\n\t./a\n\t./b\n)\n",
			"a/go.mod":    "module example.com/a\n\ngo 1.18\n",
			"a/a.go":      racy("a", "a"),
			"a/a_test.go": "package a\n\nimport (\n\t\"testing\"\n\n\t\"example.com/b\"\n)\n\nfunc TestRacy(t *testing.T) { Racy(); b.Racy() }\n",
			"b/go.mod":    "module example.com/b\n",
			"b/b.go":      racy("b", "b"),
		})
		before := snapshot(t, root)
		prep, pairs, _ := frontEnd(t, filepath.Join(root, "a"), instrument.Config{})
		if want := wantPairs(t, root, "a", "b"); !reflect.DeepEqual(pairs, want) {
			t.Errorf("races %q, want %q", pairs, want)
		}
		if prep.ModFile != "" || !reflect.DeepEqual(prep.Env, []string{"GOWORK=" + filepath.Join(root, "go.work")}) {
			t.Errorf("modfile %q, env %q: want none and the workspace", prep.ModFile, prep.Env)
		}
		checkUnchanged(t, before, snapshot(t, root))
	})
	// vendor/modules.txt cannot list the runtime copy: the build takes
	// -mod=mod, with the vendored module replaced by a copy of its vendored
	// code, and needs no network (GOPROXY=off) nor module cache.
	t.Run("vendor", func(t *testing.T) {
		dir := t.TempDir()
		writeTree(t, dir, map[string]string{
			"go.mod":                         "module example.com/m\n\ngo 1.20\n\nrequire example.com/dep v1.0.0\n",
			"m.go":                           racy("m", "m"),
			"m_test.go":                      "package m\n\nimport (\n\t\"testing\"\n\n\t\"example.com/dep\"\n)\n\nfunc TestRacy(t *testing.T) {\n\tRacy()\n\tif dep.Vendored() != 42 {\n\t\tt.Fatal()\n\t}\n}\n",
			"vendor/modules.txt":             "# example.com/dep v1.0.0\n## explicit; go 1.18\nexample.com/dep\n",
			"vendor/example.com/dep/dep.go":  "package dep\n\nfunc Vendored() int { return 42 }\n",
			"vendor/example.com/dep/LICENSE": "",
		})
		t.Setenv("GOPROXY", "off")
		t.Setenv("GOFLAGS", "")
		before := snapshot(t, dir)
		for _, deps := range []bool{false, true} { // the vendored module traced too
			_, pairs, _ := frontEnd(t, dir, instrument.Config{Deps: deps})
			if want := wantPairs(t, dir, "."); !reflect.DeepEqual(pairs, want) || len(want) != 1 {
				t.Errorf("dependencies traced %v: races %q, want %q", deps, pairs, want)
			}
		}
		checkUnchanged(t, before, snapshot(t, dir))
	})
	// A TestMain that hands m to a dependency (goleak.VerifyTestMain's
	// shape), untraced, which calls m.Run and os.Exit where no hook of
	// racekit's runs: the trace is checkpointed at the end of each test,
	// so it is finished and the last test's race is reported.
	t.Run("testmain-handoff", func(t *testing.T) {
		root := t.TempDir()
		writeTree(t, root, map[string]string{
			"m/go.mod": mRequiresDep,
			"m/m_test.go": `package m

import (
	"testing"

	"example.com/dep"
)

func TestMain(m *testing.M) { dep.Run(m) }

func TestQuiet(t *testing.T) {}

func TestZLastRacy(t *testing.T) {
	x := 0
	done := make(chan bool)
	go func() {
		x = 1
		done <- true
	}()
	x = 2
	<-done
	_ = x
}
`,
			"dep/go.mod": depGoMod,
			"dep/dep.go": `package dep

import (
	"os"
	"testing"
	"time"
)

// Run runs the tests, waits as goleak's retries do, and exits.
func Run(m *testing.M) {
	code := m.Run()
	time.Sleep(50 * time.Millisecond)
	os.Exit(code)
}
`,
		})
		cmd := exec.Command(racekit(t), "test", "-count=1", ".")
		cmd.Dir = filepath.Join(root, "m")
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != 1 || !strings.Contains(string(out), "(racekit: 1 data race(s))") || !strings.Contains(string(out), "--- FAIL: TestZLastRacy") {
			t.Errorf("exit %d, want 1 and TestZLastRacy's race\n%s", code, out)
		}
		if strings.Contains(string(out), "no end block") {
			t.Errorf("the trace was not finished\n%s", out)
		}
	})
	// A dependency, untraced, that runs a function literal in a goroutine
	// of its own and waits for it on a channel the trace does not see
	// (testify's require.Eventually): the literal's write is ordered
	// before the caller's after the call (instrument's callbackCall; a
	// false race on ttlcache's and gocron's tests before). One that
	// returns before its literal runs orders nothing: that race stays.
	t.Run("callback-in-dependency", func(t *testing.T) {
		depMarkedRace(t, `package m

import (
	"testing"

	"example.com/dep"
)

func TestNoRaceEventually(t *testing.T) {
	x := 0
	if !dep.Eventually(func() bool { x = 1; return true }) {
		t.Fatal("false")
	}
	x = 2
	_ = x
}

func TestRaceAsync(t *testing.T) {
	x := 0
	started := make(chan bool)
	dep.Async(func() {
		started <- true
		x = 1 // race: async
	})
	<-started
	x = 2 // race: async
	dep.Wait()
	_ = x
}
`, `package dep

// Eventually runs f in a goroutine and returns its result.
func Eventually(f func() bool) bool {
	ch := make(chan bool, 1)
	go func() { ch <- f() }()
	return <-ch
}

var done = make(chan bool, 1)

// Async runs f in a goroutine and returns at once; Wait waits for it.
func Async(f func()) { go func() { f(); done <- true }() }

func Wait() { <-done }
`)
	})
	// An object of an untraced dependency that hands a pointer from one
	// goroutine to another under a lock of its own (go-workflows hands
	// its executors over through a ttlcache.Cache): calls on the object
	// are ordered as its lock orders them (rt.DepBefore, DepAfter), so
	// the write before Put (or in its argument's evaluation) is ordered
	// before the reader's after Take; a write after Put is not, and its
	// race stays.
	t.Run("object-of-dependency", func(t *testing.T) {
		depMarkedRace(t, `package m

import (
	"runtime"
	"testing"

	"example.com/dep"
)

func take(b *dep.Box) *int {
	for {
		if p := b.Take(); p != nil {
			return p
		}
		runtime.Gosched()
	}
}

func TestNoRaceHandoff(t *testing.T) {
	b := &dep.Box{}
	go func() {
		x := new(int)
		*x = 1
		b.Put(x)
	}()
	p := take(b)
	*p = 2
}

func fresh() *int {
	x := new(int)
	*x = 5
	return x
}

// The argument is made by a call: its writes come before Put's release.
func TestNoRaceArgMadeInCall(t *testing.T) {
	b := &dep.Box{}
	go b.Put(fresh())
	p := take(b)
	*p = 6
	go func() { b.Put(fresh()) }()
	p = take(b)
	*p = 7
}

func TestRaceAfterPut(t *testing.T) {
	b := &dep.Box{}
	done := make(chan bool)
	go func() {
		x := new(int)
		b.Put(x)
		*x = 3 // race: afterput
		done <- true
	}()
	p := take(b)
	*p = 4 // race: afterput
	<-done
}
`, `package dep

import "sync"

// Box holds a pointer under its lock.
type Box struct {
	mu sync.Mutex
	p  *int
}

func (b *Box) Put(p *int) { b.mu.Lock(); b.p = p; b.mu.Unlock() }

func (b *Box) Take() *int { b.mu.Lock(); defer b.mu.Unlock(); p := b.p; b.p = nil; return p }
`)
	})
	// I/O inside an untraced dependency: its Send writes a pipe, its Recv
	// reads it (hashicorp/serf's RPC over ugorji/go's codec): the message
	// orders what the sender did before Send before what the receiver
	// does after Recv, as the write and read system calls order it for
	// go test -race; a write after Send is not ordered, and its race stays.
	t.Run("io-in-dependency", func(t *testing.T) {
		depMarkedRace(t, `package m

import (
	"os"
	"testing"

	"example.com/dep"
)

func pipe(t *testing.T) (*dep.Conn, *dep.Conn) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	return dep.New(w), dep.New(r)
}

func TestNoRaceMessage(t *testing.T) {
	tx, rx := pipe(t)
	x := new(int)
	go func() {
		*x = 1
		tx.Send(1)
	}()
	if b, err := rx.Recv(); err == nil && b == 1 {
		*x = 2
	}
}

func TestRaceAfterSend(t *testing.T) {
	tx, rx := pipe(t)
	x := new(int)
	done := make(chan bool)
	go func() {
		tx.Send(1)
		*x = 3 // race: aftersend
		done <- true
	}()
	rx.Recv()
	*x = 4 // race: aftersend
	<-done
}
`, `package dep

import "os"

// Conn sends and receives bytes over a file.
type Conn struct{ f *os.File }

func New(f *os.File) *Conn { return &Conn{f} }

func (c *Conn) Send(b byte) error { _, err := c.f.Write([]byte{b}); return err }

func (c *Conn) Recv() (byte, error) {
	var b [1]byte
	_, err := c.f.Read(b[:])
	return b[0], err
}
`)
	})
	// The race build tag, which go test -race sets: //go:build race files
	// (and // +build race ones) are built, //go:build !race ones are not,
	// in the main module and in its dependencies, traced or not
	// (instrument/racetag.go).
	t.Run("race-tag", func(t *testing.T) {
		root := t.TempDir()
		writeTree(t, root, map[string]string{
			"m/go.mod":         mRequiresDep,
			"m/race_on.go":     "//go:build race\n\npackage m\n\nconst raceEnabled = true\n",
			"m/race_off.go":    "//go:build !race\n\npackage m\n\nconst raceEnabled = false\n",
			"m/old_on.go":      "// +build race\n\npackage m\n\nconst oldRace = true\n",
			"m/old_off.go":     "// +build !race\n\npackage m\n\nconst oldRace = false\n",
			"m/norace_test.go": "//go:build !race\n\npackage m\n\nimport \"testing\"\n\nfunc TestNotUnderRace(t *testing.T) { t.Fatal(\"a !race file was built\") }\n",
			"m/m_test.go":      "package m\n\nimport (\n\t\"testing\"\n\n\t\"example.com/dep\"\n)\n\nfunc TestRaceTag(t *testing.T) {\n\tif !raceEnabled || !oldRace || !dep.RaceEnabled {\n\t\tt.Fatal(\"built without the race tag\")\n\t}\n}\n",
			"dep/go.mod":       depGoMod,
			"dep/race_on.go":   "//go:build race\n\npackage dep\n\nconst RaceEnabled = true\n",
			"dep/race_off.go":  "//go:build !race\n\npackage dep\n\nconst RaceEnabled = false\n",
		})
		t.Setenv("GOPROXY", "off")
		t.Setenv("GOFLAGS", "")
		dir := filepath.Join(root, "m")
		before := snapshot(t, root)
		for _, deps := range []string{"-deps=true", "-deps=false"} {
			cmd := exec.Command(racekit(t), "test", deps, "-count=1", "-v", ".")
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "--- PASS: TestRaceTag") || strings.Contains(string(out), "TestNotUnderRace") {
				t.Errorf("racekit test %s: %v, want TestRaceTag alone, passing\n%s", deps, err, out)
			}
		}
		checkUnchanged(t, before, snapshot(t, root))
	})
	// A directory of external tests alone (package m_test, no package m
	// there), as retry-go's examples: the TestMain racekit adds joins
	// them (go vet refused a package of that one test file).
	t.Run("external-tests-only", func(t *testing.T) {
		dir := t.TempDir()
		writeTree(t, dir, map[string]string{
			"go.mod":               "module example.com/m\n\ngo 1.20\n",
			"m.go":                 racy("m", "m"),
			"examples/use_test.go": "package m_test\n\nimport (\n\t\"testing\"\n\n\t\"example.com/m\"\n)\n\nfunc TestUse(t *testing.T) { m.Racy() }\n",
		})
		cmd := exec.Command(racekit(t), "test", "-count=1", "./examples")
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != 1 || !strings.Contains(string(out), "(racekit: 1 data race(s))") {
			t.Errorf("exit %d, want 1 and the race of m.Racy\n%s", code, out)
		}
	})
	t.Run("tags", func(t *testing.T) {
		dir := t.TempDir()
		writeTree(t, dir, map[string]string{
			"go.mod":      "module example.com/m\n\ngo 1.16\n",
			"m.go":        "//go:build racetag\n// +build racetag\n\n" + racy("m", "m"),
			"m_test.go":   "//go:build racetag\n\npackage m\n\nimport \"testing\"\n\nfunc TestRacy(t *testing.T) { Racy() }\n",
			"off.go":      "//go:build !racetag\n\npackage m\n\nvar Off = 1\n",
			"off_test.go": "package m\n\nimport \"testing\"\n\nfunc TestOff(t *testing.T) {}\n",
		})
		before := snapshot(t, dir)
		_, pairs, _ := frontEnd(t, dir, instrument.Config{BuildFlags: []string{"-tags=racetag"}}, "-tags=racetag")
		if want := wantPairs(t, dir, "."); !reflect.DeepEqual(pairs, want) || len(want) != 1 {
			t.Errorf("races %q, want %q", pairs, want)
		}
		checkUnchanged(t, before, snapshot(t, dir))
	})
	t.Run("cgo", func(t *testing.T) {
		dir := t.TempDir()
		writeTree(t, dir, map[string]string{
			"go.mod":        "module example.com/m\n\ngo 1.13\n",
			"m.go":          racy("m", "m"),
			"m_test.go":     "package m\n\nimport (\n\t\"testing\"\n\n\t\"example.com/m/c\"\n)\n\nfunc TestRacy(t *testing.T) {\n\tRacy()\n\tif c.Name(\"x\") != \"x\" {\n\t\tt.Fatal()\n\t}\n}\n",
			"c/c.go":        cgoSrc,
			"c/pure.go":     "package c\n\nvar Z int\n\n// Bump's race is in a file of the cgo package without import \"C\".\nfunc Bump() {\n\tdone := make(chan bool)\n\tgo func() { Z++; done <- true }() // race: pure\n\tZ++                                // race: pure\n\t<-done\n}\n",
			"c/c_test.go":   "package c\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 2) != 4 || Name(\"ab\") != \"ab\" || NewBox(3).Get() != 3 {\n\t\tt.Fatal()\n\t}\n\tBump()\n\tRaceHandle()\n}\n",
			"c/c_other.txt": "",
		})
		before := snapshot(t, dir)
		prep, pairs, _ := frontEnd(t, dir, instrument.Config{})
		if want := wantPairs(t, dir, ".", "c"); !reflect.DeepEqual(pairs, want) || len(want) != 4 {
			t.Errorf("races %q, want %q", pairs, want)
		}
		if len(prep.Skipped) > 0 || !reflect.DeepEqual(prep.Instrumented, []string{"example.com/m", "example.com/m/c"}) {
			t.Errorf("instrumented %v, skipped %v; want both packages traced", prep.Instrumented, prep.Skipped)
		}
		checkUnchanged(t, before, snapshot(t, dir))
	})
}

// depBox is a dependency's object that hands a value from one goroutine
// to another under its own mutex; brokenHandoffTest uses it. With the
// dependency left untraced (its instrumented code does not compile), the
// calls on the box keep rt.DepBefore and DepAfter's order, as any
// untraced dependency's: no race on the slice handed over.
const depBox = `type Box struct {
	mu sync.Mutex
	v  []int
}

func (b *Box) Put(v []int) { b.mu.Lock(); b.v = v; b.mu.Unlock() }

func (b *Box) Take() []int { b.mu.Lock(); defer b.mu.Unlock(); return b.v }
`

const brokenHandoffTest = `
func TestNoRaceHandoffThroughBrokenDep(t *testing.T) {
	box := &dep.Box{}
	done := make(chan bool)
	go func() {
		s := make([]int, 1)
		s[0] = 2
		box.Put(s)
		done <- true
	}()
	for box.Take() == nil {
	}
	if box.Take()[0] != 2 {
		t.Error("lost")
	}
	<-done
}
`

// cgoSrc is a cgo file: its Go code is traced as go test -race traces it
// (instrument/cgo.go), its C names and values left as written.
const cgoSrc = `package c

/*
#include <stdlib.h>
#include <string.h>
static int add(int a, int b) { return a + b; }
typedef struct { int v; } box;
*/
import "C"

import "unsafe"

var Y int

// Add adds in C, with a race on Y between two Go goroutines.
func Add(a, b int) int {
	done := make(chan bool)
	go func() { Y = 1; done <- true }() // race: c
	Y = 2                               // race: c
	<-done
	var sum C.int
	sum = C.add(C.int(a), C.int(b))
	Y = int(sum)
	return int(C.add(C.int(a), C.int(b)))
}

// Name copies s through C memory.
func Name(s string) string {
	cs := C.CString(s)
	defer C.free(unsafe.Pointer(cs))
	n := C.strlen(cs)
	return C.GoStringN(cs, C.int(n))
}

// Box is a Go type with a field of a C type.
type Box struct {
	b    C.box
	hits int
}

func NewBox(v int) *Box {
	x := &Box{}
	x.b.v = C.int(v)
	return x
}

func (x *Box) Get() int {
	x.hits++
	return int(x.b.v)
}

// Handle's h is a Go field of a C pointer type: Go memory, which a
// closing goroutine writes while another reads it.
type Handle struct{ h *C.box }

func RaceHandle() {
	x := &Handle{h: (*C.box)(C.malloc(8))}
	p := x.h
	done := make(chan bool)
	go func() { x.h = nil; done <- true }() // race: field
	if x.h != nil {                         // race: field
		p.v = 1
	}
	<-done
	C.free(unsafe.Pointer(p))
}
`

// TestDepsCompiledOnce checks that racekit test compiles a traced
// dependency once: Prepare compiles the instrumented dependencies first
// (to leave untraced one whose instrumented code does not compile), and
// go test must find them in its cache. go keys its cache on the
// compiler's version as the -toolexec reports it, and racekit test's
// -toolexec (vet of the user's files) reports its own, so Prepare's
// compile runs under the same -toolexec; before, the first run of a
// module compiled its whole dependency graph twice. The dependency's
// source is new to the cache (a constant of this run), and go test -x
// shows every compile it runs.
func TestDepsCompiledOnce(t *testing.T) {
	bin := racekit(t)
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"m/go.mod":    mRequiresDep,
		"m/m_test.go": "package m\n\nimport (\n\t\"testing\"\n\n\t\"example.com/dep\"\n)\n\nfunc TestDep(t *testing.T) { _ = dep.Stamp() }\n",
		"dep/go.mod":  depGoMod,
		"dep/dep.go":  fmt.Sprintf("package dep\n\nfunc Stamp() int64 { return %d }\n", time.Now().UnixNano()),
	})
	cmd := exec.Command(bin, "test", "-q", "-x", ".")
	cmd.Dir = filepath.Join(root, "m")
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("racekit test -x: %v\n%s", err, out)
	}
	var depCompiles, mCompiles int
	for _, line := range strings.Split(string(out), "\n") {
		if !strings.Contains(line, "/compile") {
			continue
		}
		if strings.Contains(line, " -p example.com/dep ") {
			depCompiles++
		}
		if strings.Contains(line, " -p example.com/m ") {
			mCompiles++
		}
	}
	if mCompiles == 0 {
		t.Fatalf("go test -x showed no compile of the package under test: is -x passed on?\n%s", out)
	}
	if depCompiles != 0 {
		t.Errorf("go test compiled the dependency again (%d times) after Prepare compiled it", depCompiles)
	}
}

// TestManyFiles: a package of a thousand instrumented files (elastic/go-elasticsearch's
// typedapi/types has thousands, and 554 packages import it) builds under
// racekit test as under go test -race, and its race is reported. The
// compiler's -trimpath names every overlaid file, one argument past the
// kernel's 128 KB for one; go passes long arguments in a response file,
// but only to a program named compile (vetoriginals.EntryLink): before,
// "fork/exec racekit: argument list too long".
func TestManyFiles(t *testing.T) {
	files := map[string]string{
		"go.mod": "module example.com/many\n\ngo 1.22\n",
		"many_test.go": `package many

import "testing"

func TestRace(t *testing.T) {
	done := make(chan bool)
	go func() {
		V0++ // race: many
		done <- true
	}()
	V0++ // race: many
	<-done
}
`,
	}
	for i := range 1000 {
		files[fmt.Sprintf("a_file_with_a_rather_long_name_so_that_the_paths_add_up_%04d.go", i)] = fmt.Sprintf("package many\n\nvar V%d = %d\n\nfunc F%d() int { return V%d + 1 }\n", i, i, i, i)
	}
	root := t.TempDir()
	writeTree(t, root, files)
	cmd := exec.Command(racekit(t), "test", "-count=1", ".")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "many_test.go:8") || !strings.Contains(string(out), "many_test.go:11") {
		t.Fatalf("racekit test: %v, want exit status 1 and the race at many_test.go:8 and :11\n%s", err, out)
	}
}
