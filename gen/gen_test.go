package gen

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/trace"
)

// generate runs Generate into an in-memory trace, failing the test on any
// error or on a definition written after its first use.
func generate(t testing.TB, cfg Config) (*trace.Trace, *Truth) {
	t.Helper()
	w := &orderWriter{Trace: trace.NewTrace()}
	truth, err := Generate(cfg, w)
	if err != nil {
		t.Fatalf("Generate(%+v): %v", cfg, err)
	}
	if w.err != nil {
		t.Fatalf("Generate(%+v): %v", cfg, w.err)
	}
	return w.Trace, truth
}

func oneOf[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

// randomConfig draws a small configuration exercising every knob, every
// shape and the "0 means default" fields, from seed.
func randomConfig(seed uint64) Config {
	r := rand.New(rand.NewPCG(seed, 7))
	n := 1 + r.IntN(10)
	c := Config{
		Seed:            seed,
		Events:          MinEvents(n) + int64(r.IntN(1200)),
		Goroutines:      n,
		Locks:           r.IntN(5),
		Vars:            r.IntN(24),
		RacyFraction:    oneOf(r, 0, 0.1, 0.3, 0.6, 1),
		Nesting:         r.IntN(4),
		Shape:           Shape(r.IntN(int(numShapes))),
		WaveSize:        r.IntN(4),
		Locals:          r.IntN(4),
		ReadFraction:    r.Float64(),
		LockFraction:    0.3 * r.Float64(),
		RLockFraction:   oneOf(r, 0, 0.3, 0.7),
		HandoffFraction: oneOf(r, 0, 0, 0.2, 0.4),
		AtomicVars:      r.IntN(3),
		AtomicFraction:  0.1 * r.Float64(),
		SyncObjs:        r.IntN(3),
		SyncFraction:    0.1 * r.Float64(),
		Funcs:           r.IntN(4),
		FuncDepth:       r.IntN(4),
		FuncFraction:    0.1 * r.Float64(),
		RepeatFraction:  oneOf(r, 0, 0.05, 0.3),
		Switch:          r.Float64(),
		Values:          r.IntN(2) == 0,
	}
	if c.RacyFraction > 0.6 {
		c.HandoffFraction = 0
	}
	return c
}

const randomConfigs = 300

func TestRandomConfigsAreWellFormed(t *testing.T) {
	for seed := range uint64(randomConfigs) {
		cfg := randomConfig(seed)
		tr, truth := generate(t, cfg)
		if err := checkWellFormed(truth.Config, tr); err != nil {
			t.Fatalf("seed %d, %+v:\n%v", seed, truth.Config, err)
		}
		if err := checkSites(tr); err != nil {
			t.Fatalf("seed %d, %+v:\n%v", seed, truth.Config, err)
		}
	}
}

// The contract: the site pairs racing under precise happens-before are
// exactly the planted ones; a pairwise lockset check agrees when no
// variable is handed off, and otherwise adds only pairs on handed-off
// variables.
func TestRandomConfigsRacesEqualTruth(t *testing.T) {
	planted, unplanted, racy, handoff := 0, 0, 0, 0
	for seed := range uint64(randomConfigs) {
		cfg := randomConfig(seed)
		tr, truth := generate(t, cfg)
		want := truth.Pairs()
		planted += len(want)
		unplanted += truth.Unplanted
		if len(want) > 0 {
			racy++
		}
		if !truth.LocksetExact {
			handoff++
		}
		if got := hbRacePairs(tr.Events); !slices.Equal(got, want) {
			t.Fatalf("seed %d, %+v:\nhappens-before races %v\nplanted %v", seed, truth.Config, got, want)
		}
		ls := locksetPairs(tr.Events)
		if truth.LocksetExact {
			if !slices.Equal(ls, want) {
				t.Fatalf("seed %d, %+v:\nlockset races %v\nplanted %v", seed, truth.Config, ls, want)
			}
		} else {
			for _, p := range ls {
				if !slices.Contains(want, p) && !strings.HasPrefix(siteFunc(tr, p.A), "synth.use_msg") {
					t.Fatalf("seed %d: lockset pair %v (%v, %v) is neither planted nor on a handed-off variable",
						seed, p, tr.M.Site(p.A), tr.M.Site(p.B))
				}
			}
		}
		checkPlanted(t, tr, truth)
	}
	t.Logf("%d configurations: %d with races, %d with handed-off variables; %d races planted, %d unplanted",
		randomConfigs, racy, handoff, planted, unplanted)
	// The configurations must actually exercise planted races.
	if planted < randomConfigs {
		t.Errorf("only %d races planted over %d configurations", planted, randomConfigs)
	}
}

func siteFunc(tr *trace.Trace, s trace.SiteID) string { return tr.M.Site(s).Func }

// checkPlanted checks each planted race's record against the trace: the
// adjacent pair is where Truth says, by the goroutines it says, with no
// lock in common, and the racy variable is touched at its two sites only.
func checkPlanted(t *testing.T, tr *trace.Trace, truth *Truth) {
	t.Helper()
	held := heldLocks(tr.Events)
	for _, r := range truth.Races {
		if r.Seq+1 >= uint64(len(tr.Events)) {
			t.Fatalf("race %+v: Seq beyond the trace", r)
		}
		a, b := &tr.Events[r.Seq], &tr.Events[r.Seq+1]
		if a.G != r.First || a.Op != trace.OpWrite || a.Obj != r.Obj || a.Site != r.Pair.A {
			t.Fatalf("race %+v: first access is %+v", r, *a)
		}
		if b.G != r.Second || b.IsWrite() != r.SecondWrite || !b.Op.IsAccess() || b.Obj != r.Obj || b.Site != r.Pair.B {
			t.Fatalf("race %+v: second access is %+v", r, *b)
		}
		if r.First == r.Second {
			t.Fatalf("race %+v: one goroutine", r)
		}
		for l := range held[r.Seq] {
			if _, ok := held[r.Seq+1][l]; ok {
				t.Fatalf("race %+v: both goroutines hold lock %#x", r, l)
			}
		}
		if name := tr.M.NameOf(r.Obj); name != r.Name || !strings.HasPrefix(name, "racy") {
			t.Fatalf("race %+v: object named %q", r, name)
		}
		for i := range tr.Events {
			e := &tr.Events[i]
			if e.Obj != r.Obj || !e.Op.IsAccess() {
				continue
			}
			ok := (e.Site == r.Pair.A && e.G == r.First && e.IsWrite()) ||
				(e.Site == r.Pair.B && e.G == r.Second && e.IsWrite() == r.SecondWrite)
			if !ok {
				t.Fatalf("race %+v: stray access %+v", r, *e)
			}
		}
	}
}

// With RacyFraction and HandoffFraction zero, every shape and knob gives a
// trace without races under happens-before and under lockset.
func TestRaceFreeConfigsHaveNoRaces(t *testing.T) {
	for seed := range uint64(150) {
		cfg := randomConfig(seed + 1000)
		cfg.RacyFraction, cfg.HandoffFraction = 0, 0
		cfg.Vars += 4
		tr, truth := generate(t, cfg)
		if len(truth.Races) != 0 || truth.Unplanted != 0 || !truth.LocksetExact {
			t.Fatalf("seed %d: truth %+v for a race-free config", seed, truth)
		}
		if got := hbRacePairs(tr.Events); len(got) != 0 {
			t.Fatalf("seed %d, %+v: happens-before races %v", seed, truth.Config, got)
		}
		if got := locksetPairs(tr.Events); len(got) != 0 {
			t.Fatalf("seed %d, %+v: lockset races %v", seed, truth.Config, got)
		}
	}
}

// Handed-off variables are the happens-before-clean, lockset-dirty
// pattern: a lockset check must flag some of them.
func TestHandoffIsHBCleanButLocksetDirty(t *testing.T) {
	flagged := 0
	for seed := range uint64(20) {
		cfg := Config{Seed: seed, Events: 1500, Goroutines: 4, Shape: Shape(seed % 4), Vars: 4,
			HandoffFraction: 1, SyncObjs: 2, ReadFraction: 0.5, Switch: 0.5}
		tr, truth := generate(t, cfg)
		if truth.LocksetExact {
			t.Fatalf("seed %d: LocksetExact with handed-off variables", seed)
		}
		if got := hbRacePairs(tr.Events); len(got) != 0 {
			t.Fatalf("seed %d: happens-before races %v", seed, got)
		}
		flagged += len(locksetPairs(tr.Events))
	}
	if flagged == 0 {
		t.Error("no handed-off variable changed hands in 20 traces")
	}
}

// With two running goroutines and room in the trace, every racy variable
// gets its race, in every shape.
func TestEveryRaceIsPlanted(t *testing.T) {
	for _, shape := range Shapes() {
		for seed := range uint64(6) {
			cfg := DefaultConfig()
			cfg.Seed, cfg.Shape, cfg.Events, cfg.Goroutines, cfg.Vars, cfg.RacyFraction = seed, shape, 2000, 6, 20, 0.5
			tr, truth := generate(t, cfg)
			if len(truth.Races) != 10 || truth.Unplanted != 0 {
				t.Fatalf("%v seed %d: %d races planted, %d unplanted, want 10 and 0", shape, seed, len(truth.Races), truth.Unplanted)
			}
			if got := hbRacePairs(tr.Events); !slices.Equal(got, truth.Pairs()) {
				t.Fatalf("%v seed %d: races %v, planted %v", shape, seed, got, truth.Pairs())
			}
		}
	}
}

// A single goroutine cannot race: the racy variables stay untouched and
// Truth says so.
func TestOneGoroutinePlantsNothing(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Events, cfg.Goroutines, cfg.Vars, cfg.RacyFraction = 500, 1, 10, 0.3
	tr, truth := generate(t, cfg)
	if len(truth.Races) != 0 || truth.Unplanted != 3 {
		t.Fatalf("races %v, unplanted %d; want none and 3", truth.Races, truth.Unplanted)
	}
	if got := hbRacePairs(tr.Events); len(got) != 0 {
		t.Fatalf("races %v in a one-goroutine trace", got)
	}
}

// The smallest trace holds only the goroutines' life events, in an order
// fixed by the shape.
func TestMinimalTrace(t *testing.T) {
	for seed := range uint64(5) {
		tr, _ := generate(t, Config{Seed: seed, Events: MinEvents(2), Goroutines: 2, Shape: Flat, Vars: 3, Locks: 1})
		var got []string
		for _, e := range tr.Events {
			got = append(got, fmt.Sprintf("G%d %s %d", e.G, e.Op, e.Obj))
		}
		want := []string{"G0 begin 0", "G0 fork 1", "G1 begin 0", "G1 end 0", "G0 join 1", "G0 end 0"}
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d: %q, want %q", seed, got, want)
		}
	}
}

