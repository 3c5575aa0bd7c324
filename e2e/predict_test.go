package e2e

import (
	"strings"
	"testing"
)

// TestNoPredictionOnFlagPublishedUnderLock: testdata/src/flagpublish is
// correct code (a value published under a lock behind a flag); with
// --predict racekit reports no race and exits 0.
func TestNoPredictionOnFlagPublishedUnderLock(t *testing.T) {
	code, out := runRacekit(t, "run", "--predict", "./flagpublish")
	if code != 0 || strings.Contains(out, "DATA RACE") {
		t.Fatalf("exit %d, want 0 and no race\n%s", code, out)
	}
	if !strings.Contains(out, "1\n") {
		t.Fatalf("the reader did not see the flag (the run is not the one this test needs)\n%s", out)
	}
}
