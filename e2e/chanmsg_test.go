package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/racekit/racekit/trace"
)

// TestChanMessages runs testdata/src/chanmsg's tests one by one under go
// test -race and instrumented, and compares the racing line pairs: the
// channel programs whose races only the Go memory model's per-message
// edges expose (two producers, a semaphore of capacity 2, a message
// received before a close), and those the edges order (a semaphore of
// capacity 1 by the k+C rule, close then receive, range, select,
// unbuffered receive before the send completes).
func TestChanMessages(t *testing.T) {
	src, _ := filepath.Abs("testdata/src")
	_, prep := buildAll(t)
	pkgDir := filepath.Join(src, "chanmsg")
	tests := stdTests(t, pkgDir)

	rkBin, raceBin := buildBoth(t, src, "chanmsg", prep)
	var table strings.Builder
	for _, tc := range tests {
		run := "-test.run=^" + tc.name + "$"
		cmd := exec.Command(raceBin, run, "-test.count=1")
		cmd.Dir = pkgDir
		raceOut, _ := cmd.CombinedOutput()
		racePairs := uniq(racePairsIn(raceOut, "chanmsg"))

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
		rk := res.hbPairs
		fmt.Fprintf(&table, "%-36s -race %d  racekit %d\n", tc.name, len(racePairs), len(rk))
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
		if strings.Join(racePairs, "\n") != want {
			t.Errorf("%s: go test -race: racing line pairs %q, want %q\n%s", tc.name, racePairs, tc.want, raceOut)
		}
		if strings.Join(rk, "\n") != want {
			t.Errorf("%s: racekit: racing line pairs %q, want %q", tc.name, rk, tc.want)
		}
	}
	t.Logf("per test (distinct racing line pairs):\n%s", table.String())
}

// TestChanHookSkips runs testdata/src/chanhookskip and reads its trace:
// the patched runtime's channel hook (rt/chanhook.go) records edges on the
// objects c+2 and c+3 of the channels of untraced code (an io.Pipe's),
// and, for the channels traced code uses, only the release of its close
// (a close is not announced): the runtime's wrapper skips every send,
// receive and select that traced code announced, before it calls rt.
func TestChanHookSkips(t *testing.T) {
	dir := t.TempDir()
	code, out := runRacekit(t, "run", "--keep-trace", dir, "./chanhookskip")
	if code != 0 || !strings.Contains(out, "40000 piped") {
		t.Fatalf("racekit run: exit %d\n%s", code, out)
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "*.rkt"))
	if len(paths) != 1 {
		t.Fatalf("kept traces %v", paths)
	}
	tr := events(t, paths[0])
	traced := map[uint64]bool{} // channels of traced code: a message's release on c
	for _, e := range tr.Events {
		if e.Flags&trace.FlagMessage != 0 && e.Op == trace.OpSyncRelease && e.Obj%8 == 0 {
			traced[e.Obj] = true
		}
	}
	var onTraced []string
	untraced := 0
	for _, e := range tr.Events {
		if !e.Op.IsSync() || e.Obj%8 != 2 && e.Obj%8 != 3 {
			continue
		}
		if c := e.Obj &^ 7; traced[c] {
			onTraced = append(onTraced, fmt.Sprintf("%s+%d", e.Op, e.Obj-c))
		} else {
			untraced++
		}
	}
	if len(traced) < 4 {
		t.Errorf("%d channels of traced code in the trace, want 4", len(traced))
	}
	if fmt.Sprint(onTraced) != "[snd+2]" {
		if len(onTraced) > 8 {
			onTraced = append(onTraced[:8], fmt.Sprintf("... (%d in all)", len(onTraced)))
		}
		t.Errorf("the hook's edges on traced code's channels: %v, want [snd+2] (the close)", onTraced)
	}
	if untraced == 0 {
		t.Error("no edge of the hook on the io.Pipe's channels")
	}
}