func TestEventCountIsExact(t *testing.T) {
	for _, shape := range Shapes() {
		for n := 1; n <= 7; n++ {
			for _, extra := range []int64{0, 1, 2, 3, 17, 400} {
				cfg := DefaultConfig()
				cfg.Shape, cfg.Goroutines, cfg.Events, cfg.Nesting, cfg.FuncDepth = shape, n, MinEvents(n)+extra, 3, 3
				cfg.LockFraction, cfg.FuncFraction = 0.4, 0.3 // many open scopes near the end of each budget
				tr, truth := generate(t, cfg)
				if int64(len(tr.Events)) != cfg.Events || truth.Events != cfg.Events {
					t.Fatalf("%v, %d goroutines: %d events (truth %d), want %d", shape, n, len(tr.Events), truth.Events, cfg.Events)
				}
				if err := checkWellFormed(truth.Config, tr); err != nil {
					t.Fatalf("%v, %d goroutines, %d events: %v", shape, n, cfg.Events, err)
				}
			}
		}
	}
}

// forksAndJoins lists goroutine g's forks and joins as "f3", "j3".
func forksAndJoins(tr *trace.Trace, g trace.GID) []string {
	var out []string
	for _, e := range tr.Events {
		if e.G == g && (e.Op == trace.OpFork || e.Op == trace.OpJoin) {
			out = append(out, fmt.Sprintf("%c%d", e.Op.String()[0], e.Obj))
		}
	}
	return out
}

