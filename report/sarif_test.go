package report

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/racekit/racekit/report/sarif/sariftest"

	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/report/sarif"
	"github.com/racekit/racekit/trace"
)

// sarifRaces are a confirmed race with stacks below the root, and an
// observed one whose previous access has no stack and whose current
// access's caller is outside the root, in a directory with a space.
func sarifRaces() []DynamicRace {
	return []DynamicRace{{
		Package: "example.com/m/p", Test: "TestGet/sub", Detector: "fasttrack", Object: "global example.com/m/p.ready",
		Count: 2, Pair: "/src/m/p/p.go:20:5:r~/src/m/p/p.go:27:3:w", Verdict: "confirmed",
		Runs: 10, Created: 8, Probability: 0.8, Replay: "racekit replay -seed 1 -pair X example.com/m/p -- -run '^TestGet$'",
		Cur: RaceAccess{Kind: "read", Goroutine: "G2", Site: trace.Site{File: "/src/m/p/p.go", Line: 20, Col: 5, Func: "example.com/m/p.Get"},
			Stack: []trace.Site{
				{File: "/src/m/p/p.go", Line: 20, Col: 5, Func: "example.com/m/p.Get"},
				{File: "/src/m/p/p_test.go", Line: 19, Col: 5, Func: "example.com/m/p.TestGet.func2"},
			}},
		Prev: RaceAccess{Kind: "write", Goroutine: "G1", Site: trace.Site{File: "/src/m/p/p.go", Line: 27, Col: 3, Func: "example.com/m/p.Get"},
			Stack: []trace.Site{
				{File: "/src/m/p/p.go", Line: 27, Col: 3, Func: "example.com/m/p.Get"},
				{File: "/src/m/p/p_test.go", Line: 15, Col: 5, Func: "example.com/m/p.TestGet.func1"},
			}},
	}, {
		Package: "example.com/m/p", Detector: "hb", Object: "x[2]", Count: 1, Verdict: "observed",
		Cur: RaceAccess{Kind: "write", Goroutine: "G5", Site: trace.Site{File: "/src/m/p/q.go", Line: 4, Func: "example.com/m/p.set"},
			Stack: []trace.Site{
				{File: "/src/m/p/q.go", Line: 4, Func: "example.com/m/p.set"},
				{File: "/go/pkg/mod/example.org/dep dir/d.go", Line: 9, Col: 1, Func: "example.org/dep.Run"},
				{File: trace.FrameworkFile, Func: "testing.tRunner"},
			}},
		Prev: RaceAccess{Kind: "read", Goroutine: "main", Site: trace.Site{File: "/src/m/p/q.go", Line: 8}},
	}}
}

// TestSARIFSchema: racekit's SARIF validates against the SARIF 2.1.0
// schema, and the validator is active: the same log without its version,
// or with a line 0, does not.
func TestSARIFSchema(t *testing.T) {
	for _, races := range [][]DynamicRace{nil, sarifRaces()} {
		var b bytes.Buffer
		if err := SARIF(&b, races, nil, "/src/m"); err != nil {
			t.Fatal(err)
		}
		if err := sariftest.Validate(b.Bytes()); err != nil {
			t.Errorf("%d races: invalid SARIF: %v\n%s", len(races), err, b.String())
		}
	}
	var b bytes.Buffer
	if err := SARIF(&b, sarifRaces(), nil, ""); err != nil {
		t.Fatal(err)
	}
	if err := sariftest.Validate(b.Bytes()); err != nil {
		t.Errorf("no root: invalid SARIF: %v\n%s", err, b.String())
	}

	var doc map[string]any
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	delete(doc, "version")
	broken, _ := json.Marshal(doc)
	if err := sariftest.Validate(broken); err == nil || !strings.Contains(err.Error(), "version") {
		t.Errorf("a log without its version: got %v, want a validation error naming version", err)
	}
	lineZero := bytes.Replace(b.Bytes(), []byte(`"startLine": 20,`), []byte(`"startLine": 0,`), 1)
	if bytes.Equal(lineZero, b.Bytes()) {
		t.Fatal("no startLine 20 to break")
	}
	if err := sariftest.Validate(lineZero); err == nil {
		t.Error("a region at line 0 validates")
	}
}

