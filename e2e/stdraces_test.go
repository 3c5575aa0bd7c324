package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/racekit/racekit/instrument"
)

// TestStdRaces is the ground truth of races inside standard-library code
// (instrument/stdcalls.go): testdata/src/stdraces, every test run alone,
// once under go test -race and once instrumented. Each TestRace* must be
// reported by go test -race at its marked lines (the first frame of each
// access stack in the package: the call into std), and by racekit at the
// same line pairs, unless its doc comment says "racekit: not seen" (then
// racekit must report nothing, so that the mark stays true); no
// TestNoRace* may get a report from either.
func TestStdRaces(t *testing.T) {
	src, _ := filepath.Abs("testdata/src")
	_, prep := buildAll(t)
	pkgDir := filepath.Join(src, "stdraces")
	tests := stdTests(t, pkgDir)
	if n := countPrefix(tests, "TestRace"); n < 15 {
		t.Fatalf("%d TestRace* cases, want at least 15", n)
	}
	if n := countPrefix(tests, "TestNoRace"); n < 10 {
		t.Fatalf("%d TestNoRace* cases, want at least 10", n)
	}

	rkBin, raceBin := buildBoth(t, src, "stdraces", prep)

	var seenRace, seenRK, notSeen, stdSides, stdShown int
	var unshown []string
	var table strings.Builder
	for _, tc := range tests {
		run := "-test.run=^" + tc.name + "$"
		cmd := exec.Command(raceBin, run, "-test.count=1")
		cmd.Dir = pkgDir
		raceOut, _ := cmd.CombinedOutput() // fails when it has a race
		racePairs := uniq(racePairsIn(raceOut, "stdraces"))

		tr := filepath.Join(t.TempDir(), "trace.rkt")
		cmd = exec.Command(rkBin, run, "-test.count=1")
		cmd.Dir = pkgDir
		cmd.Env = append(os.Environ(), "RACEKIT_TRACE="+tr)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s (instrumented): %v\n%s", tc.name, err, out)
			continue
		}
		res, err := analyze(tr)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(res.warnings) > 0 {
			t.Errorf("%s: trace warnings: %v", tc.name, res.warnings)
		}
		rk := res.hbPairs
		fmt.Fprintf(&table, "%-28s -race %d  racekit %d%s\n", tc.name, len(racePairs), len(rk), map[bool]string{true: "  (not seen yet)"}[tc.notSeen])
		if len(racePairs) > 0 {
			seenRace++
		}
		if len(rk) > 0 {
			seenRK++
		}

		want := strings.Join(tc.want, "\n")
		if strings.HasPrefix(tc.name, "TestNoRace") {
			if len(racePairs) > 0 || bytes.Contains(raceOut, []byte("DATA RACE")) {
				t.Errorf("%s: go test -race reports a race:\n%s", tc.name, raceOut)
			}
			if len(rk) > 0 {
				t.Errorf("%s: racekit reports %q", tc.name, rk)
			}
			continue
		}
		switch {
		case tc.unframed:
			// go test -race's stack of a sync/atomic operation stops in
			// sync/atomic: a report, without the line pair.
			if !bytes.Contains(raceOut, []byte("DATA RACE")) {
				t.Errorf("%s: go test -race reports no race:\n%s", tc.name, raceOut)
			}
		case strings.Join(racePairs, "\n") != want:
			t.Errorf("%s: go test -race: racing line pairs %q, want %q\n%s", tc.name, racePairs, tc.want, raceOut)
		}
		switch {
		case tc.notSeen:
			notSeen++
			if len(rk) > 0 {
				t.Errorf("%s: marked \"racekit: not seen\", but racekit reports %q", tc.name, rk)
			}
		case strings.Join(rk, "\n") != want:
			t.Errorf("%s: racekit: racing line pairs %q, want %q", tc.name, rk, tc.want)
		}
		// The std frame above the user's call, as go test -race shows it.
		for side, fn := range stdFramesIn(raceOut, "stdraces") {
			if tc.notSeen || !strings.Contains(want, side) {
				continue
			}
			stdSides++
			switch got := res.callees[side]; {
			case got == "":
				unshown = append(unshown, fmt.Sprintf("%s: %s above %s", tc.name, fn, side))
			case sameStdFrame(got, fn):
				stdShown++
			default:
				t.Errorf("%s: racekit shows %s above %s, go test -race %s", tc.name, got, side, fn)
			}
		}
	}
	t.Logf("per test (distinct racing line pairs):\n%s", table.String())
	t.Logf("tests with a race: go test -race %d, racekit %d (%d TestRace*, %d marked not seen by racekit)",
		seenRace, seenRK, countPrefix(tests, "TestRace"), notSeen)
	t.Logf("racing accesses inside a std call: racekit shows go test -race's std frame above the call for %d of %d; not for:\n%s",
		stdShown, stdSides, strings.Join(unshown, "\n"))
}