// opsOf lists the ops of goroutine g in order.
func opsOf(tr *trace.Trace, g trace.GID) []trace.Op {
	var out []trace.Op
	for _, e := range tr.Events {
		if e.G == g {
			out = append(out, e.Op)
		}
	}
	return out
}

func TestShapes(t *testing.T) {
	const n = 9
	base := DefaultConfig()
	base.Goroutines, base.Events = n, 3000
	parents := func(tr *trace.Trace) []trace.GID {
		var ps []trace.GID
		for _, g := range tr.M.Goroutines {
			ps = append(ps, g.Parent)
		}
		return ps
	}
	np := trace.NoParent

	t.Run("flat", func(t *testing.T) {
		cfg := base
		cfg.Shape = Flat
		tr, _ := generate(t, cfg)
		if got, want := parents(tr), []trace.GID{np, 0, 0, 0, 0, 0, 0, 0, 0}; !slices.Equal(got, want) {
			t.Fatalf("parents %v, want %v", got, want)
		}
		// Main forks everyone right after its Begin and joins everyone
		// right before its End.
		ops := opsOf(tr, 0)
		wantHead := []trace.Op{trace.OpBegin}
		wantTail := []trace.Op{}
		for range n - 1 {
			wantHead = append(wantHead, trace.OpFork)
			wantTail = append(wantTail, trace.OpJoin)
		}
		wantTail = append(wantTail, trace.OpEnd)
		if !slices.Equal(ops[:n], wantHead) || !slices.Equal(ops[len(ops)-n:], wantTail) {
			t.Fatalf("main's ops %v", ops)
		}
		if got, want := forksAndJoins(tr, 0), strings.Fields("f1 f2 f3 f4 f5 f6 f7 f8 j1 j2 j3 j4 j5 j6 j7 j8"); !slices.Equal(got, want) {
			t.Fatalf("main's forks and joins %v, want %v", got, want)
		}
	})

	t.Run("tree", func(t *testing.T) {
		cfg := base
		cfg.Shape = Tree
		tr, _ := generate(t, cfg)
		if got, want := parents(tr), []trace.GID{np, 0, 0, 1, 1, 2, 2, 3, 3}; !slices.Equal(got, want) {
			t.Fatalf("parents %v, want %v", got, want)
		}
		want := map[trace.GID][]string{0: {"f1", "f2", "j1", "j2"}, 1: {"f3", "f4", "j3", "j4"},
			2: {"f5", "f6", "j5", "j6"}, 3: {"f7", "f8", "j7", "j8"}}
		for g := range trace.GID(n) {
			got := forksAndJoins(tr, g)
			slices.Sort(got[:min(2, len(got))]) // the two forks come in either order
			if !slices.Equal(got, want[g]) {
				t.Fatalf("G%d forks and joins %v, want %v", g, got, want[g])
			}
		}
	})

	t.Run("chain", func(t *testing.T) {
		cfg := base
		cfg.Shape = Chain
		tr, _ := generate(t, cfg)
		if got, want := parents(tr), []trace.GID{np, 0, 1, 2, 3, 4, 5, 6, 7}; !slices.Equal(got, want) {
			t.Fatalf("parents %v, want %v", got, want)
		}
		for g := range trace.GID(n) {
			want := []string{fmt.Sprintf("f%d", g+1), fmt.Sprintf("j%d", g+1)}
			if g == n-1 {
				want = nil
			}
			if got := forksAndJoins(tr, g); !slices.Equal(got, want) {
				t.Fatalf("G%d forks and joins %v, want %v", g, got, want)
			}
		}
	})

	t.Run("waves", func(t *testing.T) {
		cfg := base
		cfg.Shape, cfg.WaveSize = Waves, 3
		tr, _ := generate(t, cfg)
		if got, want := parents(tr), []trace.GID{np, 0, 0, 0, 0, 0, 0, 0, 0}; !slices.Equal(got, want) {
			t.Fatalf("parents %v, want %v", got, want)
		}
		want := strings.Fields("f1 f2 f3 j1 j2 j3 f4 f5 f6 j4 j5 j6 f7 f8 j7 j8")
		if got := forksAndJoins(tr, 0); !slices.Equal(got, want) {
			t.Fatalf("main's forks and joins %v, want %v", got, want)
		}
		// Waves do not overlap: a worker never runs next to one of
		// another wave.
		wave := func(g trace.GID) int { return (int(g) - 1) / 3 }
		live := map[trace.GID]bool{}
		for _, e := range tr.Events {
			switch e.Op {
			case trace.OpBegin:
				for o := range live {
					if e.G != 0 && wave(o) != wave(e.G) {
						t.Fatalf("G%d begins while G%d of another wave runs", e.G, o)
					}
				}
				if e.G != 0 {
					live[e.G] = true
				}
			case trace.OpEnd:
				delete(live, e.G)
			}
		}
	})

	t.Run("default wave size", func(t *testing.T) {
		cfg := base
		cfg.Shape, cfg.WaveSize = Waves, 0
		tr, truth := generate(t, cfg)
		if truth.Config.WaveSize != 2 {
			t.Fatalf("WaveSize normalized to %d, want 2 (a quarter of 8 workers)", truth.Config.WaveSize)
		}
		want := strings.Fields("f1 f2 j1 j2 f3 f4 j3 j4 f5 f6 j5 j6 f7 f8 j7 j8")
		if got := forksAndJoins(tr, 0); !slices.Equal(got, want) {
			t.Fatalf("main's forks and joins %v, want %v", got, want)
		}
	})
}

