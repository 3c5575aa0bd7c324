package main

import (
	"testing"

	"github.com/racekit/racekit/detect/predict"
	"github.com/racekit/racekit/trace"
	"github.com/racekit/racekit/trace/tracefile"
)

// TestAnalyzeJSONCarriesWitnesses: every race mcm and rdit report in the
// JSON output carries its witness, and the witness, read back from the
// JSON, is a valid reordering of the trace (predict.CheckWitness).
func TestAnalyzeJSONCarriesWitnesses(t *testing.T) {
	const path = "../../examples/wcp-predicted.rktx"
	rep, code := analyzeJSON(t, "--algo=mcm,rdit,hb", path)
	if code != exitRaces {
		t.Fatalf("exit %d, want %d", code, exitRaces)
	}
	r, err := tracefile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tr, err := trace.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	predicted := 0
	for _, race := range rep.Races {
		if race.Evidence != "predicted" {
			if race.Witness != nil {
				t.Errorf("%s race has a witness", race.Evidence)
			}
			continue
		}
		predicted++
		if race.Witness == nil {
			t.Fatalf("%s race at lines %d-%d without a witness", race.Detector, race.Previous.Site.Line, race.Current.Site.Line)
		}
		if err := predict.CheckWitness(tr, race.Witness); err != nil {
			t.Errorf("%s witness rejected: %v", race.Detector, err)
		}
	}
	if predicted != 2 {
		t.Fatalf("%d predicted races, want 2 (mcm's and rdit's)", predicted)
	}
}
