package verdictdiff

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"sort"
)

// verdict is a package's outcome in one run.
type verdict struct {
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
func parseGoTest(out []byte) map[string]verdict {
	v := map[string]verdict{}
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

// merge pairs each package of the plain run that has a verdict with its
// verdict in the instrumented run ("missing" when it has none), by
// package path.
func merge(mod string, plain, rk map[string]verdict) []Package {
	var out []Package
	for pkg, p := range plain {
		if p.result == "" {
			continue
		}
		r, ok := rk[pkg]
		res := r.result
		if !ok || res == "" {
			res = "missing"
		}
		out = append(out, Package{Module: mod, Package: pkg, Plain: p.result, Racekit: res, Races: r.races})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Package < out[j].Package })
	return out
}

// tally counts the packages whose tests pass plainly and those of them
// that pass instrumented.
func tally(pkgs []Package) (passing, kept int) {
	for _, p := range pkgs {
		if p.Plain == "ok" {
			passing++
			if p.Racekit == "ok" {
				kept++
			}
		}
	}
	return passing, kept
}
