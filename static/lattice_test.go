package static

import (
	"math/rand"
	"testing"
)

// Lvalues and locks of the tests: formals of a callee and of a caller.
func param(i int, name string, path ...Sel) Lval {
	return Lval{Root: Root{Kind: RootParam, Index: i, Name: name, Mem: "*T"}, Path: path}.keyed()
}

func field(name string) Sel { return Sel{Kind: SelField, Name: name, Mem: "T." + name} }

var load = Sel{Kind: SelLoad, Mem: "*T"}

func lk(l Lval) Lock  { return MakeLock(l, false) }
func rlk(l Lval) Lock { return MakeLock(l, true) }

func rel(plus, minus []Lock) RelLockset {
	return RelLockset{Plus: NewLockSet(plus...), Minus: NewLockSet(minus...)}
}

// The paper's Figure 1 walk-through (section 2): airo_thread holds
// d->priv->lock when it calls airo_read_stats, whose summary is
// ({}, {ai->lock}); after the call, relative to airo_thread's entry, the
// lock is maybe released and no longer held.
func TestLockUpdateFigure1(t *testing.T) {
	dPrivLock := param(0, "d", field("priv"), load, field("lock"))
	aiLock := param(0, "ai", field("lock"))
	before := rel([]Lock{lk(dPrivLock)}, nil)
	callee := rel(nil, []Lock{lk(aiLock)})
	dPriv := param(0, "d", field("priv"), load)
	rebound := callee.Rebind(&Binding{Params: []*Lval{&dPriv}})
	if want := rel(nil, []Lock{lk(dPrivLock)}); !rebound.Equal(want) {
		t.Fatalf("rebind(({}, {ai.lock}), ai := d.priv) = %v, want %v", rebound, want)
	}
	after := LockUpdate(before, rebound)
	if want := rel(nil, []Lock{lk(dPrivLock)}); !after.Equal(want) {
		t.Errorf("lockUpdate = %v, want %v", after, want)
	}
	if got := after.String(); got != "({}, {d.priv.lock})" {
		t.Errorf("String() = %q", got)
	}
}

// Figure 3: lockUpdate((L+, L-), (L'+, L'-)) = ((L+ ∪ L'+) − L'-, (L- ∪ L'-) − L'+).
func TestLockUpdate(t *testing.T) {
	a, b, c := lk(param(0, "a")), lk(param(1, "b")), lk(param(2, "c"))
	cases := []struct {
		name      string
		caller, f RelLockset
		want      RelLockset
	}{
		{"acquire adds to L+", rel([]Lock{a}, nil), rel([]Lock{b}, nil), rel([]Lock{a, b}, nil)},
		{"release moves to L-", rel([]Lock{a, b}, nil), rel(nil, []Lock{a}), rel([]Lock{b}, []Lock{a})},
		{"reacquire leaves L-", rel(nil, []Lock{a}), rel([]Lock{a}, nil), rel([]Lock{a}, nil)},
		{"release and acquire", rel([]Lock{a}, []Lock{c}), rel([]Lock{c}, []Lock{a}), rel([]Lock{c}, []Lock{a})},
		{"identity", rel([]Lock{a}, []Lock{b}), EmptyLockset(), rel([]Lock{a}, []Lock{b})},
		{"unreachable caller", BottomLockset(), rel([]Lock{a}, nil), BottomLockset()},
		{"callee never returns", rel([]Lock{a}, nil), BottomLockset(), BottomLockset()},
		{"unknown callee effect", rel([]Lock{a}, nil), TopLockset(), TopLockset()},
	}
	for _, c := range cases {
		if got := LockUpdate(c.caller, c.f); !got.Equal(c.want) {
			t.Errorf("%s: lockUpdate(%v, %v) = %v, want %v", c.name, c.caller, c.f, got, c.want)
		}
	}
}

