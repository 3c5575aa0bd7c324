package main

import (
	"reflect"
	"strings"
	"testing"
)

// raceOut is go test -race -json's output for a package with a racy test,
// a passing one, a skipped one and a failing subtest (abridged from a real
// run).
const raceOut = `{"Action":"start","Package":"example.com/p"}
{"Action":"run","Package":"example.com/p","Test":"TestRace"}
{"Action":"output","Package":"example.com/p","Test":"TestRace","Output":"=== RUN   TestRace\n"}
{"Action":"output","Package":"example.com/p","Test":"TestRace","Output":"==================\n"}
{"Action":"output","Package":"example.com/p","Test":"TestRace","Output":"WARNING: DATA RACE\n"}
{"Action":"output","Package":"example.com/p","Test":"TestRace","Output":"Write at 0x00c000012345 by goroutine 8:\n"}
{"Action":"output","Package":"example.com/p","Test":"TestRace","Output":"  example.com/p.TestRace.func1()\n"}
{"Action":"output","Package":"example.com/p","Test":"TestRace","Output":"      /tmp/x/p_test.go:12 +0x44\n"}
{"Action":"output","Package":"example.com/p","Test":"TestRace","Output":"\n"}
{"Action":"output","Package":"example.com/p","Test":"TestRace","Output":"Previous read at 0x00c000012345 by goroutine 7:\n"}
{"Action":"output","Package":"example.com/p","Test":"TestRace","Output":"  example.com/p.TestRace()\n"}
{"Action":"output","Package":"example.com/p","Test":"TestRace","Output":"      /tmp/x/p_test.go:9 +0x88\n"}
{"Action":"output","Package":"example.com/p","Test":"TestRace","Output":"==================\n"}
{"Action":"output","Package":"example.com/p","Test":"TestRace","Output":"    testing.go:1617: race detected during execution of test\n"}
{"Action":"output","Package":"example.com/p","Test":"TestRace","Output":"--- FAIL: TestRace (0.00s)\n"}
{"Action":"fail","Package":"example.com/p","Test":"TestRace","Elapsed":0}
{"Action":"run","Package":"example.com/p","Test":"TestOK"}
{"Action":"pass","Package":"example.com/p","Test":"TestOK","Elapsed":0}
{"Action":"run","Package":"example.com/p","Test":"TestSkip"}
{"Action":"skip","Package":"example.com/p","Test":"TestSkip","Elapsed":0}
{"Action":"run","Package":"example.com/p","Test":"TestSub"}
{"Action":"run","Package":"example.com/p","Test":"TestSub/a"}
{"Action":"fail","Package":"example.com/p","Test":"TestSub/a","Elapsed":0}
{"Action":"fail","Package":"example.com/p","Test":"TestSub","Elapsed":0}
{"Action":"output","Package":"example.com/p","Output":"FAIL\n"}
{"Action":"output","Package":"example.com/p","Output":"FAIL\texample.com/p\t0.02s\n"}
{"Action":"fail","Package":"example.com/p","Elapsed":0.02}
{"ImportPath":"example.com/q [example.com/q.test]","Action":"build-output","Output":"# example.com/q [example.com/q.test]\n"}
{"ImportPath":"example.com/q [example.com/q.test]","Action":"build-output","Output":"q/q.go:3:2: undefined: x\n"}
{"ImportPath":"example.com/q [example.com/q.test]","Action":"build-fail"}
{"Action":"start","Package":"example.com/q"}
{"Action":"output","Package":"example.com/q","Output":"FAIL\texample.com/q [build failed]\n"}
{"Action":"fail","Package":"example.com/q","Elapsed":0,"FailedBuild":"example.com/q [example.com/q.test]"}
`

func TestParseJSON(t *testing.T) {
	r := ParseJSON([]byte(raceOut))
	want := map[string]TestResult{
		"example.com/p TestRace":  {Verdict: Fail, Races: 1, Sites: []string{"p_test.go:12 p_test.go:9"}},
		"example.com/p TestOK":    {Verdict: Pass},
		"example.com/p TestSkip":  {Verdict: Skip},
		"example.com/p TestSub":   {Verdict: Fail},
		"example.com/p TestSub/a": {Verdict: Fail},
	}
	got := map[string]TestResult{}
	for k, v := range r.Tests {
		got[k] = *v
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tests:\ngot  %+v\nwant %+v", got, want)
	}
	if r.Races != 1 || r.OutsideRaces != 0 {
		t.Errorf("races %d, outside %d; want 1, 0", r.Races, r.OutsideRaces)
	}
	if !reflect.DeepEqual(r.Packages, map[string]string{"example.com/p": Fail, "example.com/q": Fail}) {
		t.Errorf("packages %v", r.Packages)
	}
	if msg := r.BuildFailed["example.com/q"]; !strings.Contains(msg, "q/q.go:3:2: undefined: x") {
		t.Errorf("build message %q, want go's error", msg)
	}
}

