package e2e

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/racekit/racekit/filter/sample"
	"github.com/racekit/racekit/trace"
	"github.com/racekit/racekit/trace/tracefile"
)

// Filtering while recording (rt/sample.go, rt/filter.go): the samplers'
// dispatch check at function entry and TREE in the runtime's writer,
// switched on by the environment racekit test and run pass.

// runWith is runProgram with more environment; the runtime must not
// complain.
func runWith(t *testing.T, bin, exit string, env ...string) string {
	t.Helper()
	tr, out := execProgram(t, bin, exit, env...)
	if strings.Contains(string(out), "racekit:") {
		t.Fatalf("%s: the runtime complained:\n%s", bin, out)
	}
	return tr
}

// eachProgram runs check on every program of testdata/src (but those that
// wait for a signal), in parallel.
func eachProgram(t *testing.T, check func(t *testing.T, bin, exit string, want []string)) {
	src, _ := filepath.Abs("testdata/src")
	bins, _ := buildAll(t)
	mains, _ := filepath.Glob(filepath.Join(src, "*", "main.go"))
	for _, mf := range mains {
		dir := filepath.Dir(mf)
		name := filepath.Base(dir)
		exit := exitMark(t, mf)
		if exit == "signal" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			check(t, filepath.Join(bins, name), exit, expected(t, dir))
		})
	}
}

// A sampled run never reports a race a full run would not: on every
// program, the racing line pairs hb finds in a trace recorded with a
// sampler (tl-ad and tp-ad also with loop regions) are among the program's marked races, which is
// exactly what a full recording reports (TestPrograms).
func TestSampledRunReportsSubset(t *testing.T) {
	eachProgram(t, func(t *testing.T, bin, exit string, want []string) {
		for _, s := range []string{"tl-ad", "rnd10", "g-ad", "tl-ad loops", "tp-ad loops"} {
			name, loops, _ := strings.Cut(s, " ")
			res, err := analyze(runWith(t, bin, exit, "RACEKIT_SAMPLE="+name, "RACEKIT_SEED=3", "RACEKIT_SAMPLE_LOOPS="+map[bool]string{true: "1"}[loops != ""]))
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range res.hbPairs {
				if !slices.Contains(want, p) {
					t.Errorf("%s: reported %s, which is not a race of the program (want a subset of %q)", s, p, want)
				}
			}
		}
	})
}

// TREE in the writer loses no race: on every program, hb on the trace
// recorded with TREE tuned to hb reports exactly the marked racing line
// pairs, as a full recording does; with TREE tuned to fasttrack, fasttrack
// still finds a race exactly in the racy programs.
func TestTreeWhileRecordingSameRaces(t *testing.T) {
	eachProgram(t, func(t *testing.T, bin, exit string, want []string) {
		res, err := analyze(runWith(t, bin, exit, "RACEKIT_FILTER=tree", "RACEKIT_FILTER_FOR=hb"))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(res.hbPairs, "\n") != strings.Join(want, "\n") {
			t.Errorf("racing line pairs (hb, TREE for hb):\n got %q\nwant %q", res.hbPairs, want)
		}
		res, err = analyze(runWith(t, bin, exit, "RACEKIT_FILTER=tree", "RACEKIT_FILTER_FOR=fasttrack"))
		if err != nil {
			t.Fatal(err)
		}
		if (res.fastRaces > 0) != (len(want) > 0) {
			t.Errorf("fasttrack (TREE for fasttrack) found %d races, want some: %v", res.fastRaces, len(want) > 0)
		}
	})
}