// Figure 5: rebind replaces formals by the actuals' symbolic values; a lock
// on an actual the caller cannot name is not known held, but stays maybe
// released; two formals bound to one actual: acquire and release collapse
// into released.
func TestRebind(t *testing.T) {
	cMu := param(0, "c", field("mu"))
	x := param(0, "x")
	xMu := param(0, "x", field("mu"))
	got := rel([]Lock{lk(cMu)}, nil).Rebind(&Binding{Params: []*Lval{&x}})
	if want := rel([]Lock{lk(xMu)}, nil); !got.Equal(want) {
		t.Errorf("rebind to x: %v, want %v", got, want)
	}
	unknown := rel([]Lock{lk(cMu)}, []Lock{lk(param(1, "d", field("mu")))}).Rebind(&Binding{Params: []*Lval{nil, nil}})
	if len(unknown.Plus) != 0 || len(unknown.Minus) != 1 || unknown.Minus[0].L.Exact() {
		t.Errorf("rebind to unknown actuals: %v, want ({}, {?})", unknown)
	}
	both := rel([]Lock{lk(cMu)}, []Lock{lk(param(1, "d", field("mu")))}).Rebind(&Binding{Params: []*Lval{&x, &x}})
	if want := rel(nil, []Lock{lk(xMu)}); !both.Equal(want) {
		t.Errorf("rebind with aliased actuals: %v, want %v", both, want)
	}
	// Lvalues: formals replaced, globals kept, paths appended.
	g := Lval{Root: Root{Kind: RootGlobal, Name: "p.G", Mem: "*T"}}.keyed()
	dPriv := param(0, "d", field("priv"), load)
	if got := param(0, "ai", field("stats")).Rebind(&Binding{Params: []*Lval{&dPriv}}).String(); got != "d.priv.stats" {
		t.Errorf("rebind ai.stats = %q", got)
	}
	if got := g.Rebind(&Binding{Params: []*Lval{&dPriv}}); got.Key() != g.Key() {
		t.Errorf("rebind of a global changed it: %v", got)
	}
	fresh := Lval{Root: Root{Kind: RootAlloc, Name: "f.go:3:7", Mem: "*T"}}.keyed()
	if got := fresh.Rebind(&Binding{FreshFrom: "f.go:3:7", FreshTo: "g.go:9:2"}); got.Root.Name != "g.go:9:2" {
		t.Errorf("fresh result not renamed to the call site: %v", got.Root.Name)
	}
}

