package static_test

import (
	"testing"

	"github.com/racekit/racekit/static"
	"golang.org/x/tools/go/analysis/analysistest"
)

// TestFigure1 is RELAY's Figure 1 in Go: the summaries of the figure (as
// facts, in the want comments of testdata/src/figure1) and exactly one
// warning, before any filter, on the unlocked write to stats; none on the
// locked read of power.event or on the read-only array vals.
func TestFigure1(t *testing.T) {
	rs := analysistest.Run(t, analysistest.TestData(), static.Analyzer, "figure1")
	res := rs[0].Result.(*static.Result)
	if len(res.Warnings) != 1 {
		t.Fatalf("want 1 warning before filters, got %d: %+v", len(res.Warnings), res.Warnings)
	}
	w := res.Warnings[0]
	if w.Object != "d.priv.stats.rxPackets" || w.A.Kind != "write" || w.B.Kind != "write" || len(w.Matches) != 1 || w.Matches[0] != "same-entry" {
		t.Errorf("warning: %+v", w)
	}
}

func TestLocks(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), static.Analyzer, "locks")
}

func TestClosuresAndMethodValues(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), static.Analyzer, "closures")
}

func TestHTTPHandlers(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), static.Analyzer, "httph")
}

// TestCrossPackage: summaries of crossdep (lockset and accesses) are facts
// used at crossuse's calls.
func TestCrossPackage(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), static.Analyzer, "crossdep", "crossuse")
}

// TestDedupAfterFilters: a site pair whose first pairing is filtered
// (handoff) is still reported for a second, unfiltered pairing
// (testdata/src/dedup, the want comment).
func TestDedupAfterFilters(t *testing.T) {
	rs := analysistest.Run(t, analysistest.TestData(), static.Analyzer, "dedup")
	res := rs[0].Result.(*static.Result)
	kept := 0
	for _, w := range res.Warnings {
		if w.Removed == "" {
			kept++
		}
	}
	if kept != 1 {
		t.Errorf("want 1 kept warning, got %d: %+v", kept, res.Warnings)
	}
}