// recorder logs every call it receives, definitions included, so that two
// runs can be compared call for call.
type recorder struct{ log []string }

func (r *recorder) DefineSite(id trace.SiteID, s trace.Site) error {
	r.log = append(r.log, fmt.Sprintf("site %d %+v", id, s))
	return nil
}
func (r *recorder) DefineGoroutine(g trace.Goroutine) error {
	r.log = append(r.log, fmt.Sprintf("goroutine %+v", g))
	return nil
}
func (r *recorder) DefineName(obj uint64, name string) error {
	r.log = append(r.log, fmt.Sprintf("name %#x %s", obj, name))
	return nil
}
func (r *recorder) WriteEvent(e *trace.Event) error {
	r.log = append(r.log, fmt.Sprintf("event %+v", *e))
	return nil
}
func (r *recorder) Close() error { return nil }

func TestDeterministic(t *testing.T) {
	for seed := range uint64(20) {
		cfg := randomConfig(seed)
		var a, b recorder
		ta, err := Generate(cfg, &a)
		if err != nil {
			t.Fatal(err)
		}
		tb, err := Generate(cfg, &b)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a.log, b.log) || !reflect.DeepEqual(ta, tb) {
			t.Fatalf("seed %d: two runs of one config differ", seed)
		}
	}
	// Different seeds give different traces.
	cfg := DefaultConfig()
	cfg.Events = 1000
	var a, b recorder
	if _, err := Generate(cfg, &a); err != nil {
		t.Fatal(err)
	}
	cfg.Seed++
	if _, err := Generate(cfg, &b); err != nil {
		t.Fatal(err)
	}
	if slices.Equal(a.log, b.log) {
		t.Fatal("seeds 1 and 2 give the same trace")
	}
}

