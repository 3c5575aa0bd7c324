package report

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/report/sarif"
	"github.com/racekit/racekit/trace"
)

// DynamicRace is one race a run reported, with what SARIF shows of it:
// both accesses with their stacks, where it was found and its verdict.
// Unlike a Result it needs no trace.Meta: racekit test keeps one per race
// while it analyzes each package's trace and writes them all at its end.
type DynamicRace struct {
	Package  string // the package whose test binary reported it
	Test     string // the test during which it was reported; "" outside any test
	Detector string
	Object   string // the variable or heap block, when named
	Count    int    // occurrences in the run
	// Pair is the race's statement pair as confirm.RacePair gives it
	// ("" when a site is unknown): what -confirm's verdicts are keyed by.
	Pair string
	// Verdict is the detector's evidence (observed, predicted, potential)
	// or, once a controlled re-execution judged the race, its verdict
	// (confirmed, observed, predicted, potential, not created).
	Verdict string
	// Runs, Created, Probability and Replay describe the confirmation:
	// the controlled runs, how many made the two accesses back to back,
	// and a racekit replay command re-making the first that did.
	Runs        int
	Created     int
	Probability float64
	Replay      string

	Cur, Prev RaceAccess // the access reported and the one before it
}

// RaceAccess is one side of a DynamicRace.
type RaceAccess struct {
	Kind      string     // "read" or "write"
	Goroutine string     // its label (G7)
	Site      trace.Site // the access
	// Stack is the goroutine's stack at the access, innermost first
	// (Stack[0] is normally Site); empty when unknown.
	Stack []trace.Site
}

// NewDynamicRace is g, one of res's races on the trace m describes, as a
// DynamicRace: its verdict is the detector's evidence, its package and
// pair are left for the caller.
func NewDynamicRace(m *trace.Meta, res *Result, g finding.Group) DynamicRace {
	access := func(a finding.Access, stack []trace.Site) RaceAccess {
		return RaceAccess{Kind: a.Kind(), Goroutine: m.Goroutine(a.G).Label(), Site: m.Site(a.Site), Stack: slices.Clone(stack)}
	}
	return DynamicRace{
		Test:     res.Tests[g.Pair()],
		Detector: g.Detector,
		Object:   m.Location(g.Addr),
		Count:    g.Count,
		Verdict:  g.Evidence.String(),
		Cur:      access(g.Cur, res.Stacks[g.Pair()]),
		Prev:     access(g.Prev, res.PrevStacks[g.Pair()]),
	}
}

// SARIFRule is the rule every race is a result of; the verdict is the
// result's property "verdict", so that a race keeps its identity (and a
// code-scanning alert) when a later run gives it another verdict.
const SARIFRule = "data-race"

// SARIF writes races as a SARIF 2.1.0 log of one run of the tool
// "racekit": one result per race, at the access reported, the previous
// access its related location, and the two accesses' stacks as one
// codeFlow with a threadFlow per access (the current access's first),
// each in execution order: outermost caller first. Files below root
// (racekit test passes the main module's directory) are URIs relative
// to %SRCROOT%, which the run maps to root; others are absolute file URIs.
//
// Blocking bugs (blocks: leaks and deadlocks, DynamicBlock) follow the
// races, under rules of their own (SARIFLeakRule, SARIFDeadlockRule).
func SARIF(w io.Writer, races []DynamicRace, blocks []DynamicBlock, root string) error {
	run := sarif.Run{
		Tool: sarif.Tool{Driver: sarif.Driver{
			Name:           "racekit",
			InformationURI: "https://github.com/racekit/racekit",
			Rules: []sarif.Rule{{
				ID:               SARIFRule,
				Name:             "DataRace",
				ShortDescription: sarif.Message{Text: "data race"},
				FullDescription: &sarif.Message{Text: "Two goroutines accessed the same memory, at least one of them writing, " +
					"with nothing ordering the accesses (no happens-before relation, as the Go memory model defines it). " +
					"The result's verdict says how it is known: confirmed (a controlled re-execution made the two accesses back to back), " +
					"observed (the recorded run had them unordered), predicted (another interleaving of the recorded run has them) " +
					"or potential (an imprecise analysis flags them)."},
				HelpURI:              "https://go.dev/ref/mem",
				DefaultConfiguration: &sarif.Configuration{Level: "error"},
			}},
		}},
		Results: []sarif.Result{},
	}
	u := sarifURIs{root: root}
	if root != "" {
		base := filepath.ToSlash(root)
		if !strings.HasSuffix(base, "/") {
			base += "/" // SARIF wants a base URI to end with a slash
		}
		run.OriginalURIBaseIDs = map[string]sarif.ArtifactLocation{srcRoot: {URI: fileURI(base)}}
	}
	for i := range races {
		run.Results = append(run.Results, u.result(&races[i]))
	}
	if len(blocks) > 0 {
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, blockRules...)
	}
	for i := range blocks {
		idx := slices.IndexFunc(run.Tool.Driver.Rules, func(r sarif.Rule) bool { return r.ID == blocks[i].Rule })
		run.Results = append(run.Results, u.blockResult(&blocks[i], idx))
	}
	log := sarif.Log{Schema: sarif.Schema, Version: sarif.Version, Runs: []sarif.Run{run}}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(log)
}

// srcRoot is the uriBaseId of the files below the root.
const srcRoot = "%SRCROOT%"

// sarifURIs makes a site's artifact location relative to root.
type sarifURIs struct{ root string }