// racekit test -json reports a race after go test's own verdict: a pass
// event, then the report and a fail event. The last verdict counts.
func TestParseJSONRacekitLateFail(t *testing.T) {
	out := `{"Action":"run","Package":"example.com/p","Test":"TestX"}
{"Action":"pass","Package":"example.com/p","Test":"TestX","Elapsed":0}
{"Action":"output","Package":"example.com/p","Test":"TestX","Output":"WARNING: DATA RACE (observed by fasttrack, 2 occurrences)\n"}
{"Action":"output","Package":"example.com/p","Test":"TestX","Output":"Read at 0x3d4b4f5544c8 by goroutine G64 (event 8788):\n"}
{"Action":"output","Package":"example.com/p","Test":"TestX","Output":"  example.com/p.(*T).Err()\n"}
{"Action":"output","Package":"example.com/p","Test":"TestX","Output":"      /tmp/m00/context.go:80:41\n"}
{"Action":"output","Package":"example.com/p","Test":"TestX","Output":"\n"}
{"Action":"output","Package":"example.com/p","Test":"TestX","Output":"Previous write at 0x3d4b4f5544c8 by goroutine G63 (event 8759):\n"}
{"Action":"output","Package":"example.com/p","Test":"TestX","Output":"  example.com/p.(*T).cancel()\n"}
{"Action":"output","Package":"example.com/p","Test":"TestX","Output":"      /tmp/m00/context.go:68:2\n"}
{"Action":"fail","Package":"example.com/p","Test":"TestX"}
{"Action":"output","Package":"example.com/p","Output":"racekit: 1 data race outside of test execution\n"}
{"Action":"output","Package":"example.com/p","Output":"WARNING: DATA RACE\n"}
{"Action":"fail","Package":"example.com/p","Elapsed":0.5}
`
	r := ParseJSON([]byte(out))
	x := r.Tests["example.com/p TestX"]
	if x == nil || x.Verdict != Fail || x.Races != 1 {
		t.Fatalf("TestX = %+v, want fail with 1 race", x)
	}
	if !reflect.DeepEqual(x.Sites, []string{"context.go:68 context.go:80"}) {
		t.Errorf("sites %v", x.Sites)
	}
	if r.Races != 2 || r.OutsideRaces != 1 {
		t.Errorf("races %d, outside %d; want 2, 1", r.Races, r.OutsideRaces)
	}
}

func TestParseJSONTimeout(t *testing.T) {
	out := `{"Action":"run","Package":"example.com/p","Test":"TestHang"}
{"Action":"output","Package":"example.com/p","Test":"TestHang","Output":"panic: test timed out after 4m0s\n"}
{"Action":"fail","Package":"example.com/p","Test":"TestHang"}
{"Action":"fail","Package":"example.com/p"}
`
	r := ParseJSON([]byte(out))
	if !reflect.DeepEqual(r.TimedOut, []string{"example.com/p"}) || len(r.Panics) != 0 {
		t.Errorf("timed out %v, panics %v", r.TimedOut, r.Panics)
	}
}

func TestCompare(t *testing.T) {
	race := &Run{Tests: map[string]*TestResult{
		"p A": {Verdict: Pass},
		"p B": {Verdict: Fail, Races: 1},
		"p C": {Verdict: Skip},
		"p D": {Verdict: Pass},
	}}
	rk := []*Run{
		{Tests: map[string]*TestResult{"p A": {Verdict: Pass}, "p B": {Verdict: Fail, Races: 2}, "p C": {Verdict: Skip}, "p D": {Verdict: Pass}}},
		{Tests: map[string]*TestResult{"p A": {Verdict: Pass}, "p B": {Verdict: Pass}, "p C": {Verdict: Skip}, "p D": {Verdict: Pass}}},
		// D did not run (its package failed to build, say); E ran only here.
		{Tests: map[string]*TestResult{"p A": {Verdict: Pass}, "p B": {Verdict: Fail, Races: 1}, "p C": {Verdict: Skip}, "p E": {Verdict: Pass}}},
	}
	c := Compare(race, rk)
	if c.Tests != 4 || c.Union != 5 || c.Same != 2 {
		t.Errorf("tests %d union %d same %d; want 4 5 2", c.Tests, c.Union, c.Same)
	}
	want := []TestDiff{
		{Test: "p B", Race: Fail, Racekit: []string{Fail, Pass, Fail}, RaceRaces: 1, RacekitRaces: []int{2, 0, 1}},
		{Test: "p D", Race: Pass, Racekit: []string{Pass, Pass, Missing}},
		{Test: "p E", Race: Missing, Racekit: []string{Missing, Missing, Pass}},
	}
	if !reflect.DeepEqual(c.Differ, want) {
		t.Errorf("differ:\ngot  %+v\nwant %+v", c.Differ, want)
	}
}