// The default configuration uses every kind of step.
func TestDefaultConfigUsesEveryOp(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Events = 20000
	tr, truth := generate(t, cfg)
	count := map[trace.Op]int{}
	readLocks := 0
	for _, e := range tr.Events {
		count[e.Op]++
		if e.Op == trace.OpAcquire && e.ReadLock() {
			readLocks++
		}
	}
	for _, op := range []trace.Op{trace.OpRead, trace.OpWrite, trace.OpAcquire, trace.OpRelease, trace.OpFork,
		trace.OpJoin, trace.OpBegin, trace.OpEnd, trace.OpSyncRelease, trace.OpSyncAcquire, trace.OpAtomicLoad,
		trace.OpAtomicStore, trace.OpAtomicRMW, trace.OpFuncEnter, trace.OpFuncExit} {
		if count[op] == 0 {
			t.Errorf("no %s event in %d", op, cfg.Events)
		}
	}
	if readLocks == 0 {
		t.Error("no read-mode acquire")
	}
	if len(truth.Races) != 6 { // round(0.1 * 64)
		t.Errorf("%d races planted, want 6", len(truth.Races))
	}
	// Races repeat (RepeatFraction): some planted site appears more than once.
	sites := map[trace.SiteID]int{}
	for _, e := range tr.Events {
		sites[e.Site]++
	}
	repeated := false
	for _, r := range truth.Races {
		repeated = repeated || sites[r.Pair.A] > 1 || sites[r.Pair.B] > 1
	}
	if !repeated {
		t.Error("no planted access was repeated")
	}
}