func (u sarifURIs) result(r *DynamicRace) sarif.Result {
	level := "error"
	switch r.Verdict {
	case "potential", "not created":
		level = "warning"
	}
	on := ""
	if r.Object != "" {
		on = " on " + escapeLinkText(r.Object)
	}
	msg := fmt.Sprintf("Data race%s: %s%s, unordered with the [previous %s](1)%s (%s).",
		on, r.Cur.Kind, byGoroutine(r.Cur), r.Prev.Kind, byGoroutine(r.Prev), r.Verdict)
	props := map[string]any{"verdict": r.Verdict, "detector": r.Detector, "occurrences": r.Count}
	for k, v := range map[string]string{"package": r.Package, "test": r.Test, "pair": r.Pair, "replay": r.Replay} {
		if v != "" {
			props[k] = v
		}
	}
	if r.Runs > 0 {
		props["runs"], props["created"] = r.Runs, r.Created
	}
	if r.Verdict == "confirmed" {
		props["probability"] = r.Probability
	}
	cur := u.location(r.Cur.Site, r.Cur.Kind+byGoroutine(r.Cur))
	prev := u.location(r.Prev.Site, "previous "+r.Prev.Kind+byGoroutine(r.Prev))
	prev.ID = 1
	return sarif.Result{
		RuleID:           SARIFRule,
		RuleIndex:        0,
		Level:            level,
		Message:          sarif.Message{Text: msg},
		Locations:        []sarif.Location{cur},
		RelatedLocations: []sarif.Location{prev},
		CodeFlows: []sarif.CodeFlow{{
			Message: &sarif.Message{Text: "the stacks of the two accesses"},
			ThreadFlows: []sarif.ThreadFlow{
				u.threadFlow(r.Cur, "the "+r.Cur.Kind+byGoroutine(r.Cur)),
				u.threadFlow(r.Prev, "the previous "+r.Prev.Kind+byGoroutine(r.Prev)),
			},
		}},
		Properties: props,
	}
}

// byGoroutine names a's goroutine, "" when unknown (a race only a
// controlled run showed: its report has the two statements alone).
func byGoroutine(a RaceAccess) string {
	if a.Goroutine == "" {
		return ""
	}
	return " by goroutine " + a.Goroutine
}

// threadFlow is a's stack in execution order, outermost caller first; a
// stack not known is the access's site alone.
func (u sarifURIs) threadFlow(a RaceAccess, msg string) sarif.ThreadFlow {
	stack := a.Stack
	if len(stack) == 0 {
		stack = a.Site.Frames()
	}
	tf := sarif.ThreadFlow{Message: &sarif.Message{Text: msg}}
	for i := len(stack) - 1; i >= 0; i-- {
		s := stack[i]
		text := s.Func
		if text == "" {
			text = s.String()
		}
		if i == 0 {
			text = a.Kind + " in " + text
		}
		tf.Locations = append(tf.Locations, sarif.ThreadFlowLocation{
			Location:     u.location(s, text),
			NestingLevel: len(stack) - 1 - i,
		})
	}
	return tf
}

// location is s with msg; a site with no file and line (a text trace's
// label, the test framework) has no physical location, only its message.
func (u sarifURIs) location(s trace.Site, msg string) sarif.Location {
	loc := sarif.Location{Message: &sarif.Message{Text: msg}}
	if s.Func != "" {
		loc.LogicalLocations = []sarif.LogicalLocation{{FullyQualifiedName: s.Func, Kind: "function"}}
	}
	if s.File == "" || s.Line <= 0 || s.File == trace.FrameworkFile {
		if s.File != "" && s.File != trace.FrameworkFile {
			loc.Message.Text += " at " + s.String()
		}
		return loc
	}
	loc.PhysicalLocation = &sarif.PhysicalLocation{
		ArtifactLocation: u.artifact(s.File),
		Region:           &sarif.Region{StartLine: s.Line, StartColumn: s.Col},
	}
	return loc
}

// artifact is file's location: relative to %SRCROOT% below the root, an
// absolute file URI elsewhere.
func (u sarifURIs) artifact(file string) sarif.ArtifactLocation {
	if u.root != "" && filepath.IsAbs(file) {
		if rel, err := filepath.Rel(u.root, file); err == nil && filepath.IsLocal(rel) {
			return sarif.ArtifactLocation{URI: relURI(filepath.ToSlash(rel)), URIBaseID: srcRoot}
		}
	}
	if filepath.IsAbs(file) {
		return sarif.ArtifactLocation{URI: fileURI(filepath.ToSlash(file))}
	}
	return sarif.ArtifactLocation{URI: relURI(filepath.ToSlash(file))}
}

// fileURI is the file URI of an absolute slash-separated path, escaped
// (the schema's uri format rejects a space, say).
func fileURI(p string) string {
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // a Windows drive: file:///C:/...
	}
	return (&url.URL{Scheme: "file", Path: p}).String()
}

// relURI is a relative reference to a slash-separated path, escaped; a
// colon in its first segment gets "./" so that it is not read as a scheme.
func relURI(p string) string {
	return (&url.URL{Path: p}).String()
}

// escapeLinkText escapes the brackets of text placed in a SARIF message,
// where "[text](id)" is a link to a related location.
func escapeLinkText(s string) string {
	return strings.NewReplacer(`\`, `\\`, "[", `\[`, "]", `\]`).Replace(s)
}