// Subtests named by values that change from run to run (testify's
// "Contains([]*A{(*A)(0xc000...)})") are seen in one run each, under a
// parent every run has: they are counted as unstable, not as tests that
// differ. A subtest whose parent is missing somewhere (its package did not
// build) still differs.
func TestCompareUnstableNames(t *testing.T) {
	run := func(addr string, parent bool) *Run {
		r := &Run{Tests: map[string]*TestResult{"p T/(0x" + addr + ")": {Verdict: Pass}, "q U/sub": {Verdict: Pass}}}
		if parent {
			r.Tests["p T"] = &TestResult{Verdict: Pass}
			r.Tests["q U"] = &TestResult{Verdict: Pass}
		}
		return r
	}
	race := run("c000", true)
	rk := []*Run{run("a1", true), run("b2", true), {Tests: map[string]*TestResult{"p T": {Verdict: Pass}, "p T/(0xd3)": {Verdict: Pass}}}}
	c := Compare(race, rk)
	if c.Unstable != 4 || c.Union != 3 || c.Same != 1 {
		t.Errorf("unstable %d union %d same %d; want 4 3 1 (p T same; q U and q U/sub missing in run 3)", c.Unstable, c.Union, c.Same)
	}
	for _, d := range c.Differ {
		if strings.Contains(d.Test, "0x") {
			t.Errorf("an unstable name differs: %+v", d)
		}
	}
}

// A subtest named by a function's address is the same in racekit's three
// runs (one binary) and another under -race: unstable too.
func TestCompareAddressNames(t *testing.T) {
	race := &Run{Tests: map[string]*TestResult{"p T": {Verdict: Pass}, "p T/f(0x761520)": {Verdict: Pass}}}
	rk := func() *Run {
		return &Run{Tests: map[string]*TestResult{"p T": {Verdict: Pass}, "p T/f(0x4b5f20)": {Verdict: Pass}}}
	}
	c := Compare(race, []*Run{rk(), rk(), rk()})
	if c.Unstable != 2 || c.Union != 1 || c.Same != 1 || len(c.Differ) != 0 {
		t.Errorf("unstable %d union %d same %d differ %v; want 2 1 1 none", c.Unstable, c.Union, c.Same, c.Differ)
	}
}

// An address in a middle component of a subtest's name makes the names
// below it unstable too (json-iterator's Test_marshal/[179]{0xc0000727}/
// struct_{...}): counted from the test above that component.
func TestCompareNestedAddressNames(t *testing.T) {
	run := func(addr string) *Run {
		return &Run{Tests: map[string]*TestResult{
			"p T":                                  {Verdict: Pass},
			"p T/[1]{0x" + addr + "}":              {Verdict: Pass},
			"p T/[1]{0x" + addr + "}/struct_{_A_}": {Verdict: Pass},
		}}
	}
	c := Compare(run("c000072780"), []*Run{run("16f5dd0822"), run("187c762c51"), run("8843b8db00")})
	if c.Union != 1 || c.Same != 1 || len(c.Differ) != 0 || c.Unstable != 8 {
		t.Errorf("union %d same %d differ %v unstable %d; want 1 1 none 8", c.Union, c.Same, c.Differ, c.Unstable)
	}
}

// A test that fails because another test's race was reported while it ran
// gets racekit's one line, not a report: it fails, with no race counted.
func TestParseJSONWhileRunning(t *testing.T) {
	out := `{"Action":"run","Package":"example.com/p","Test":"TestY"}
{"Action":"output","Package":"example.com/p","Test":"TestY","Output":"WARNING: DATA RACE (while this test ran: the race between a.go:3 and a.go:5, reported in TestX)\n"}
{"Action":"fail","Package":"example.com/p","Test":"TestY"}
{"Action":"fail","Package":"example.com/p","Elapsed":0.5}
`
	r := ParseJSON([]byte(out))
	y := r.Tests["example.com/p TestY"]
	if y == nil || y.Verdict != Fail || y.Races != 0 || r.Races != 0 {
		t.Fatalf("TestY = %+v, races %d: want a fail with no race counted", y, r.Races)
	}
}

// A subtest named by a URL of a test server holds '/' in its own name and
// a port that changes from run to run (held-out httprc's
// TestClient/Lookup_http://127.0.0.1:33835/int): unstable, counted from
// TestClient, the test that ran in every run. A subtest missing from one
// run with no address and a parent that ran in all still differs.
func TestCompareHostPortNames(t *testing.T) {
	run := func(port string) *Run {
		return &Run{Tests: map[string]*TestResult{
			"p TestClient": {Verdict: Pass},
			"p TestClient/Lookup_http://127.0.0.1:" + port + "/int":    {Verdict: Pass},
			"p TestClient/Lookup_http://[::1]:" + port + "/json/hello": {Verdict: Pass},
			"p TestClient/fixed": {Verdict: Pass},
		}}
	}
	last := run("40963")
	delete(last.Tests, "p TestClient/fixed")
	c := Compare(run("33835"), []*Run{run("40313"), run("45111"), last})
	if c.Union != 2 || c.Same != 1 || len(c.Differ) != 1 || c.Differ[0].Test != "p TestClient/fixed" || c.Unstable != 8 {
		t.Errorf("union %d same %d differ %v unstable %d; want 2 1 [p TestClient/fixed] 8", c.Union, c.Same, c.Differ, c.Unstable)
	}
}
