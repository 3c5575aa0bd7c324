package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/racekit/racekit/instrument"
)

// goVersionSrc is a module's one package: Racy's two goroutines write X
// unordered, Clean's are ordered by a mutex, and LoopVar's goroutines read
// the loop variable, which before go1.22 is one variable that the loop's
// post statement writes meanwhile (LOOP is a race mark or nothing).
const goVersionSrc = `package m

import "sync"

var X, Y int

func Racy() {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { X = 1; wg.Done() }() // race: x
	go func() { X = 2; wg.Done() }() // race: x
	wg.Wait()
}

func Clean() {
	var mu sync.Mutex
	var wg sync.WaitGroup
	wg.Add(2)
	for k := 0; k < 2; k++ {
		go func() { mu.Lock(); Y++; mu.Unlock(); wg.Done() }()
	}
	wg.Wait()
}

func LoopVar() int {
	var mu sync.Mutex
	var wg sync.WaitGroup
	sum := 0
	for i := 0; i < 2; i++ { LOOP
		wg.Add(1)
		go func() {
			mu.Lock()
			sum += i LOOP
			mu.Unlock()
			wg.Done()
		}()
	}
	wg.Wait()
	return sum
}
`

const goVersionTest = `package m

import "testing"

func TestRacy(t *testing.T)  { Racy() }
func TestClean(t *testing.T) { Clean() }
func TestLoopVar(t *testing.T) {
	if s := LoopVar(); s < 1 || s > 4 { // 1 (0+1) from go1.22 on; before, up to 2+2
		t.Fatal(s)
	}
}
`

// TestGoVersions builds, with racekit's front end (Prepare, then go test
// with its overlay and alternate go.mod, as racekit test does), a module at
// each go line racekit supports, and at none: the racy test's two lines are
// reported, the race-free one is not, the loop variable is shared exactly
// before go1.22 (so racekit kept the module's language version), and the
// module's files, go.mod first, are unchanged.
func TestGoVersions(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs instrumented modules")
	}
	for _, v := range []string{"", "1.13", "1.16", "1.17", "1.18", "1.20", "1.21", "1.22", "1.23"} {
		name := "go" + v
		if v == "" {
			name = "nogo"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			mod := "module example.com/m\n"
			if v != "" {
				mod += "\ngo " + v + "\n"
			}
			// Without a go line the go command compiles at go1.16.
			shared := v == "" || versionBefore(v, "1.22")
			loop := ""
			if shared {
				loop = "// race: loop"
			}
			files := map[string]string{
				"go.mod":    mod,
				"m.go":      strings.ReplaceAll(goVersionSrc, "LOOP", loop),
				"m_test.go": goVersionTest,
			}
			for f, src := range files {
				if err := os.WriteFile(filepath.Join(dir, f), []byte(src), 0o666); err != nil {
					t.Fatal(err)
				}
			}
			before := snapshot(t, dir)
			want := expected(t, dir)
			if n := len(want); n != 1+boolCount(shared) {
				t.Fatalf("%d marked races: %v", n, want)
			}

			prep, pairs, fast := frontEnd(t, dir, instrument.Config{})
			if len(prep.Instrumented) != 1 || len(prep.Skipped) != 0 {
				t.Fatalf("instrumented %v, skipped %v", prep.Instrumented, prep.Skipped)
			}
			if !reflect.DeepEqual(pairs, want) {
				t.Errorf("races %q, want %q", pairs, want)
			}
			if fast != len(want) {
				t.Errorf("fasttrack: %d races, want %d", fast, len(want))
			}
			checkUnchanged(t, before, snapshot(t, dir))
		})
	}
}

// frontEnd does what racekit test does in the module at dir: Prepare (cfg
// with Dir, Patterns ./... and Tests set), go test -count=1 with its
// overlay, alternate go.mod and environment (and goFlags), then hb and
// fasttrack over each test binary's trace. It returns the distinct racing
// line pairs (hb) and the number of fasttrack's races, over all traces.
func frontEnd(t *testing.T, dir string, cfg instrument.Config, goFlags ...string) (*instrument.Prepared, []string, int) {
	t.Helper()
	cfg.Dir, cfg.Patterns, cfg.Tests = dir, []string{"./..."}, true
	prep, err := instrument.Prepare(cfg)
	if err != nil {
		t.Fatal(err)
	}
	traces := t.TempDir()
	args := append([]string{"test", "-count=1"}, prep.BuildArgs()...)
	args = append(append(args, goFlags...), "./...")
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), prep.Env...), "RACEKIT_TRACE_DIR="+traces)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go test: %v\n%s", err, out)
	}
	found, _ := filepath.Glob(filepath.Join(traces, "*.rkt"))
	if len(found) == 0 {
		t.Fatalf("no trace\n%s", out)
	}
	var pairs []string
	fast := 0
	for _, tr := range found {
		res, err := analyze(tr)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.warnings) > 0 {
			t.Errorf("%s: warnings %v", tr, res.warnings)
		}
		pairs = append(pairs, res.hbPairs...)
		fast += res.fastRaces
	}
	sort.Strings(pairs)
	return prep, pairs, fast
}

func boolCount(b bool) int {
	if b {
		return 1
	}
	return 0
}

// versionBefore compares go lines "1.N" by N.
func versionBefore(a, b string) bool {
	var x, y int
	fmt.Sscanf(a, "1.%d", &x)
	fmt.Sscanf(b, "1.%d", &y)
	return x < y
}
