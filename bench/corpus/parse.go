package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Verdicts of a test or a package, as go test -json's final action names them.
const (
	Pass = "pass"
	Fail = "fail"
	Skip = "skip"
	// Missing: the test ran in one run and not in the other.
	Missing = "missing"
)

// event is go test -json's event (cmd/test2json), with the fields the
// harness reads.
type event struct {
	Action      string
	Package     string
	ImportPath  string // build-output, build-fail
	Test        string
	Output      string
	FailedBuild string
}

// TestResult is one test's outcome in one run.
type TestResult struct {
	Verdict string   `json:"verdict"`
	Races   int      `json:"races,omitempty"`
	Sites   []string `json:"sites,omitempty"` // "file:line file:line" of each race, sorted
}

// Run is one go test -json run parsed: per test (keyed "pkg TestName") and
// per package.
type Run struct {
	Tests    map[string]*TestResult `json:"-"`
	Packages map[string]string      `json:"packages"` // pass, fail, skip
	// Races counts "WARNING: DATA RACE" reports, in tests and outside.
	Races int `json:"races"`
	// OutsideRaces are the races reported outside any test.
	OutsideRaces int `json:"outside_races,omitempty"`
	// BuildFailed are the packages that did not build, with go's messages.
	BuildFailed map[string]string `json:"build_failed,omitempty"`
	// TimedOut are the packages whose test binary hit -timeout.
	TimedOut []string `json:"timed_out,omitempty"`
	// Panics are the first lines of panics reported outside test verdicts.
	Panics []string `json:"panics,omitempty"`
}

var siteLine = regexp.MustCompile(`^\s+(\S+\.go):(\d+)`)

// raceState follows one output stream (a test's, or a package's outside
// tests) through a race report, to note the two accesses' sites.
type raceState struct {
	want  bool     // the next frame line is an access's site
	sites []string // sites of the current report
}

// ParseJSON parses go test -json output (racekit test -json's too: it
// adds a "fail" event after a racy test's own verdict, so the last verdict
// is the one kept). Lines that are not JSON events are ignored.
func ParseJSON(out []byte) *Run {
	r := &Run{Tests: map[string]*TestResult{}, Packages: map[string]string{}, BuildFailed: map[string]string{}}
	states := map[string]*raceState{}
	buildOut := map[string]*strings.Builder{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var e event
		if json.Unmarshal(line, &e) != nil {
			continue
		}
		switch e.Action {
		case "build-output":
			b := buildOut[e.ImportPath]
			if b == nil {
				b = &strings.Builder{}
				buildOut[e.ImportPath] = b
			}
			b.WriteString(e.Output)
			continue
		case "build-fail":
			continue
		}
		if e.Package == "" {
			continue
		}
		key := e.Package
		if e.Test != "" {
			key = e.Package + " " + e.Test
		}
		switch e.Action {
		case Pass, Fail, Skip:
			if e.Test == "" {
				r.Packages[e.Package] = e.Action
				if e.FailedBuild != "" {
					r.BuildFailed[e.Package] = buildMessage(buildOut[e.FailedBuild], e.FailedBuild)
				}
			} else {
				t := r.test(key)
				t.Verdict = e.Action
			}
		case "output":
			o := e.Output
			if e.Test == "" && strings.HasPrefix(o, "FAIL\t") && strings.Contains(o, "[build failed]") {
				if _, ok := r.BuildFailed[e.Package]; !ok {
					r.BuildFailed[e.Package] = ""
				}
			}
			if strings.HasPrefix(o, "panic: test timed out after") {
				r.TimedOut = append(r.TimedOut, e.Package)
			} else if strings.HasPrefix(o, "panic: ") && len(r.Panics) < 5 {
				r.Panics = append(r.Panics, e.Package+": "+strings.TrimSpace(o))
			}
			st := states[key]
			if st == nil {
				st = &raceState{}
				states[key] = st
			}
			switch {
			case strings.HasPrefix(o, "WARNING: DATA RACE (while this test ran"):
				// racekit's line in a test that failed because another
				// test's race was reported while it ran: go test -race
				// prints no report there, only the failure.
			case strings.HasPrefix(o, "WARNING: DATA RACE"):
				r.Races++
				st.sites = st.sites[:0]
				if e.Test == "" {
					r.OutsideRaces++
				} else {
					r.test(key).Races++
				}
			case isAccessHeader(o):
				st.want = true
			case st.want:
				if m := siteLine.FindStringSubmatch(o); m != nil {
					st.want = false
					st.sites = append(st.sites, filepath.Base(m[1])+":"+m[2])
					if len(st.sites) == 2 && e.Test != "" {
						s := []string{st.sites[0], st.sites[1]}
						sort.Strings(s)
						t := r.test(key)
						t.Sites = append(t.Sites, s[0]+" "+s[1])
					}
				}
			}
		}
	}
	if len(r.BuildFailed) == 0 {
		r.BuildFailed = nil
	}
	for _, t := range r.Tests {
		sort.Strings(t.Sites)
	}
	return r
}

func (r *Run) test(key string) *TestResult {
	t := r.Tests[key]
	if t == nil {
		t = &TestResult{}
		r.Tests[key] = t
	}
	return t
}