// events reads a trace's events with their metadata.
func events(t *testing.T, path string) *trace.Trace {
	t.Helper()
	f, err := tracefile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := trace.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// sequences is each goroutine's events as "op file:line" (addresses of
// heap objects may differ between two runs; sites do not), without the
// frames that hold none of the events keep keeps (sample.Shown: a sampled
// run does not record its unsampled calls that hold nothing recorded).
func sequences(tr *trace.Trace, keep func(e *trace.Event) bool) map[trace.GID][]string {
	m := map[trace.GID][]string{}
	for _, e := range sample.Shown(tr, keep) {
		m[e.G] = append(m[e.G], e.Op.String()+" "+siteName(tr.M, e.Site))
	}
	return m
}

// unfinished reports whether got is want without some of want's last
// events (got from one run, want from another), all of them function exits or the goroutine's end: a worker's
// deferred wg.Done runs before its closure's exit and end are recorded, so
// main may see Wait return and end the process first (on a loaded machine
// the sampled run lost a worker's last two events so).
func unfinished(got, want []string) bool {
	if len(got) >= len(want) || !slices.Equal(got, want[:len(got)]) {
		return false
	}
	for _, e := range want[len(got):] {
		if !strings.HasPrefix(e, "exit ") && !strings.HasPrefix(e, "end ") {
			return false
		}
	}
	return true
}

// The decisions made while recording are the offline sampler's: the
// program sampledet behaves the same in every run, goroutine by goroutine
// (its goroutines share only a lock and a WaitGroup, and its data is
// package-level, so its addresses are the same in every run). For tl-ad,
// tl-fx, ucp and rnd25, each goroutine's events in a sampled run are
// exactly those the offline sampler (same seed) keeps from a full run
// without dedup: the same accesses, and every other event, in the same
// frames (the frames that hold none are left out: sample.Shown). With
// dedup on in the sampled run, the same up to what dedup may vary
// (sample.Epochs: the words each epoch accesses; the hooks of an
// unsampled frame skip its accesses before dedup's table sees them).
func TestSampledEqualsOfflineE2E(t *testing.T) {
	bins, _ := buildAll(t)
	bin := filepath.Join(bins, "sampledet")
	// RACEKIT_WGMISUSE=0: the WaitGroup annotations depend on how the
	// workers interleave, not on the sampler.
	full := withoutHookAllocs(events(t, runWith(t, bin, "0", "RACEKIT_DEDUP=0", "RACEKIT_WGMISUSE=0")))
	for _, dedup := range []string{"1", "0"} {
		for _, name := range []string{"tl-ad", "tl-fx", "ucp", "rnd25"} {
			got := withoutHookAllocs(events(t, runWith(t, bin, "0", "RACEKIT_DEDUP="+dedup, "RACEKIT_SAMPLE="+name, "RACEKIT_SEED=5", "RACEKIT_WGMISUSE=0")))
			f, err := sample.NewFilter(name, 5)
			if err != nil {
				t.Fatal(err)
			}
			want := sequences(full, f.Keep)
			gs := sequences(got, nil)
			if dedup == "1" {
				f, _ = sample.NewFilter(name, 5)
				want = epochs(full, f.Keep)
				gs = epochs(got, nil)
			}
			st := f.Stats()
			if st.Logged == 0 || st.Logged == st.Accesses {
				t.Fatalf("%s: offline, %d of %d accesses logged: sampledet does not exercise sampling", name, st.Logged, st.Accesses)
			}
			if len(gs) != len(want) || len(gs) < 4 {
				t.Fatalf("%s dedup=%s: %d goroutines, want %d (at least 4)", name, dedup, len(gs), len(want))
			}
			for g, w := range want {
				if unfinished(gs[g], w) || unfinished(w, gs[g]) {
					// The goroutine was still returning when main exited
					// (in one of the two runs).
					continue
				}
				if !slices.Equal(gs[g], w) {
					i := 0
					for i < len(w) && i < len(gs[g]) && gs[g][i] == w[i] {
						i++
					}
					t.Errorf("%s dedup=%s: goroutine %d: %d events, want %d, first difference at %d: %q, want %q", name, dedup, g, len(gs[g]), len(w), i, at(gs[g], i), at(w, i))
				}
			}
			t.Logf("%s dedup=%s: %d of %d accesses recorded (offline ESR %.1f%%)", name, dedup, st.Logged, st.Accesses, 100*st.ESR())
		}
	}
}

// withoutHookAllocs drops the allocations the runtime's hook reported (site
// 0: rt/mallochook.go). They depend on the runtime and on rt's own memory,
// not on the sampler, and they are written where they were noted, never
// showing a frame.
func withoutHookAllocs(tr *trace.Trace) *trace.Trace {
	evs := tr.Events[:0:0]
	for _, e := range tr.Events {
		if e.Op != trace.OpAlloc || e.Site != 0 {
			evs = append(evs, e)
		}
	}
	tr.Events = evs
	return tr
}

// epochs is sequences up to what dedup may vary (sample.Epochs).
func epochs(tr *trace.Trace, keep func(e *trace.Event) bool) map[trace.GID][]string {
	return sample.Epochs(tr, keep, func(e *trace.Event) string {
		return e.Op.String() + " " + siteName(tr.M, e.Site)
	})
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return "(end)"
}

// The flags: a sampler's name is checked before anything is built, and a
// sampled or filtered racekit run still reports the race of counter.
func TestSampleFlags(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--sample=nosuch", "./counter"},
		{"test", "--sample=nosuch", "./testpkg"},
		{"run", "--filter=bush", "./counter"},
		{"run", "--sample=tl-ad", "--algo=rdit", "./counter"},
		{"test", "--filter=tree", "--predict", "./testpkg"},
		{"test", "--schedule=bogus", "./testpkg"},
	} {
		if code, out := runRacekit(t, args...); code != 2 {
			t.Errorf("racekit %s: exit %d, want 2 (usage)\n%s", strings.Join(args, " "), code, out)
		}
	}
	for _, flag := range []string{"--sample=tl-ad", "--filter=tree"} {
		code, out := runRacekit(t, "run", flag, "./counter")
		if code != 66 || !strings.Contains(out, "main.go:17") {
			t.Errorf("racekit run %s ./counter: exit %d, want 66 and the race at main.go:17\n%s", flag, code, out)
		}
	}
}