// sameStdFrame reports whether racekit's callee frame got names the std
// call go test -race shows as goFn: the same function; a method of the
// same name (called through an interface: racekit names the interface's,
// go test -race the dynamic type's); or an unexported function of the
// same package (reflect.typedslicecopy, which reflect.Copy's frame
// reaches without showing itself).
func sameStdFrame(got, goFn string) bool {
	dot := strings.LastIndexByte(got, '.')
	if got == goFn || strings.HasSuffix(goFn, got[dot:]) {
		return true
	}
	pkg, name := goFn[:max(strings.LastIndexByte(goFn, '.'), 0)], goFn[strings.LastIndexByte(goFn, '.')+1:]
	return strings.HasPrefix(got, pkg+".") && name != "" && name[0] >= 'a' && name[0] <= 'z'
}

// stdFramesIn reads go test -race's reports and returns, for each access
// whose stack reaches a file under a directory named dir from a function
// of a standard-library package, that function (the frame above the first
// in dir), by the dir frame's file:line.
func stdFramesIn(out []byte, dir string) map[string]string {
	frames := map[string]string{}
	inAccess := false
	fn, above := "", ""
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "Read at") || strings.HasPrefix(line, "Write at") ||
			strings.HasPrefix(line, "Previous read at") || strings.HasPrefix(line, "Previous write at"):
			inAccess, fn, above = true, "", ""
		case inAccess && !strings.HasPrefix(line, " "):
			inAccess = false
		case inAccess && strings.HasSuffix(line, "()"):
			above, fn = fn, strings.TrimSuffix(strings.TrimSpace(line), "()")
		case inAccess:
			m := raceFrame.FindStringSubmatch(line)
			if m == nil || filepath.Base(filepath.Dir(m[1])) != dir {
				continue
			}
			inAccess = false
			if above != "" && !strings.Contains(above, dir+".") {
				// A generic function's shape (slices.Sort[go.shape.int]) dropped.
				if i := strings.IndexByte(above, '['); i > 0 {
					above = above[:i]
				}
				frames[fmt.Sprintf("%s:%s", filepath.Base(m[1]), m[2])] = above
			}
		}
	}
	return frames
}

type stdTest struct {
	name    string
	want    []string // the marked line pairs inside the function
	notSeen bool
	// unframed: one access is a sync/atomic operation, whose stack in go
	// test -race's report has no frame of the test's (its doc comment
	// says "atomic side unframed").
	unframed bool
}