// isAccessHeader reports whether a race report's line introduces one of
// its two accesses: "Write at 0x... by goroutine 7:", "Previous read at
// ...", racekit's the same.
func isAccessHeader(o string) bool {
	for _, p := range []string{"Read at", "Write at", "Previous read at", "Previous write at",
		"Atomic read at", "Atomic write at", "Previous atomic read at", "Previous atomic write at"} {
		if strings.HasPrefix(o, p) {
			return true
		}
	}
	return false
}

func buildMessage(b *strings.Builder, id string) string {
	if b == nil {
		return ""
	}
	return strings.TrimSpace(b.String())
}

// Comparison is one module's per-test comparison of the -race run with
// each racekit run.
type Comparison struct {
	Tests int `json:"tests"` // tests (and subtests) that ran in the -race run
	// Same counts the tests of either run whose verdict was the -race
	// run's in every racekit run.
	Same int `json:"same_all_runs"`
	// Union is the number of tests seen in any run.
	Union int `json:"union"`
	// Differ are the tests whose verdict differed in some run:
	// "pkg Test: pass | fail,pass,pass".
	Differ []TestDiff `json:"differ,omitempty"`
	// Unstable counts the subtests left out of Union: missing from some
	// run while their parent ran in every run, and seen in one run only
	// or named by an address: names made of values that change from run
	// to run or binary to binary (testify's subtests named by pointers
	// and time.Now()), which no run can be compared by.
	Unstable int `json:"unstable_names,omitempty"`
}

// TestDiff is one test whose verdict differs between the -race run and
// a racekit run.
type TestDiff struct {
	Test         string   `json:"test"`
	Race         string   `json:"race"`
	Racekit      []string `json:"racekit"`
	RaceRaces    int      `json:"race_races,omitempty"`
	RacekitRaces []int    `json:"racekit_races,omitempty"`
}

// Compare compares the per-test verdicts of the -race run with those of
// the racekit runs. A test that ran in one and not the other has verdict
// Missing there.
func Compare(race *Run, rk []*Run) Comparison {
	names := map[string]bool{}
	for n := range race.Tests {
		names[n] = true
	}
	for _, r := range rk {
		for n := range r.Tests {
			names[n] = true
		}
	}
	all := append([]*Run{race}, rk...)
	keys := make([]string, 0, len(names))
	unstable := 0
	for n := range names {
		if unstableName(all, n) {
			unstable++
			continue
		}
		keys = append(keys, n)
	}
	sort.Strings(keys)
	c := Comparison{Tests: len(race.Tests), Union: len(keys), Unstable: unstable}
	for _, n := range keys {
		want, wantRaces := verdictOf(race, n)
		same := true
		d := TestDiff{Test: n, Race: want, RaceRaces: wantRaces}
		anyRaces := false
		for _, r := range rk {
			v, races := verdictOf(r, n)
			d.Racekit = append(d.Racekit, v)
			d.RacekitRaces = append(d.RacekitRaces, races)
			if races > 0 {
				anyRaces = true
			}
			if v != want {
				same = false
			}
		}
		if !anyRaces {
			d.RacekitRaces = nil
		}
		if same {
			c.Same++
		} else {
			c.Differ = append(c.Differ, d)
		}
	}
	return c
}

// unstableName reports whether the test name ("pkg Test/sub") is a
// subtest missing from some of runs whose parent was seen in all of them,
// and either seen in one run only or named by an address (a function's
// address differs between the -race binary and racekit's, and stays the
// same between racekit's runs; a server's host:port differs in every run).
// A name with an address in a middle component ("T/[179]{0xc0000727}/struct_{...}":
// json-iterator's table of values) counts from that component: its parent
// is the test above it. The parent is the longest prefix at a '/' that ran
// in every run, since a subtest's own name may hold '/' (a URL: httprc's
// "TestClient/Lookup_http://127.0.0.1:33835/int" is one subtest of TestClient).
func unstableName(runs []*Run, name string) bool {
	end := len(name)
	if loc := addrInName.FindStringIndex(name); loc != nil {
		end = loc[0]
	}
	i := strings.LastIndexByte(name[:end], '/')
	for ; i >= 0; i = strings.LastIndexByte(name[:i], '/') {
		if ranInAll(runs, name[:i]) {
			break
		}
	}
	if i < 0 {
		return false
	}
	seen := 0
	for _, r := range runs {
		if v, _ := verdictOf(r, name); v != Missing {
			seen++
		}
	}
	return seen < len(runs) && (seen == 1 || addrInName.MatchString(name[i:]))
}

// ranInAll reports whether the test name has a verdict in each of runs.
func ranInAll(runs []*Run, name string) bool {
	for _, r := range runs {
		if v, _ := verdictOf(r, name); v == Missing {
			return false
		}
	}
	return true
}

// addrInName matches what names a test by an address: a pointer, or a
// host:port (IPv4, [IPv6] or localhost).
var addrInName = regexp.MustCompile(`0x[0-9a-f]{4,}|\b\d{1,3}(\.\d{1,3}){3}:\d+|\[[0-9a-fA-F:.]+\]:\d+|\blocalhost:\d+`)

func verdictOf(r *Run, name string) (string, int) {
	t, ok := r.Tests[name]
	if !ok || t.Verdict == "" {
		return Missing, 0
	}
	return t.Verdict, t.Races
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
