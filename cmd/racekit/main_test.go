package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/racekit/racekit/report/sarif/sariftest"

	"github.com/racekit/racekit/confirm"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/gen"
	"github.com/racekit/racekit/report"
	"github.com/racekit/racekit/trace"
	"github.com/racekit/racekit/trace/tracefile"
)

// These tests run the racekit binary the way users and CI do: real files,
// real exit codes.

var racekitBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "racekit-cmd-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// A normal exit of an instrumented program waits GORACE's
	// atexit_sleep_ms, a second unless set, as under -race (rt/exit.go,
	// tested by e2e's TestExitWait); the commands here run many programs.
	if _, ok := os.LookupEnv("GORACE"); !ok {
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	racekitBin = filepath.Join(dir, "racekit")
	if out, err := exec.Command("go", "build", "-o", racekitBin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building racekit: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// racekit runs the binary and returns stdout, stderr and the exit code.
func racekit(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(racekitBin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("racekit %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

func analyzeJSON(t *testing.T, args ...string) (report.JSONReport, int) {
	t.Helper()
	out, stderr, code := racekit(t, append([]string{"analyze", "--format=json"}, args...)...)
	var rep report.JSONReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("analyze %v: bad JSON (%v); stderr: %s", args, err, stderr)
	}
	return rep, code
}

// linePairs returns each detector's distinct races as sorted "a-b" line pairs.
func linePairs(rep report.JSONReport) map[string][]string {
	m := map[string][]string{}
	for _, r := range rep.Races {
		a, b := r.Previous.Site.Line, r.Current.Site.Line
		if a > b {
			a, b = b, a
		}
		m[r.Detector] = append(m[r.Detector], fmt.Sprintf("%d-%d", a, b))
	}
	for _, v := range m {
		slices.Sort(v)
	}
	return m
}

func TestAnalyzeRaceFuzzerFigure1(t *testing.T) {
	rep, code := analyzeJSON(t, "--algo=hb,fasttrack,lockset,hybrid", "../../examples/racefuzzer-fig1.rktx")
	if code != exitRaces {
		t.Errorf("exit %d, want %d", code, exitRaces)
	}
	got := linePairs(rep)
	want := map[string][]string{
		"hb":        {"5-7"},
		"fasttrack": {"5-7"},
		"lockset":   {"5-7"},
		"hybrid":    {"1-10", "5-7"},
	}
	for d, w := range want {
		if !slices.Equal(got[d], w) {
			t.Errorf("%s: got %v, want %v", d, got[d], w)
		}
	}
	for _, r := range rep.Races {
		wantEv := map[string]string{"hb": "observed", "fasttrack": "observed", "lockset": "potential", "hybrid": "potential"}[r.Detector]
		if r.Evidence != wantEv {
			t.Errorf("%s finding has evidence %q, want %q", r.Detector, r.Evidence, wantEv)
		}
	}
}

func TestAnalyzeTextReport(t *testing.T) {
	out, _, code := racekit(t, "analyze", "../../examples/racefuzzer-fig1.rktx")
	if code != exitRaces {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{
		"WARNING: DATA RACE (observed by fasttrack)",
		"Write at 0x1018 (z) by goroutine T2",
		"fig1.go:7",
		"Previous read at 0x1018 (z) by goroutine T1",
		"fig1.go:5",
		"Goroutine T2 (created by goroutine main at):",
		"fasttrack: 1 distinct race(s), 1 dynamic",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

// Every detector finds exactly the planted races of generated traces, in
// every format the trace can be converted to.
func TestGenAnalyzeFindsPlantedRaces(t *testing.T) {
	dir := t.TempDir()
	for _, shape := range []string{"flat", "tree", "waves"} {
		rkt := filepath.Join(dir, shape+".rkt")
		if _, stderr, code := racekit(t, "gen", "-events", "20k", "-shape", shape, "-seed", "7", "-o", rkt); code != 0 {
			t.Fatalf("gen: exit %d: %s", code, stderr)
		}
		var truth gen.Truth
		b, err := os.ReadFile(rkt + ".truth.json")
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &truth); err != nil {
			t.Fatal(err)
		}
		want := truth.Pairs()
		if len(want) == 0 {
			t.Fatalf("%s: no race planted", shape)
		}
		rktx := filepath.Join(dir, shape+".rktx")
		if _, stderr, code := racekit(t, "convert", rkt, rktx); code != 0 {
			t.Fatalf("convert: exit %d: %s", code, stderr)
		}
		for _, file := range []string{rkt, rktx} {
			rep, code := analyzeJSON(t, "--algo=hb,fasttrack,lockset,hybrid", file)
			if code != exitRaces {
				t.Errorf("%s: exit %d, want %d", file, code, exitRaces)
			}
			got := map[string][]finding.Pair{}
			for _, r := range rep.Races {
				got[r.Detector] = append(got[r.Detector], finding.MakePair(r.Previous.Site.ID, r.Current.Site.ID))
			}
			// hb is exact; fasttrack and hybrid report the same pairs on
			// these traces (the generator's defaults are lockset-clean).
			for _, d := range []string{"hb", "fasttrack", "hybrid"} {
				ps := got[d]
				finding.SortPairs(ps)
				if !slices.Equal(ps, want) {
					t.Errorf("%s %s: got %v, want planted %v", filepath.Base(file), d, ps, want)
				}
			}
			// Eraser never warns for a race whose only second access is a
			// read right after the owner's write (Exclusive → Shared, no
			// warning: its known blind spot), so it reports a subset.
			for _, p := range got["lockset"] {
				if !slices.Contains(want, p) {
					t.Errorf("%s lockset: %v is not a planted race", filepath.Base(file), p)
				}
			}
		}
	}
}

// Every LiteRace sampler keeps all synchronization, so the races found on
// a sampled trace are races of the full trace; TL-Ad, which logs the first
// calls of every function in every goroutine, still finds some.
func TestAnalyzeSampledFindsNoFalseRace(t *testing.T) {
	rkt := filepath.Join(t.TempDir(), "g.rkt")
	if _, stderr, code := racekit(t, "gen", "-events", "50k", "-seed", "3", "-o", rkt); code != 0 {
		t.Fatalf("gen: %s", stderr)
	}
	pairs := func(args ...string) []finding.Pair {
		rep, _ := analyzeJSON(t, append([]string{"--algo=hb"}, append(args, rkt)...)...)
		var ps []finding.Pair
		for _, r := range rep.Races {
			ps = append(ps, finding.MakePair(r.Previous.Site.ID, r.Current.Site.ID))
		}
		return ps
	}
	full := pairs()
	if len(full) == 0 {
		t.Fatal("no race in the full trace")
	}
	for _, s := range []string{"tl-ad", "tl-fx", "g-ad", "g-fx", "rnd10", "rnd25", "ucp", "gs-ad", "tp-ad"} {
		got := pairs("--sample="+s, "--seed=5")
		for _, p := range got {
			if !slices.Contains(full, p) {
				t.Errorf("--sample=%s: %v is not a race of the full trace", s, p)
			}
		}
		if s == "tl-ad" && len(got) == 0 {
			t.Errorf("--sample=tl-ad found none of the %d races", len(full))
		}
	}
}

// TREE drops events without losing a race: the same site pairs with and
// without --filter=tree, for each detector alone and for all at once.
func TestAnalyzeTreeLosesNoRace(t *testing.T) {
	rkt := filepath.Join(t.TempDir(), "g.rkt")
	if _, stderr, code := racekit(t, "gen", "-events", "50k", "-seed", "4", "-o", rkt); code != 0 {
		t.Fatalf("gen: %s", stderr)
	}
	pairs := func(args ...string) map[string][]finding.Pair {
		rep, _ := analyzeJSON(t, append(args, rkt)...)
		ps := map[string][]finding.Pair{}
		for _, r := range rep.Races {
			ps[r.Detector] = append(ps[r.Detector], finding.MakePair(r.Previous.Site.ID, r.Current.Site.ID))
		}
		for _, v := range ps {
			finding.SortPairs(v)
		}
		return ps
	}
	for _, algo := range []string{"hb", "hybrid", "lockset", "hb,hybrid,lockset"} {
		full, filtered := pairs("--algo="+algo), pairs("--algo="+algo, "--filter=tree")
		for d, want := range full {
			if !slices.Equal(filtered[d], want) {
				t.Errorf("--algo=%s: %s with TREE %v, without %v", algo, d, filtered[d], want)
			}
		}
		if len(full) == 0 {
			t.Errorf("--algo=%s: no race on the trace", algo)
		}
	}
}

// examples/wcp-predicted.rktx: hb sees no race, wcp predicts (1,8).
func TestAnalyzeWCPPredicts(t *testing.T) {
	rep, code := analyzeJSON(t, "--algo=hb,wcp", filepath.Join("..", "..", "examples", "wcp-predicted.rktx"))
	if code != exitRaces || len(rep.Races) != 1 {
		t.Fatalf("exit %d, races %+v; want one wcp race", code, rep.Races)
	}
	r := rep.Races[0]
	if r.Detector != "wcp" || r.Evidence != "predicted" || r.Previous.Site.Line != 1 || r.Current.Site.Line != 8 {
		t.Errorf("got %+v, want wcp predicted wcp.go:1 ~ wcp.go:8", r)
	}
}

func TestGenRaceFreeIsClean(t *testing.T) {
	out := filepath.Join(t.TempDir(), "clean.rkt")
	if _, stderr, code := racekit(t, "gen", "-events", "20k", "-racy", "0", "-o", out); code != 0 {
		t.Fatalf("gen: %s", stderr)
	}
	rep, code := analyzeJSON(t, "--algo=hb,fasttrack,lockset,hybrid", out)
	if code != exitOK || len(rep.Races) != 0 {
		t.Errorf("race-free trace: exit %d, races %v", code, rep.Races)
	}
}

// A trace cut off mid-block by a crash is read to its last whole block with
// a warning; a corrupted one is an error naming the offset.
func TestAnalyzeDamagedTraces(t *testing.T) {
	dir := t.TempDir()
	full := filepath.Join(dir, "full.rkt")
	if _, stderr, code := racekit(t, "gen", "-events", "200k", "-o", full); code != 0 {
		t.Fatalf("gen: %s", stderr)
	}
	data, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.rkt")
	if err := os.WriteFile(cut, data[:len(data)*2/3], 0o666); err != nil {
		t.Fatal(err)
	}
	rep, code := analyzeJSON(t, "--algo=fasttrack", cut)
	_, stderr, _ := racekit(t, "analyze", cut)
	if code == exitError || !strings.Contains(stderr, "warning:") || !strings.Contains(stderr, "cut.rkt") {
		t.Errorf("cut trace: exit %d, stderr %q", code, stderr)
	}
	if rep.Events == 0 || rep.Events >= 200_000 {
		t.Errorf("cut trace: read %d events, want a proper prefix", rep.Events)
	}

	bad := filepath.Join(dir, "bad.rkt")
	corrupt := slices.Clone(data)
	corrupt[len(corrupt)/2] ^= 0x55
	if err := os.WriteFile(bad, corrupt, 0o666); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = racekit(t, "analyze", bad)
	if code != exitError || !strings.Contains(stderr, "bad.rkt") || !strings.Contains(stderr, "offset") {
		t.Errorf("corrupt trace: exit %d, stderr %q", code, stderr)
	}
}

func TestAnalyzeMalformedText(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.rktx")
	if err := os.WriteFile(bad, []byte("T1|w(x)|a.go:1\nT1|w(x\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := racekit(t, "analyze", bad)
	if code != exitError || !strings.Contains(stderr, "bad.rktx:2") {
		t.Errorf("exit %d, stderr %q; want exit %d naming bad.rktx:2", code, stderr, exitError)
	}
}

func TestConvertRoundTripPreservesFindings(t *testing.T) {
	dir := t.TempDir()
	src := "../../examples/racefuzzer-fig1.rktx"
	std := filepath.Join(dir, "fig1.std")
	rkt := filepath.Join(dir, "fig1.rkt")
	if _, stderr, code := racekit(t, "convert", src, rkt); code != 0 {
		t.Fatalf("convert to rkt: %s", stderr)
	}
	if _, stderr, code := racekit(t, "convert", rkt, std); code != 0 {
		t.Fatalf("convert to std: %s", stderr)
	}
	want, _ := analyzeJSON(t, "--algo=hb,hybrid", src)
	for _, f := range []string{rkt, std} {
		got, _ := analyzeJSON(t, "--algo=hb,hybrid", f)
		if g, w := linePairs(got), linePairs(want); fmt.Sprint(g) != fmt.Sprint(w) {
			t.Errorf("%s: %v, want %v", filepath.Base(f), g, w)
		}
	}
	// STD cannot express sync objects: strict conversion fails, naming the op.
	gen := filepath.Join(dir, "g.rkt")
	if _, stderr, code := racekit(t, "gen", "-events", "5k", "-o", gen); code != 0 {
		t.Fatal(stderr)
	}
	_, stderr, code := racekit(t, "convert", gen, filepath.Join(dir, "g.std"))
	if code != exitError || !strings.Contains(stderr, "STD") {
		t.Errorf("strict STD conversion: exit %d, stderr %q", code, stderr)
	}
	_, stderr, code = racekit(t, "convert", "--lossy", gen, filepath.Join(dir, "g.std"))
	if code != 0 || !strings.Contains(stderr, "dropped") {
		t.Errorf("lossy STD conversion: exit %d, stderr %q", code, stderr)
	}
}

func TestStats(t *testing.T) {
	out, _, code := racekit(t, "stats", "../../examples/racefuzzer-fig1.rktx")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"events     18", "goroutines 3", "locks      1", "variables  3", "  fork     2"} {
		if !strings.Contains(out, want) {
			t.Errorf("stats lacks %q:\n%s", want, out)
		}
	}
}

// A range event is counted once, with the accesses it stands for apart,
// and its site ranked by them: a trace of ranges over a large buffer is
// summarized without reading each element.
func TestStatsRanges(t *testing.T) {
	b := trace.NewBuilder()
	b.Begin("M")
	big, _ := trace.MakeSpan(1, 1<<30)          // a GiB of bytes: 2^30 accesses
	every2, _ := trace.MakeSparseSpan(16, 1000) // 1000 words
	b.Add(trace.Event{G: b.G("M"), Op: trace.OpReadRange, Obj: 0xc000100000, Value: uint64(big), Site: b.Site("scan.go:7")})
	b.Add(trace.Event{G: b.G("M"), Op: trace.OpWriteRange, Obj: 0xc000000000, Value: uint64(every2), Site: b.Site("grid.go:3")})
	b.Add(trace.Event{G: b.G("M"), Op: trace.OpRead, Obj: 0xc000000008, Site: b.Site("grid.go:4"), Flags: trace.FlagValueUnknown})
	path := filepath.Join(t.TempDir(), "r.rkt")
	if err := tracefile.Save(path, b.Trace()); err != nil {
		t.Fatal(err)
	}
	out, _, code := racekit(t, "stats", "-progress=off", path)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"events     4", "  rrange   1", "  wrange   1", "ranges     2 events standing for 1073742824 accesses",
		"variables  3", "busiest sites (accesses)\n  1073741824 (100.0%) scan.go:7\n  1000 (0.0%) grid.go:3\n  1 (0.0%) grid.go:4"} {
		if !strings.Contains(out, want) {
			t.Errorf("stats lacks %q:\n%s", want, out)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"nosuchcommand"},
		{"analyze"},
		{"analyze", "--algo=nosuch", "x.rkt"},
		{"analyze", "--nosuchflag", "x.rkt"},
		{"analyze", "--sample=nosuch", "x.rkt"},
		{"analyze", "--filter=nosuch", "x.rkt"},
		{"gen"},
	} {
		if _, _, code := racekit(t, args...); code != exitUsage {
			t.Errorf("racekit %v: exit %d, want %d", args, code, exitUsage)
		}
	}
	if _, stderr, code := racekit(t, "analyze", "/nonexistent.rkt"); code != exitError || !strings.HasPrefix(stderr, "racekit analyze: ") {
		t.Errorf("missing file: exit %d, stderr %q", code, stderr)
	}
	out, _, code := racekit(t, "help", "analyze")
	if code != 0 || !strings.Contains(out, "usage: racekit analyze") || !strings.Contains(out, "\n  -algo string\n") {
		t.Errorf("help analyze: exit %d\n%s", code, out)
	}
	out, _, _ = racekit(t, "help", "exit")
	if !strings.Contains(out, "66") {
		t.Errorf("help exit does not document 66:\n%s", out)
	}
}

// racekit vet runs RELAY on RELAY's Figure 1 ported to Go: one warning, on
// the unlocked write to stats, and valid SARIF 2.1.0 naming both accesses.
func TestVetFigure1(t *testing.T) {
	dir := "../../static/testdata/src/figure1"
	out, stderr, code := racekit(t, "vet", dir)
	if code != exitRaces || !strings.Contains(out, "figure1.go:30:11: potential race on d.priv.stats.rxPackets") {
		t.Fatalf("vet: exit %d\nstdout: %s\nstderr: %s", code, out, stderr)
	}
	if n := strings.Count(out, "potential race"); n != 1 {
		t.Errorf("vet reported %d warnings, want 1:\n%s", n, out)
	}
	out, _, code = racekit(t, "vet", "--sarif", dir)
	var sarif struct {
		Version string `json:"version"`
		Runs    []struct {
			Results []struct {
				RuleID    string `json:"ruleId"`
				Locations []struct {
					PhysicalLocation struct {
						Region struct {
							StartLine int `json:"startLine"`
						} `json:"region"`
					} `json:"physicalLocation"`
				} `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &sarif); err != nil {
		t.Fatalf("--sarif output is not JSON: %v\n%s", err, out)
	}
	if code != exitRaces || sarif.Version != "2.1.0" || len(sarif.Runs) != 1 || len(sarif.Runs[0].Results) != 1 ||
		sarif.Runs[0].Results[0].Locations[0].PhysicalLocation.Region.StartLine != 30 {
		t.Errorf("SARIF: exit %d, %+v", code, sarif)
	}
}

// Reports say where a raced address is: in a package-level variable
// (trace.GlobalName, with the offset inside it), or in a heap block, the
// last allocation before the accesses that holds it (not one after them:
// the memory reused), with its size and where it was allocated.
func TestAnalyzeLocations(t *testing.T) {
	path := filepath.Join(t.TempDir(), "loc.rktx")
	src := `#!addr "global example.com/p.g size=16" 0x500
T1|alloc(0x1000=64)|a.go:1:1
T1|fork(T2)|a.go:2:1
T2|w(0x1010)|a.go:3:1
T2|w(0x508)|a.go:6:1
T1|w(0x1010)|a.go:4:1
T1|w(0x508)|a.go:5:1
T1|alloc(0x1000=32)|a.go:7:1
`
	if err := os.WriteFile(path, []byte(src), 0o666); err != nil {
		t.Fatal(err)
	}
	out, _, code := racekit(t, "analyze", path)
	if code != exitRaces {
		t.Fatalf("exit %d, want %d\n%s", code, exitRaces, out)
	}
	for _, want := range []string{
		"Write at 0x508 (global example.com/p.g+8) by goroutine T1",
		"Previous write at 0x508 (global example.com/p.g+8) by goroutine T2",
		"Location is heap block of size 64 at 0x1000 allocated by goroutine T1 at:\n  a.go:1:1\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "Location is") != 1 {
		t.Errorf("want one heap block (the global's race has a name):\n%s", out)
	}
	rep, _ := analyzeJSON(t, path)
	blocks := 0
	for _, r := range rep.Races {
		if r.Block != nil {
			blocks++
			if r.Block.Addr != "0x1000" || r.Block.Size != 64 || r.Block.Site.Line != 1 {
				t.Errorf("JSON block %+v", *r.Block)
			}
		} else if r.Object != "global example.com/p.g+8" {
			t.Errorf("JSON object %q", r.Object)
		}
	}
	if blocks != 1 {
		t.Errorf("JSON: %d races with a block, want 1", blocks)
	}
	// From standard input too: the allocations are kept as the trace is
	// read (detect/alloc.Log), not read again from a file.
	cmd := exec.Command(racekitBin, "analyze", "-progress=off", "-")
	cmd.Stdin = strings.NewReader(src)
	stdin, _ := cmd.Output()
	if !strings.Contains(string(stdin), "Location is heap block of size 64 at 0x1000 allocated by goroutine T1 at:\n  a.go:1:1\n") {
		t.Errorf("from stdin, no heap block:\n%s", stdin)
	}
}

// TestAnalyzeStopsAtMemLimit: racekit analyze is under the same memory
// guard as racekit test (analyze.RunGuarded): past RACEKIT_ANALYSIS_MEM it
// stops, says so, and reports the races of what it read. It had no guard
// and took 12 GB of the machine on a 2.4 GB trace.
func TestAnalyzeStopsAtMemLimit(t *testing.T) {
	rkt := filepath.Join(t.TempDir(), "g.rkt")
	if _, stderr, code := racekit(t, "gen", "-events", "600k", "-seed", "3", "-o", rkt); code != 0 {
		t.Fatalf("gen: %s", stderr)
	}
	cmd := exec.Command(racekitBin, "analyze", "-progress=off", rkt)
	cmd.Env = append(os.Environ(), "RACEKIT_ANALYSIS_MEM=1K")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	if !strings.Contains(errb.String(), "warning: the analysis stopped after 262144 events") {
		t.Errorf("no stop at the first look at the heap (262144 events); stderr:\n%s", errb.String())
	}
	// Without the limit, the same trace is read to its end.
	_, stderr, _ := racekit(t, "analyze", "-progress=off", rkt)
	if strings.Contains(stderr, "stopped") {
		t.Errorf("stopped without a limit:\n%s", stderr)
	}
}

// racekit test -confirm re-executes each race it reported and gives it a
// verdict, for real: fuzzobs's race on the flag is made to happen
// (confirmed, with a replay command restricted to its test); its race on
// the data, published through the flag, cannot be brought back to back
// and stays observed. A budget too short for any run leaves every run out
// and says so, and the verdicts stay those of the recorded run.
func TestTestConfirm(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs instrumented test binaries")
	}
	flag := markedLines(t, "testdata/fuzzobs/fuzzobs.go", "FLAG")
	data := markedLines(t, "testdata/fuzzobs/fuzzobs.go", "DATA")
	for _, tc := range []struct {
		budget        string
		flag, data    string // verdicts
		runs, skipped int
	}{
		{"2m", "confirmed", "observed", 10, 0},
		{"1ns", "observed", "observed", 0, 10},
	} {
		out := filepath.Join(t.TempDir(), "verdicts.json")
		html := filepath.Join(t.TempDir(), "html")
		stdout, stderr, code := racekit(t, "test", "-q", "--confirm", "--budget", tc.budget, "--confirm-json", out, "--html", html, "./testdata/fuzzobs")
		if code != exitError {
			t.Errorf("budget %s: exit %d, want %d (the races fail the package)", tc.budget, code, exitError)
		}
		var res confirm.FuzzResult
		data0, err := os.ReadFile(out)
		if err == nil {
			err = json.Unmarshal(data0, &res)
		}
		if err != nil {
			t.Fatalf("budget %s: %v\nstdout:\n%s\nstderr:\n%s", tc.budget, err, stdout, stderr)
		}
		got := map[string]confirm.FuzzPair{}
		for _, p := range res.Pairs {
			got[confirm.PairKey(p.Pair)] = p
		}
		for _, w := range []struct{ name, pair, verdict string }{
			{"flag", flag[0] + "~" + flag[1], tc.flag},
			{"data", data[0] + "~" + data[1], tc.data},
		} {
			p, ok := got[confirm.PairKey(w.pair)]
			switch {
			case !ok:
				t.Errorf("budget %s: no verdict on the %s race %s; got %+v", tc.budget, w.name, w.pair, res.Pairs)
			case p.Verdict != w.verdict || p.Runs != tc.runs || p.Skipped != tc.skipped || p.Test != "TestGet":
				t.Errorf("budget %s: %s race: %s in %d runs (%d left out) of %q, want %s in %d (%d)", tc.budget, w.name, p.Verdict, p.Runs, p.Skipped, p.Test, w.verdict, tc.runs, tc.skipped)
			case p.Verdict == "confirmed" && !strings.Contains(p.Replay, "-run '^TestGet$'"):
				t.Errorf("replay command %q does not restrict the run to TestGet", p.Replay)
			}
		}
		summary := fmt.Sprintf("racekit: 2 race(s): %d confirmed, %d observed, 0 predicted", map[bool]int{true: 1}[tc.flag == "confirmed"], map[bool]int{true: 2, false: 1}[tc.flag == "observed"])
		if !strings.Contains(stdout, summary) {
			t.Errorf("budget %s: stdout lacks %q:\n%s", tc.budget, summary, stdout)
		}
		// -html draws the confirmed race's run: its two accesses marked.
		pages, _ := filepath.Glob(filepath.Join(html, "clip-*.html"))
		if wantPages := map[bool]int{true: 1}[tc.flag == "confirmed"]; len(pages) != wantPages {
			t.Errorf("budget %s: %d race pages, want %d", tc.budget, len(pages), wantPages)
		} else if wantPages == 1 {
			page, _ := os.ReadFile(pages[0])
			if !strings.Contains(string(page), ">E1<") || !strings.Contains(string(page), ">E2<") || !strings.Contains(string(page), "fuzzobs.go:27") {
				t.Errorf("the race page does not mark both accesses:\n%s", page)
			}
		}
		if tc.skipped > 0 && !strings.Contains(stdout, "(10 more left out: the time budget ran out)") {
			t.Errorf("budget %s: stdout does not say runs were left out:\n%s", tc.budget, stdout)
		}
	}
}

// racekit test -sarif writes the races it reported as a SARIF log the
// SARIF 2.1.0 schema accepts, with -confirm's verdicts, for real:
// fuzzobs's race on the flag confirmed (with its probability and replay
// command), its race on the data observed, each at both of its accesses
// with both accesses' stacks.
func TestTestSARIF(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs instrumented test binaries")
	}
	flag := markedLines(t, "testdata/fuzzobs/fuzzobs.go", "FLAG")
	data := markedLines(t, "testdata/fuzzobs/fuzzobs.go", "DATA")
	out := filepath.Join(t.TempDir(), "races.sarif")
	stdout, stderr, code := racekit(t, "test", "-q", "-confirm", "-sarif", out, "./testdata/fuzzobs")
	if code != exitError {
		t.Errorf("exit %d, want %d (the races fail the package)", code, exitError)
	}
	doc, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}

	// The schema: report/sarif/sariftest/README.md says where it came from.
	if err := sariftest.Validate(doc); err != nil {
		t.Errorf("invalid SARIF: %v\n%s", err, doc)
	}

	type location struct {
		PhysicalLocation struct {
			ArtifactLocation struct {
				URI       string `json:"uri"`
				URIBaseID string `json:"uriBaseId"`
			} `json:"artifactLocation"`
			Region struct {
				StartLine int `json:"startLine"`
			} `json:"region"`
		} `json:"physicalLocation"`
	}
	var log struct {
		Runs []struct {
			OriginalURIBaseIDs map[string]struct {
				URI string `json:"uri"`
			} `json:"originalUriBaseIds"`
			Results []struct {
				Locations        []location `json:"locations"`
				RelatedLocations []location `json:"relatedLocations"`
				CodeFlows        []struct {
					ThreadFlows []struct {
						Locations []struct {
							Location location `json:"location"`
						} `json:"locations"`
					} `json:"threadFlows"`
				} `json:"codeFlows"`
				Properties map[string]any `json:"properties"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(doc, &log); err != nil {
		t.Fatal(err)
	}
	if len(log.Runs) != 1 {
		t.Fatalf("%d runs, want 1:\n%s", len(log.Runs), doc)
	}
	run := log.Runs[0]
	// site is l as an absolute file:line, as markedLines gives them.
	site := func(l location) string {
		a := l.PhysicalLocation.ArtifactLocation
		file, err := url.PathUnescape(a.URI)
		if err != nil {
			t.Fatal(err)
		}
		if a.URIBaseID != "" {
			base, err := url.Parse(run.OriginalURIBaseIDs[a.URIBaseID].URI)
			if err != nil {
				t.Fatal(err)
			}
			file = base.Path + file
		}
		return fmt.Sprintf("%s:%d", filepath.FromSlash(file), l.PhysicalLocation.Region.StartLine)
	}
	got := map[string]string{} // verdict by line pair
	for _, r := range run.Results {
		if len(r.Locations) != 1 || len(r.RelatedLocations) != 1 || len(r.CodeFlows) != 1 || len(r.CodeFlows[0].ThreadFlows) != 2 {
			t.Errorf("result %v: want one location, one related location and one codeFlow of two threadFlows:\n%s", r.Properties, doc)
			continue
		}
		accesses := []string{site(r.Locations[0]), site(r.RelatedLocations[0])}
		for i, tf := range r.CodeFlows[0].ThreadFlows {
			n := len(tf.Locations)
			if n < 2 || site(tf.Locations[n-1].Location) != accesses[i] || !strings.Contains(site(tf.Locations[0].Location), "fuzzobs_test.go:") {
				t.Errorf("threadFlow %d of the race at %s: want the test's goroutine outermost and the access innermost:\n%s", i, accesses, doc)
			}
		}
		if r.Properties["test"] != "TestGet" || r.Properties["package"] != "github.com/racekit/racekit/cmd/racekit/testdata/fuzzobs" {
			t.Errorf("race at %s: test %v, package %v", accesses, r.Properties["test"], r.Properties["package"])
		}
		verdict, _ := r.Properties["verdict"].(string)
		if verdict == "confirmed" {
			replay, _ := r.Properties["replay"].(string)
			p, _ := r.Properties["probability"].(float64)
			if !strings.HasPrefix(replay, "racekit replay ") || p <= 0 {
				t.Errorf("confirmed race at %s: replay %q, probability %v", accesses, replay, r.Properties["probability"])
			}
		}
		slices.Sort(accesses)
		got[strings.Join(accesses, "~")] = verdict
	}
	want := map[string]string{}
	for _, w := range []struct {
		lines   []string
		verdict string
	}{{flag, "confirmed"}, {data, "observed"}} {
		lines := slices.Clone(w.lines)
		slices.Sort(lines)
		want[strings.Join(lines, "~")] = w.verdict
	}
	if len(run.Results) != 2 || !maps.Equal(got, want) {
		t.Errorf("%d results, verdicts %v, want %v\nstdout:\n%s", len(run.Results), got, want, stdout)
	}
}

// A race the run does not show but -confirm makes happen fails the
// command, as a race the run showed would: confirmonly's worker runs first
// under Go's scheduler (the lock then orders the two), and RaceFuzzer's
// schedules find the other order. Should a busy machine let the run show
// the race itself, the exit status is the same.
func TestTestConfirmBeyondRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs instrumented test binaries")
	}
	marked := markedLines(t, "testdata/confirmonly/confirmonly.go", "RACE")
	out := filepath.Join(t.TempDir(), "verdicts.json")
	sarifOut := filepath.Join(t.TempDir(), "races.sarif")
	stdout, stderr, code := racekit(t, "test", "-q", "--confirm", "--confirm-json", out, "--sarif", sarifOut, "./testdata/confirmonly")
	if code != exitError {
		t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitError, stdout, stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var res confirm.FuzzResult
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	worker := confirm.PairKey(marked[0] + "~" + marked[0])
	worker = worker[:strings.Index(worker, "~")] // the worker's write, file:line
	found := false
	for _, p := range res.Pairs {
		if p.Verdict == "confirmed" && strings.Contains(confirm.PairKey(p.Pair), worker) {
			found = true
		}
	}
	if !found {
		t.Errorf("no confirmed race with the worker's write %s: %+v", worker, res.Pairs)
	}
	if !strings.Contains(stdout, "WARNING: DATA RACE") && !strings.Contains(stderr, "races beyond the run's") {
		t.Errorf("a clean run's confirmed race not said to fail the command:\nstderr:\n%s", stderr)
	}
	// -sarif has the confirmed race too, valid without its stacks.
	doc, err := os.ReadFile(sarifOut)
	if err != nil {
		t.Fatal(err)
	}
	if err := sariftest.Validate(doc); err != nil {
		t.Errorf("invalid SARIF: %v\n%s", err, doc)
	}
	if !strings.Contains(string(doc), `"verdict": "confirmed"`) {
		t.Errorf("no confirmed race in the SARIF log:\n%s", doc)
	}
}

// racekit test -confirm -deadlocks makes the predicted lock-order cycle
// happen: the plain run of testdata/abba never deadlocks, iGoodlock
// predicts the cycle on its trace, and DeadlockFuzzer's runs deadlock with
// both goroutines blocked at the second Lock; a replay command follows.
func TestTestConfirmDeadlocks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs instrumented test binaries")
	}
	requested := markedLines(t, "testdata/abba/abba_test.go", "REQUESTED")[0]
	stdout, stderr, code := racekit(t, "test", "-q", "--deadlocks", "--confirm", "./testdata/abba")
	if code != exitError {
		t.Errorf("exit %d, want %d", code, exitError)
	}
	for _, want := range []string{"DEADLOCK (confirmed: ", "requests the lock at testdata/abba/" + filepath.Base(requested), "Replay: racekit replay -seed ", "1 lock-order cycle(s), 1 confirmed"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s\nstderr:\n%s", want, stdout, stderr)
		}
	}
}
