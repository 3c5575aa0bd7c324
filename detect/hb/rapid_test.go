package hb_test

import (
	"strings"
	"testing"

	"github.com/racekit/racekit/trace"
	"github.com/racekit/racekit/trace/text"
)

// readRAPID reads an STD trace as tracefile.Open does, with RAPID's
// threads (text.RAPIDReader).
func readRAPID(t *testing.T, src string) *trace.Trace {
	t.Helper()
	tr, err := trace.ReadAll(text.NewRAPIDReader(text.NewSTDReader(strings.NewReader(src), "t.std")))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestRAPIDThreads: in an STD trace a thread with no fork is concurrent
// with the others until a fork, join or lock orders them, as in RAPID (issue
// 29). Read with racekit's own rule (born in untraced code, after
// everything before it), the first trace showed no race at all.
func TestRAPIDThreads(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      []string
	}{
		{"unforked threads race", "T1|w(x)|1\nT2|w(x)|2\nT2|w(y)|3\nT3|r(y)|4\n", []string{"1~2", "3~4"}},
		{"a lock orders them", "T1|acq(m)|1\nT1|w(x)|2\nT1|rel(m)|3\nT2|acq(m)|4\nT2|w(x)|5\nT2|rel(m)|6\n", nil},
		{"a fork orders the child", "T0|w(x)|1\nT0|fork(T1)|2\nT1|w(x)|3\n", nil},
		{"a join orders the parent", "T0|fork(T1)|1\nT1|w(x)|2\nT0|join(T1)|3\nT0|w(x)|4\n", nil},
		{"the forking thread after the fork", "T0|fork(T1)|1\nT1|w(x)|2\nT0|w(x)|3\n", []string{"2~3"}},
		{"an unforked thread and a forked one", "T0|fork(T1)|1\nT1|w(x)|2\nT2|w(x)|3\n", []string{"2~3"}},
	} {
		tr := readRAPID(t, c.src)
		for _, f := range flavours {
			r := run(t, f, tr)
			got := labels(tr.M, r.c.Pairs())
			if strings.Join(got, " ") != strings.Join(norm(c.want), " ") {
				t.Errorf("%s, %s: races %v, want %v", c.name, f.name, got, norm(c.want))
			}
		}
	}
	// The same first trace read line by line, without the root's forks:
	// racekit's own rule orders T2 after T1, no race.
	raw, err := trace.ReadAll(text.NewSTDReader(strings.NewReader("T1|w(x)|1\nT2|w(x)|2\n"), "t.std"))
	if err != nil {
		t.Fatal(err)
	}
	if r := run(t, hbFlavour, raw); len(r.races) != 0 {
		t.Errorf("racekit's rule: %d races, want 0", len(r.races))
	}
}