func TestConfigErrors(t *testing.T) {
	ok := DefaultConfig()
	ok.Events = 1000
	cases := []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"no goroutine", func(c *Config) { c.Goroutines = 0 }, "Goroutines = 0"},
		{"too few events", func(c *Config) { c.Events = 29 }, "Events = 29 is too few for 8 goroutines (need at least 30)"},
		{"negative events", func(c *Config) { c.Events = -1 }, "Events = -1"},
		{"bad shape", func(c *Config) { c.Shape = 9 }, "invalid shape 9"},
		{"negative locks", func(c *Config) { c.Locks = -1 }, "Locks = -1"},
		{"negative vars", func(c *Config) { c.Vars = -3 }, "Vars = -3"},
		{"fraction above 1", func(c *Config) { c.RacyFraction = 1.5 }, "RacyFraction = 1.5"},
		{"NaN fraction", func(c *Config) { c.ReadFraction = nanValue() }, "ReadFraction = NaN"},
		{"step mix above 1", func(c *Config) { c.LockFraction, c.SyncFraction = 0.6, 0.5 }, "LockFraction+FuncFraction+AtomicFraction+SyncFraction"},
		{"racy plus handoff above 1", func(c *Config) { c.RacyFraction, c.HandoffFraction = 0.7, 0.5 }, "RacyFraction+HandoffFraction"},
		{"too many objects", func(c *Config) { c.Goroutines, c.Locals, c.Events = 1<<20, 1<<10, 1<<40 }, "objects in all"},
	}
	for _, tc := range cases {
		cfg := ok
		tc.edit(&cfg)
		w := trace.NewTrace()
		_, err := Generate(cfg, w)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
		if len(w.Events) != 0 || len(w.M.Sites) != 1 {
			t.Errorf("%s: wrote to the trace before failing", tc.name)
		}
	}
	if _, err := Generate(ok, trace.NewTrace()); err != nil {
		t.Fatalf("the base config fails: %v", err)
	}
}

func nanValue() float64 { var z float64; return z / z }

// failWriter fails its n-th event.
type failWriter struct {
	trace.Trace
	n int
}

var errDiskFull = errors.New("disk full")

func (w *failWriter) WriteEvent(e *trace.Event) error {
	if len(w.Events) == w.n {
		return errDiskFull
	}
	return w.Trace.WriteEvent(e)
}

func TestWriterErrorStopsGeneration(t *testing.T) {
	for _, n := range []int{0, 1, 50, 999} {
		w := &failWriter{Trace: *trace.NewTrace(), n: n}
		cfg := DefaultConfig()
		cfg.Events = 1000
		truth, err := Generate(cfg, w)
		if !errors.Is(err, errDiskFull) || truth != nil {
			t.Fatalf("failing at event %d: truth %v, error %v; want errDiskFull", n, truth, err)
		}
		if len(w.Events) != n {
			t.Fatalf("failing at event %d: %d events written before the error", n, len(w.Events))
		}
	}
}