// TestSARIFRaces: each race is one result at the current access, the
// previous access its related location, their stacks one threadFlow each
// (outermost caller first), the files relative to %SRCROOT%, and the
// verdict, test and package (and, confirmed, the replay command and the
// probability) its properties.
func TestSARIFRaces(t *testing.T) {
	var b bytes.Buffer
	if err := SARIF(&b, sarifRaces(), nil, "/src/m"); err != nil {
		t.Fatal(err)
	}
	var log struct {
		Version string `json:"version"`
		Runs    []struct {
			Tool struct {
				Driver struct {
					Name  string `json:"name"`
					Rules []struct {
						ID string `json:"id"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			OriginalURIBaseIDs map[string]sarif.ArtifactLocation `json:"originalUriBaseIds"`
			Results            []sarif.Result                    `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(b.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	if log.Version != "2.1.0" || len(log.Runs) != 1 || log.Runs[0].Tool.Driver.Name != "racekit" ||
		len(log.Runs[0].Tool.Driver.Rules) != 1 || log.Runs[0].Tool.Driver.Rules[0].ID != SARIFRule {
		t.Fatalf("not one run of racekit with rule %s:\n%s", SARIFRule, b.String())
	}
	run := log.Runs[0]
	if got := run.OriginalURIBaseIDs[srcRoot].URI; got != "file:///src/m/" {
		t.Errorf("%s is %q, want file:///src/m/", srcRoot, got)
	}
	if len(run.Results) != 2 {
		t.Fatalf("%d results, want 2:\n%s", len(run.Results), b.String())
	}
	uri := func(l sarif.Location) string {
		if l.PhysicalLocation == nil {
			return "(none): " + l.Message.Text
		}
		p := l.PhysicalLocation
		s := p.ArtifactLocation.URI
		if p.ArtifactLocation.URIBaseID != "" {
			s = p.ArtifactLocation.URIBaseID + "/" + s
		}
		if p.Region != nil {
			s += ":" + strconv.Itoa(p.Region.StartLine)
		}
		return s
	}

	r := run.Results[0]
	if r.RuleID != SARIFRule || r.Level != "error" || len(r.Locations) != 1 || len(r.RelatedLocations) != 1 {
		t.Fatalf("confirmed race: %+v", r)
	}
	if got := uri(r.Locations[0]); got != "%SRCROOT%/p/p.go:20" || r.Locations[0].Message.Text != "read by goroutine G2" {
		t.Errorf("location: %s %q, want %%SRCROOT%%/p/p.go:20 \"read by goroutine G2\"", got, r.Locations[0].Message.Text)
	}
	rel := r.RelatedLocations[0]
	if got := uri(rel); got != "%SRCROOT%/p/p.go:27" || rel.ID != 1 || rel.Message.Text != "previous write by goroutine G1" {
		t.Errorf("related location: %s id %d %q", got, rel.ID, rel.Message.Text)
	}
	if !strings.Contains(r.Message.Text, "[previous write](1)") || !strings.Contains(r.Message.Text, "(confirmed)") {
		t.Errorf("message %q does not link the previous write or name the verdict", r.Message.Text)
	}
	if len(r.CodeFlows) != 1 || len(r.CodeFlows[0].ThreadFlows) != 2 {
		t.Fatalf("want one codeFlow of two threadFlows: %+v", r.CodeFlows)
	}
	for i, want := range [][]string{
		{"%SRCROOT%/p/p_test.go:19", "%SRCROOT%/p/p.go:20"},
		{"%SRCROOT%/p/p_test.go:15", "%SRCROOT%/p/p.go:27"},
	} {
		var got []string
		for j, l := range r.CodeFlows[0].ThreadFlows[i].Locations {
			got = append(got, uri(l.Location))
			if l.NestingLevel != j {
				t.Errorf("threadFlow %d location %d: nesting level %d", i, j, l.NestingLevel)
			}
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("threadFlow %d: %v, want %v (outermost first)", i, got, want)
		}
	}
	for k, want := range map[string]any{
		"verdict": "confirmed", "test": "TestGet/sub", "package": "example.com/m/p", "detector": "fasttrack",
		"probability": 0.8, "runs": 10.0, "created": 8.0, "occurrences": 2.0,
		"replay": "racekit replay -seed 1 -pair X example.com/m/p -- -run '^TestGet$'",
		"pair":   "/src/m/p/p.go:20:5:r~/src/m/p/p.go:27:3:w",
	} {
		if r.Properties[k] != want {
			t.Errorf("property %s = %v, want %v", k, r.Properties[k], want)
		}
	}

	r = run.Results[1]
	if r.Properties["verdict"] != "observed" || r.Properties["test"] != nil || r.Properties["replay"] != nil || r.Properties["probability"] != nil {
		t.Errorf("observed race's properties: %v", r.Properties)
	}
	if !strings.Contains(r.Message.Text, `on x\[2\]:`) {
		t.Errorf("message %q: the object's brackets are not escaped", r.Message.Text)
	}
	var got []string
	for _, l := range r.CodeFlows[0].ThreadFlows[0].Locations {
		got = append(got, uri(l.Location))
	}
	want := []string{"(none): testing.tRunner", "file:///go/pkg/mod/example.org/dep%20dir/d.go:9", "%SRCROOT%/p/q.go:4"}
	if strings.Join(got, " | ") != strings.Join(want, " | ") {
		t.Errorf("threadFlow: %q, want %q", got, want)
	}
	if tf := r.CodeFlows[0].ThreadFlows[1]; len(tf.Locations) != 1 || uri(tf.Locations[0].Location) != "%SRCROOT%/p/q.go:8" {
		t.Errorf("previous access without a stack: %+v, want its site alone", tf)
	}
}

// TestNewDynamicRace: a reported race's accesses, goroutines, stacks
// (or, without one, the access's site), test and evidence.
func TestNewDynamicRace(t *testing.T) {
	m, res := sample()
	g := res[0].Groups[0]
	caller := trace.Site{File: "m.go", Line: 12, Func: "main.main"}
	res[0].Stacks = map[finding.Pair][]trace.Site{g.Pair(): {m.Site(g.Cur.Site), caller}}
	res[0].Tests = map[finding.Pair]string{g.Pair(): "TestWork"}
	r := NewDynamicRace(m, &res[0], g)
	if r.Verdict != "observed" || r.Detector != "fasttrack" || r.Test != "TestWork" || r.Object != "counter" || r.Count != 4 {
		t.Errorf("race: %+v", r)
	}
	if r.Cur.Kind != "write" || r.Cur.Goroutine != "G1" || r.Cur.Site.String() != "w.go:7:2" || len(r.Cur.Stack) != 2 || r.Cur.Stack[1] != caller {
		t.Errorf("current access: %+v", r.Cur)
	}
	if r.Prev.Kind != "read" || r.Prev.Goroutine != "main" || r.Prev.Site.String() != "m.go:9" || len(r.Prev.Stack) != 0 {
		t.Errorf("previous access: %+v", r.Prev)
	}
}

// TestSARIFBlocks: a leak and a deadlock follow the races under rules of
// their own, each at its first goroutine's operation, the others related
// locations and every goroutine's stack a thread flow; the log still
// validates.
func TestSARIFBlocks(t *testing.T) {
	blocks := []DynamicBlock{{
		Rule: SARIFLeakRule, Verdict: "observed", Package: "example.com/m/p",
		Text: "Goroutine leak: G3 blocked in chan send when the run ended.",
		Ops: []RaceAccess{{Kind: "chan send", Goroutine: "G3", Site: trace.Site{File: "/src/m/p/p.go", Line: 18, Col: 6, Func: "example.com/m/p.fetch.func1"},
			Stack: []trace.Site{{File: "/src/m/p/p.go", Line: 18, Col: 6, Func: "example.com/m/p.fetch.func1"}}}},
	}, {
		Rule: SARIFDeadlockRule, Verdict: "predicted", Package: "example.com/m/p",
		Text: "Potential deadlock: a lock-order cycle between G2, G3; another interleaving of the run blocks them all.",
		Ops: []RaceAccess{
			{Kind: "sync.Mutex.Lock", Goroutine: "G2", Site: trace.Site{File: "/src/m/p/bank.go", Line: 22, Func: "example.com/m/p.transfer"}},
			{Kind: "sync.Mutex.Lock", Goroutine: "G3", Site: trace.Site{File: "/src/m/p/bank.go", Line: 22, Func: "example.com/m/p.transfer"}},
		},
	}}
	var b bytes.Buffer
	if err := SARIF(&b, sarifRaces(), blocks, "/src/m"); err != nil {
		t.Fatal(err)
	}
	if err := sariftest.Validate(b.Bytes()); err != nil {
		t.Fatalf("invalid SARIF: %v\n%s", err, b.String())
	}
	var log struct {
		Runs []struct {
			Tool struct {
				Driver struct {
					Rules []struct {
						ID string `json:"id"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results []sarif.Result `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(b.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	run := log.Runs[0]
	var rules []string
	for _, r := range run.Tool.Driver.Rules {
		rules = append(rules, r.ID)
	}
	if strings.Join(rules, ",") != SARIFRule+","+SARIFLeakRule+","+SARIFDeadlockRule || len(run.Results) != 4 {
		t.Fatalf("rules %v, %d results; want the race rule, the leak's and the deadlock's, and 4 results", rules, len(run.Results))
	}
	leakRes, dl := run.Results[2], run.Results[3]
	if leakRes.RuleID != SARIFLeakRule || leakRes.RuleIndex != 1 || leakRes.Level != "warning" || leakRes.Properties["verdict"] != "observed" ||
		leakRes.Locations[0].PhysicalLocation.Region.StartLine != 18 || len(leakRes.RelatedLocations) != 0 {
		t.Errorf("leak result %+v", leakRes)
	}
	if dl.RuleID != SARIFDeadlockRule || dl.RuleIndex != 2 || dl.Level != "error" || dl.Properties["verdict"] != "predicted" ||
		len(dl.RelatedLocations) != 1 || dl.RelatedLocations[0].ID != 1 || len(dl.CodeFlows) != 1 || len(dl.CodeFlows[0].ThreadFlows) != 2 {
		t.Errorf("deadlock result %+v", dl)
	}
	if got := dl.CodeFlows[0].ThreadFlows[1].Locations[0].Location.Message.Text; got != "sync.Mutex.Lock in example.com/m/p.transfer" {
		t.Errorf("the second goroutine's flow says %q", got)
	}
}