// Read locks: two RLock holders do not exclude each other; a writer and a
// reader, or two writers, do.
func TestExcludes(t *testing.T) {
	mu := param(0, "t", field("rw"))
	other := param(0, "t", field("mu"))
	w, r := NewLockSet(lk(mu)), NewLockSet(rlk(mu))
	cases := []struct {
		a, b LockSet
		want bool
	}{
		{w, w, true}, {w, r, true}, {r, w, true}, {r, r, false},
		{nil, w, false}, {NewLockSet(lk(other)), w, false},
		{NewLockSet(lk(other), rlk(mu)), NewLockSet(rlk(mu), lk(other)), true},
	}
	for _, c := range cases {
		if got := c.a.Excludes(c.b); got != c.want {
			t.Errorf("%v excludes %v = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// randomLockset draws from a small universe so that laws meet overlaps.
func randomLockset(r *rand.Rand, universe []Lock) RelLockset {
	switch r.Intn(10) {
	case 0:
		return BottomLockset()
	case 1:
		return TopLockset()
	}
	var plus, minus []Lock
	for _, l := range universe {
		switch r.Intn(3) {
		case 0:
			plus = append(plus, l)
		case 1:
			minus = append(minus, l)
		}
	}
	return rel(plus, minus)
}

func universe() []Lock {
	return []Lock{lk(param(0, "a")), lk(param(1, "b")), rlk(param(1, "b")), lk(param(0, "a", field("mu"))), lk(param(2, "c"))}
}

// The lattice laws of section 3.2 for relative locksets.
func TestRelLocksetLattice(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	u := universe()
	for i := 0; i < 2000; i++ {
		a, b, c := randomLockset(r, u), randomLockset(r, u), randomLockset(r, u)
		checkLattice(t, "RelLockset", a, b, c, RelLockset.Join, RelLockset.Leq, RelLockset.Equal, BottomLockset(), TopLockset())
		// Meet is the dual.
		if !a.Meet(b).Equal(b.Meet(a)) || !a.Meet(a).Equal(a) || !a.Meet(b).Leq(a) {
			t.Fatalf("meet laws fail for %v, %v", a, b)
		}
		if !a.Join(a.Meet(b)).Equal(a) {
			t.Fatalf("absorption fails for %v, %v", a, b)
		}
		// lockUpdate is monotone in the caller's lockset.
		if a.Leq(b) && !LockUpdate(a, c).Leq(LockUpdate(b, c)) {
			t.Fatalf("lockUpdate not monotone: %v ⊑ %v but not after %v", a, b, c)
		}
	}
}

func randomAccessSet(r *rand.Rand, u []Lock) AccessSet {
	objs := []Lval{param(0, "a", field("f")), param(1, "b", field("f")), param(0, "a", field("g"))}
	var b accessBuilder
	for i := r.Intn(4); i > 0; i-- {
		l := randomLockset(r, u)
		if l.Bottom {
			continue
		}
		b.add(Access{Obj: objs[r.Intn(len(objs))], L: l, Write: r.Intn(2) == 0, Site: []string{"x.go:1:1", "x.go:2:1"}[r.Intn(2)], Unpub: r.Intn(3) == 0})
	}
	return b.set()
}

// The guarded access summary is a lattice: union with pointwise join.
func TestAccessSetLattice(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	u := universe()
	for i := 0; i < 2000; i++ {
		a, b, c := randomAccessSet(r, u), randomAccessSet(r, u), randomAccessSet(r, u)
		checkLattice(t, "AccessSet", a, b, c, AccessSet.Join, AccessSet.Leq, AccessSet.Equal, AccessSet{}, nil)
	}
}

// Summaries are the product lattice.
func TestSummaryLattice(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	u := universe()
	rets := []ReturnVal{{}, {Kind: ResultLval, L: param(0, "a")}, {Kind: ResultLval, L: param(1, "b")}, {Kind: ResultFresh, L: param(0, "a")}, {Kind: ResultTop}}
	gen := func() *Summary {
		return &Summary{Lock: randomLockset(r, u), Accesses: randomAccessSet(r, u), Return: rets[r.Intn(len(rets))], Signals: r.Intn(2) == 0}
	}
	for i := 0; i < 2000; i++ {
		checkLattice(t, "Summary", gen(), gen(), gen(), (*Summary).Join, (*Summary).Leq, (*Summary).Equal, BottomSummary(), nil)
	}
}

// checkLattice checks the join-semilattice laws and the order's agreement
// with join, plus bottom (and top when given) as identities/absorbers.
func checkLattice[T any](t *testing.T, name string, a, b, c T, join func(T, T) T, leq func(T, T) bool, eq func(T, T) bool, bottom T, top any) {
	t.Helper()
	if !eq(join(a, b), join(b, a)) {
		t.Fatalf("%s: join not commutative: %v, %v", name, a, b)
	}
	if !eq(join(join(a, b), c), join(a, join(b, c))) {
		t.Fatalf("%s: join not associative: %v, %v, %v", name, a, b, c)
	}
	if !eq(join(a, a), a) {
		t.Fatalf("%s: join not idempotent: %v", name, a)
	}
	if !eq(join(bottom, a), a) || !leq(bottom, a) {
		t.Fatalf("%s: bottom is not the identity: %v", name, a)
	}
	if !leq(a, join(a, b)) || !leq(b, join(a, b)) {
		t.Fatalf("%s: join is not an upper bound: %v, %v", name, a, b)
	}
	if leq(a, b) != eq(join(a, b), b) {
		t.Fatalf("%s: order disagrees with join: %v, %v", name, a, b)
	}
	if !leq(a, a) {
		t.Fatalf("%s: order not reflexive: %v", name, a)
	}
	if leq(a, b) && leq(b, a) && !eq(a, b) {
		t.Fatalf("%s: order not antisymmetric: %v, %v", name, a, b)
	}
	if tp, ok := top.(T); ok {
		if !eq(join(tp, a), tp) || !leq(a, tp) {
			t.Fatalf("%s: top does not absorb: %v", name, a)
		}
	}
}