func TestTruthJSONRoundTrip(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Events, cfg.Shape = 2000, Tree
	_, truth := generate(t, cfg)
	data, err := json.Marshal(truth)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"shape":"tree"`) || !strings.Contains(string(data), `"pair":{"A":`) {
		t.Fatalf("JSON lacks the shape name or the pairs: %s", data)
	}
	var back Truth
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&back, truth) {
		t.Fatalf("round trip changed the truth:\n%+v\n%+v", back, *truth)
	}
}

func TestShapeNames(t *testing.T) {
	for _, s := range Shapes() {
		got, err := ParseShape(strings.ToUpper(s.String()))
		if err != nil || got != s {
			t.Errorf("ParseShape(%q) = %v, %v", s, got, err)
		}
	}
	if _, err := ParseShape("star"); err == nil || !strings.Contains(err.Error(), `"star"`) {
		t.Errorf("ParseShape(star): %v", err)
	}
	var s Shape
	if err := json.Unmarshal([]byte(`"ring"`), &s); err == nil {
		t.Error("unmarshalled an unknown shape")
	}
	if _, err := Shape(7).MarshalText(); err == nil {
		t.Error("marshalled an invalid shape")
	}
}

// The reference checkers themselves, on traces whose answer is known.
func TestReferenceCheckers(t *testing.T) {
	type tc struct {
		name     string
		build    func(b *trace.Builder)
		hb, lset []string // racing site pairs, as "s1-s2"
	}
	cases := []tc{
		{"unordered writes", func(b *trace.Builder) {
			b.Write("T0", "x", "s1")
			b.Write("T1", "x", "s2")
		}, []string{"s1-s2"}, []string{"s1-s2"}},
		{"reads do not conflict", func(b *trace.Builder) {
			b.Read("T0", "x", "s1")
			b.Read("T1", "x", "s2")
		}, nil, nil},
		{"one goroutine", func(b *trace.Builder) {
			b.Write("T0", "x", "s1")
			b.Write("T0", "x", "s2")
		}, nil, nil},
		{"common lock", func(b *trace.Builder) {
			b.Acq("T0", "l")
			b.Write("T0", "x", "s1")
			b.Rel("T0", "l")
			b.Acq("T1", "l")
			b.Write("T1", "x", "s2")
			b.Rel("T1", "l")
		}, nil, nil},
		{"different locks", func(b *trace.Builder) {
			b.Acq("T0", "l")
			b.Write("T0", "x", "s1")
			b.Rel("T0", "l")
			b.Acq("T1", "m")
			b.Write("T1", "x", "s2")
			b.Rel("T1", "m")
		}, []string{"s1-s2"}, []string{"s1-s2"}},
		{"RUnlock does not order a later RLock", func(b *trace.Builder) {
			b.RAcq("T0", "l")
			b.Read("T0", "x", "s1")
			b.RRel("T0", "l")
			b.RAcq("T1", "l")
			b.Write("T1", "x", "s2")
			b.RRel("T1", "l")
		}, []string{"s1-s2"}, []string{"s1-s2"}},
		{"RUnlock orders a later Lock", func(b *trace.Builder) {
			b.RAcq("T0", "l")
			b.Read("T0", "x", "s1")
			b.RRel("T0", "l")
			b.Acq("T1", "l")
			b.Write("T1", "x", "s2")
			b.Rel("T1", "l")
		}, nil, nil},
		{"Unlock orders a later RLock", func(b *trace.Builder) {
			b.Acq("T0", "l")
			b.Write("T0", "x", "s1")
			b.Rel("T0", "l")
			b.RAcq("T1", "l")
			b.Read("T1", "x", "s2")
			b.RRel("T1", "l")
		}, nil, nil},
		{"lock released before the first access", func(b *trace.Builder) {
			b.Acq("T1", "l")
			b.Rel("T1", "l")
			b.Acq("T0", "l")
			b.Write("T0", "x", "s1")
			b.Rel("T0", "l")
			b.Write("T1", "x", "s2")
		}, []string{"s1-s2"}, []string{"s1-s2"}},
		{"snd then rcv hands off", func(b *trace.Builder) {
			b.Write("T0", "x", "s1")
			b.Snd("T0", "c")
			b.Rcv("T1", "c")
			b.Write("T1", "x", "s2")
		}, nil, []string{"s1-s2"}},
		{"rcv before snd does not", func(b *trace.Builder) {
			b.Rcv("T1", "c")
			b.Write("T0", "x", "s1")
			b.Snd("T0", "c")
			b.Write("T1", "x", "s2")
		}, []string{"s1-s2"}, []string{"s1-s2"}},
		{"atomic store then load orders", func(b *trace.Builder) {
			b.Write("T0", "x", "s1")
			b.AStore("T0", "a")
			b.ALoad("T1", "a")
			b.Read("T1", "x", "s2")
		}, nil, []string{"s1-s2"}},
		{"atomic load then load does not", func(b *trace.Builder) {
			b.Write("T0", "x", "s1")
			b.ALoad("T0", "a")
			b.ARMW("T1", "a")
			b.Read("T1", "x", "s2")
		}, []string{"s1-s2"}, []string{"s1-s2"}},
		{"fork and join order", func(b *trace.Builder) {
			b.Write("T0", "x", "s1")
			b.Fork("T0", "T3", "f")
			b.Begin("T3")
			b.Write("T3", "x", "s2")
			b.End("T3")
			b.Join("T0", "T3")
			b.Write("T0", "x", "s3")
		}, nil, []string{"s1-s2", "s2-s3"}},
		{"transitive through a third goroutine", func(b *trace.Builder) {
			b.Write("T0", "x", "s1")
			b.Snd("T0", "c")
			b.Rcv("T2", "c")
			b.AStore("T2", "a")
			b.ARMW("T1", "a")
			b.Write("T1", "x", "s2")
			b.Write("T2", "x", "s3")
		}, []string{"s2-s3"}, []string{"s1-s2", "s1-s3", "s2-s3"}},
	}
	for _, c := range cases {
		b := trace.NewBuilder()
		// T0..T2 are forked up front: a goroutine never forked would count
		// as born in untraced code, ordered after everything before it.
		for _, g := range []string{"T0", "T1", "T2"} {
			b.Fork("main", g, "")
		}
		c.build(b)
		tr := b.Trace()
		label := func(ps []finding.Pair) []string {
			var out []string
			for _, p := range ps {
				out = append(out, tr.M.Site(p.A).File+"-"+tr.M.Site(p.B).File)
			}
			return out
		}
		if got := label(hbRacePairs(tr.Events)); !slices.Equal(got, c.hb) {
			t.Errorf("%s: happens-before races %q, want %q", c.name, got, c.hb)
		}
		if got := label(locksetPairs(tr.Events)); !slices.Equal(got, c.lset) {
			t.Errorf("%s: lockset races %q, want %q", c.name, got, c.lset)
		}
	}
}

// The well-formedness checker rejects what it must.
func TestWellFormedChecker(t *testing.T) {
	cfg := Config{Goroutines: 2, Nesting: 1, FuncDepth: 1}
	wellFormed := func(b *trace.Builder, body func()) {
		b.Begin("T0")
		b.Fork("T0", "T1", "f")
		b.Begin("T1")
		body()
		b.End("T1")
		b.Join("T0", "T1")
		b.End("T0")
	}
	cases := []struct {
		name  string
		build func(b *trace.Builder)
		want  string // "" for a well-formed trace
	}{
		{"well formed", func(b *trace.Builder) {
			wellFormed(b, func() {
				b.Acq("T1", "l")
				b.Write("T1", "x", "s1")
				b.Rel("T1", "l")
			})
		}, ""},
		{"release by another goroutine", func(b *trace.Builder) {
			wellFormed(b, func() {
				b.Acq("T1", "l")
				b.Rel("T0", "l")
			})
		}, "nothing open to close"},
		{"lock taken while held", func(b *trace.Builder) {
			wellFormed(b, func() {
				b.Acq("T1", "l")
				b.Acq("T0", "l")
			})
		}, "lock not free"},
		{"nesting too deep", func(b *trace.Builder) {
			wellFormed(b, func() {
				b.Acq("T1", "l")
				b.Acq("T1", "m")
			})
		}, "2 locks held, Nesting 1"},
		{"improper nesting", func(b *trace.Builder) {
			wellFormed(b, func() {
				b.Acq("T1", "l")
				b.Enter("T1", "f")
				b.Rel("T1", "l")
			})
		}, "innermost open is enter"},
		{"end holding a lock", func(b *trace.Builder) {
			wellFormed(b, func() { b.Acq("T1", "l") })
		}, "End with 1 locks or frames open"},
		{"join before end", func(b *trace.Builder) {
			b.Begin("T0")
			b.Fork("T0", "T1", "f")
			b.Begin("T1")
			b.Join("T0", "T1")
			b.End("T1")
			b.End("T0")
		}, "join of a child not ended"},
		{"event after end", func(b *trace.Builder) {
			wellFormed(b, func() {})
			b.Write("T1", "x", "s1")
		}, "outside Begin..End"},
		{"never joined", func(b *trace.Builder) {
			b.Begin("T0")
			b.Fork("T0", "T1", "f")
			b.Begin("T1")
			b.End("T1")
			b.End("T0")
		}, "G1: begun true, ended true, joined false"},
	}
	for _, c := range cases {
		b := trace.NewBuilder()
		c.build(b)
		tr := b.Trace()
		cfg.Events = int64(len(tr.Events))
		err := checkWellFormed(cfg, tr)
		if (err == nil) != (c.want == "") || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// Without sync objects a handed-off variable can only change hands by a
// join: the parent inherits what the child owned. In waves, main joins a
// wave and goes on working while the next one runs, so it uses what it
// inherited.
func TestJoinHandsOffVariables(t *testing.T) {
	inherited := 0
	for seed := range uint64(20) {
		cfg := Config{Seed: seed, Events: 1500, Goroutines: 7, Shape: Waves, WaveSize: 2, Vars: 3,
			HandoffFraction: 1, ReadFraction: 0.5, Switch: 0.5}
		tr, _ := generate(t, cfg)
		if got := hbRacePairs(tr.Events); len(got) != 0 {
			t.Fatalf("seed %d: happens-before races %v", seed, got)
		}
		last := map[uint64]trace.GID{}
		joined := map[trace.GID]bool{}
		for _, e := range tr.Events {
			switch {
			case e.Op == trace.OpJoin:
				joined[e.Child()] = true
			case e.Op.IsAccess() && strings.HasPrefix(tr.M.NameOf(e.Obj), "msg"):
				if prev, ok := last[e.Obj]; ok && prev != e.G {
					if e.G != 0 || !joined[prev] {
						t.Fatalf("seed %d: %s passes from G%d to G%d without a join", seed, tr.M.NameOf(e.Obj), prev, e.G)
					}
					inherited++
				}
				last[e.Obj] = e.G
			}
		}
	}
	if inherited == 0 {
		t.Error("main never used a variable inherited from a joined wave")
	}
}