// stdTests lists the test functions of the package in dir, in order, with
// the "// race: TAG" marks inside each.
func stdTests(t *testing.T, dir string) []stdTest {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
	sort.Strings(files)
	var out []stdTest
	for _, f := range files {
		fset := token.NewFileSet()
		af, err := parser.ParseFile(fset, f, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(f)
		lines := strings.Split(string(data), "\n")
		for _, d := range af.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || !strings.HasPrefix(fd.Name.Name, "Test") {
				continue
			}
			tc := stdTest{name: fd.Name.Name}
			tc.unframed = fd.Doc != nil && strings.Contains(fd.Doc.Text(), "atomic side unframed")
			if fd.Doc != nil && strings.Contains(fd.Doc.Text(), "racekit: not seen") {
				tc.notSeen = true
			}
			tags := map[string][]string{}
			from, to := fset.Position(fd.Pos()).Line, fset.Position(fd.End()).Line
			for n := from; n <= to; n++ {
				if _, tg, ok := strings.Cut(lines[n-1], "// race:"); ok {
					for _, tag := range strings.Fields(tg) {
						tags[tag] = append(tags[tag], fmt.Sprintf("%s:%d", filepath.Base(f), n))
					}
				}
			}
			for _, ls := range tags {
				if len(ls) == 1 {
					tc.want = append(tc.want, pairName(ls[0], ls[0]))
				}
				for i := range ls {
					for j := i + 1; j < len(ls); j++ {
						tc.want = append(tc.want, pairName(ls[i], ls[j]))
					}
				}
			}
			sort.Strings(tc.want)
			if strings.HasPrefix(tc.name, "TestRace") != (len(tc.want) > 0) {
				t.Fatalf("%s: marks %q: a TestRace* needs some, a TestNoRace* none", tc.name, tc.want)
			}
			out = append(out, tc)
		}
	}
	return out
}

// racePairsIn reads go test -race's reports and returns each race's pair
// of access lines: for each of the two stacks, its first frame in a file
// under a directory named dir (the user's call into the standard library
// when the access is inside it).
func racePairsIn(out []byte, dir string) []string {
	var pairs, sides []string
	inAccess := false
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "WARNING: DATA RACE"):
			sides = sides[:0]
		case strings.HasPrefix(line, "Read at") || strings.HasPrefix(line, "Write at") ||
			strings.HasPrefix(line, "Previous read at") || strings.HasPrefix(line, "Previous write at"):
			inAccess = true
		case inAccess && !strings.HasPrefix(line, " "):
			inAccess = false // the stack ended without a frame in dir
		case inAccess:
			m := raceFrame.FindStringSubmatch(line)
			if m == nil || filepath.Base(filepath.Dir(m[1])) != dir {
				continue
			}
			inAccess = false
			sides = append(sides, fmt.Sprintf("%s:%s", filepath.Base(m[1]), m[2]))
			if len(sides) == 2 {
				pairs = append(pairs, pairName(sides[0], sides[1]))
			}
		}
	}
	return pairs
}

func uniq(ss []string) []string {
	m := map[string]bool{}
	for _, s := range ss {
		m[s] = true
	}
	return sortedKeys(m)
}

func countPrefix(ts []stdTest, p string) int {
	n := 0
	for _, tc := range ts {
		if strings.HasPrefix(tc.name, p) && !strings.HasPrefix(tc.name, "TestNoRace") || p == "TestNoRace" && strings.HasPrefix(tc.name, p) {
			n++
		}
	}
	return n
}

// buildBoth builds package ./pkg of src twice, instrumented with prep and
// with go test -race, and returns the two test binaries.
func buildBoth(t *testing.T, src, pkg string, prep *instrument.Prepared) (rkBin, raceBin string) {
	t.Helper()
	bins := t.TempDir()
	rkBin, raceBin = filepath.Join(bins, "rk.test"), filepath.Join(bins, "race.test")
	args := append([]string{"test", "-c", "-o", rkBin}, prep.BuildArgs()...)
	build := exec.Command("go", append(args, "./"+pkg)...)
	build.Dir = src
	build.Env = append(os.Environ(), prep.Env...)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go test -c (instrumented): %v\n%s", err, out)
	}
	build = exec.Command("go", "test", "-c", "-race", "-o", raceBin, "./"+pkg)
	build.Dir = src
	build.Env = append(os.Environ(), "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go test -c -race: %v\n%s", err, out)
	}
	return rkBin, raceBin
}
