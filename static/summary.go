package static

import (
	"go/token"
	"sort"
	"strconv"
	"strings"
)

// Access is a guarded access (o, L, k) of section 3.3, with the source
// position of the memory operation it came from.
type Access struct {
	Obj   Lval       // the lvalue accessed, in the summarized function's terms
	L     RelLockset // relative lockset at the access
	Write bool       // k: write or read
	Site  string     // "file:line:col" of the load, store, map or builtin operation
	Fn    string     // function containing that operation
	// Via: the operation is in the standard library and Site is the call
	// of the user's code that reached it; Via names the std frames,
	// innermost first (see stdFrames). A race inside bytes.Buffer is the
	// user's two calls, as Go's race report shows them.
	Via []string
	// Unpub: the lvalue is rooted at an object allocated by the summarized
	// function that had not yet been published (stored, passed, captured,
	// sent or returned) on any path to the access.
	Unpub bool

	// Transient, not part of the fact.
	anchor token.Pos // where this function reaches it: the operation, or the call or defer
	pp     progPoint
}

// key identifies an entry of an AccessSet: lvalue, kind and site. Accesses
// to unknown-rooted lvalues are kept once per memory identity and kind
// (with the first site seen): they alias by type only, so more sites add
// nothing but size.
func (a *Access) key() string {
	var b strings.Builder
	a.Obj.writeKey(&b)
	if a.Write {
		b.WriteString("|w|")
	} else {
		b.WriteString("|r|")
	}
	if a.Obj.Root.Kind != RootUnknown {
		b.WriteString(a.Site)
	}
	return b.String()
}

// joinInto joins a into old (same key).
func joinInto(old *Access, a Access) {
	old.L = old.L.Join(a.L)
	old.Unpub = old.Unpub && a.Unpub
	if a.anchor.IsValid() && (!old.anchor.IsValid() || a.anchor < old.anchor) {
		old.anchor = a.anchor
	}
}

// accessBuilder accumulates an AccessSet in insertion order (the guarded
// access analysis adds thousands of entries; sorting once is cheaper).
type accessBuilder struct {
	idx   map[string]int
	items []Access
	keys  []string
}

func (b *accessBuilder) add(a Access) {
	if a.L.Bottom {
		return
	}
	k := a.key()
	if i, ok := b.idx[k]; ok {
		joinInto(&b.items[i], a)
		return
	}
	if b.idx == nil {
		b.idx = map[string]int{}
	}
	b.idx[k] = len(b.items)
	b.items = append(b.items, a)
	b.keys = append(b.keys, k)
}

func (b *accessBuilder) set() AccessSet {
	internLocksets(b.items)
	order := make([]int, len(b.items))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(i, j int) bool { return b.keys[order[i]] < b.keys[order[j]] })
	s := AccessSet{Items: make([]Access, len(order)), Keys: make([]string, len(order))}
	for i, o := range order {
		s.Items[i], s.Keys[i] = b.items[o], b.keys[o]
	}
	return s
}

func (a Access) kind() string {
	if a.Write {
		return "write"
	}
	return "read"
}

func (a Access) String() string {
	return a.kind() + " " + a.Obj.String() + " " + a.L.String() + " at " + a.Site
}

// AccessSet is a guarded access summary: a map from (lvalue, kind, site)
// to the join of the relative locksets under which that operation may run
// (the paper's set of triples, with one element per operation). It is a
// lattice: ⊥ is the empty set, ⊔ is pointwise join, ⊑ pointwise order; an
// absent entry is ⊥. Entries are sorted by key; the zero value is empty.
type AccessSet struct {
	Items []Access
	Keys  []string
}

func (s *AccessSet) find(k string) (int, bool) {
	i := sort.SearchStrings(s.Keys, k)
	return i, i < len(s.Keys) && s.Keys[i] == k
}

// Len is the number of entries.
func (s AccessSet) Len() int { return len(s.Items) }

// Add joins one access into the set.
func (s *AccessSet) Add(a Access) {
	if a.L.Bottom {
		return
	}
	k := a.key()
	i, ok := s.find(k)
	if ok {
		joinInto(&s.Items[i], a)
		return
	}
	s.Items = append(s.Items, Access{})
	copy(s.Items[i+1:], s.Items[i:])
	s.Items[i] = a
	s.Keys = append(s.Keys, "")
	copy(s.Keys[i+1:], s.Keys[i:])
	s.Keys[i] = k
}

// Join is s ⊔ t.
func (s AccessSet) Join(t AccessSet) AccessSet {
	var out AccessSet
	out.Items = append(out.Items, s.Items...)
	out.Keys = append(out.Keys, s.Keys...)
	for _, a := range t.Items {
		out.Add(a)
	}
	return out
}

// Leq is the order ⊑: every entry of s is below the entry of t with the
// same key (locksets by RelLockset.Leq; an unpublished access is below a
// published one, since publication only adds warnings).
func (s AccessSet) Leq(t AccessSet) bool {
	for i, a := range s.Items {
		j, ok := t.find(s.Keys[i])
		if !ok {
			return false
		}
		b := t.Items[j]
		if !a.L.Leq(b.L) || (b.Unpub && !a.Unpub) {
			return false
		}
	}
	return true
}

// Equal is lattice equality.
func (s AccessSet) Equal(t AccessSet) bool {
	if len(s.Items) != len(t.Items) {
		return false
	}
	for i := range s.Items {
		if s.Keys[i] != t.Keys[i] || !s.Items[i].L.Equal(t.Items[i].L) || s.Items[i].Unpub != t.Items[i].Unpub {
			return false
		}
	}
	return true
}

// widen bounds the set to at most max entries, an upper bound of s in the
// order: first entries that differ only by site are merged (keeping the
// smallest site), then, if that is not enough, surplus entries are dropped
// (unsound, and counted by the caller). It reports what it did.
func (s AccessSet) widen(max int) (out AccessSet, merged, dropped bool) {
	if len(s.Items) <= max {
		return s, false, false
	}
	out = collapseTo(s, func(*Access) bool { return false })
	if len(out.Items) > max {
		// Still too many: forget the paths of the accesses made inside
		// the standard library (json's, reflect's state: hundreds of
		// fields), keeping each memory identity and kind once (an
		// unknown-rooted lvalue aliases every cell of its identity, so no
		// race through them is lost); the user's own accesses keep theirs.
		out = collapseTo(out, func(a *Access) bool { return len(a.Via) > 0 })
	}
	if len(out.Items) > max {
		out = collapseTo(out, func(*Access) bool { return true })
	}
	if len(out.Items) > max {
		// Drop, the standard library's first.
		sort.SliceStable(out.Items, func(i, j int) bool {
			return len(out.Items[i].Via) == 0 && len(out.Items[j].Via) > 0
		})
		out.Items = out.Items[:max]
		dropped = true
	}
	var b accessBuilder
	for _, a := range out.Items {
		b.add(a)
	}
	return b.set(), true, dropped
}

// collapseTo merges the accesses of one lvalue and kind whatever their
// sites (the first kept, locksets joined), after re-rooting those which
// selects at an unknown value of their memory identity.
func collapseTo(s AccessSet, which func(*Access) bool) (out AccessSet) {
	index := map[string]int{}
	for _, a := range s.Items {
		if which(&a) {
			a.Obj = Lval{Root: Root{Kind: RootUnknown, Mem: a.Obj.Mem()}}.keyed()
		}
		k := a.Obj.Key()
		if a.Write {
			k += "|w"
		}
		if i, ok := index[k]; ok {
			b := &out.Items[i]
			b.L = b.L.Join(a.L)
			b.Unpub = b.Unpub && a.Unpub
			continue
		}
		index[k] = len(out.Items)
		out.Items = append(out.Items, a)
	}
	return out
}

// internLocksets makes equal locksets of a summary share storage, so that
// callers rebind each distinct lockset once per call site.
func internLocksets(items []Access) {
	seen := map[string]LockSet{}
	intern := func(s LockSet) LockSet {
		if len(s) == 0 {
			return nil
		}
		var b strings.Builder
		for _, l := range s {
			b.WriteString(l.K)
			b.WriteByte(0)
		}
		k := b.String()
		if t, ok := seen[k]; ok {
			return t
		}
		seen[k] = s
		return s
	}
	for i := range items {
		items[i].L.Plus = intern(items[i].L.Plus)
		items[i].L.Minus = intern(items[i].L.Minus)
	}
}

// ResultKind classifies what a function returns, a flat lattice.
type ResultKind uint8

const (
	ResultNone  ResultKind = iota // ⊥: no return seen
	ResultLval                    // always the same symbolic value
	ResultFresh                   // a new object allocated in the function
	ResultTop                     // anything
)

// ReturnVal is the symbolic value a function returns (its only result).
type ReturnVal struct {
	Kind ResultKind
	L    Lval
}

// Join is the flat-lattice join.
func (r ReturnVal) Join(s ReturnVal) ReturnVal {
	switch {
	case r.Kind == ResultNone:
		return s
	case s.Kind == ResultNone:
		return r
	case r.Kind == s.Kind && (r.Kind != ResultLval || r.L.Key() == s.L.Key()):
		return r
	}
	return ReturnVal{Kind: ResultTop}
}

// Leq is the flat-lattice order.
func (r ReturnVal) Leq(s ReturnVal) bool {
	return r.Kind == ResultNone || s.Kind == ResultTop || r.Join(s).equal(s)
}

func (r ReturnVal) equal(s ReturnVal) bool {
	return r.Kind == s.Kind && (r.Kind != ResultLval || r.L.Key() == s.L.Key())
}

// Summary is what RELAY knows about a function: its relative lockset
// summary (the relative lockset at exit) and its guarded access summary,
// both in terms of its formals (receiver first), free variables and
// package variables. Summaries of a package's functions and methods are
// exported as analysis facts, so that importers use them as callees'.
//
// Summaries form the product lattice of their parts; the SCC fixpoint
// starts from BottomSummary and joins upwards.
type Summary struct {
	Fn       string
	Params   []string
	Lock     RelLockset
	Accesses AccessSet
	Return   ReturnVal
	// Signals: the function may send on or close a channel, or call
	// WaitGroup.Done (the handoff filter pairs this with a wait).
	Signals bool
	// Acquires: the locks it may take without releasing them first
	// (doublelock.go).
	Acquires []Acquire
}

// AFact marks Summary as a go/analysis fact.
func (*Summary) AFact() {}

func (s *Summary) String() string {
	var b strings.Builder
	b.WriteString(s.Fn + ": lock " + s.Lock.String() + ", " + strconv.Itoa(s.Accesses.Len()) + " accesses")
	for _, a := range s.Accesses.Items {
		b.WriteString("\n  " + a.String())
	}
	return b.String()
}

// BottomSummary is the summary of a function never known to return or
// access anything: the start of the fixpoint over a recursive SCC.
func BottomSummary() *Summary { return &Summary{Lock: BottomLockset()} }

// Join is the pointwise join.
func (s *Summary) Join(t *Summary) *Summary {
	return &Summary{
		Fn:       s.Fn,
		Params:   s.Params,
		Lock:     s.Lock.Join(t.Lock),
		Accesses: s.Accesses.Join(t.Accesses),
		Return:   s.Return.Join(t.Return),
		Signals:  s.Signals || t.Signals,
		Acquires: joinAcquires(s.Acquires, t.Acquires),
	}
}

// Leq is the pointwise order.
func (s *Summary) Leq(t *Summary) bool {
	return s.Lock.Leq(t.Lock) && s.Accesses.Leq(t.Accesses) && s.Return.Leq(t.Return) && (!s.Signals || t.Signals) && acquiresLeq(s.Acquires, t.Acquires)
}

// Equal is lattice equality.
func (s *Summary) Equal(t *Summary) bool {
	return s.Lock.Equal(t.Lock) && s.Accesses.Equal(t.Accesses) && s.Return.equal(t.Return) && s.Signals == t.Signals &&
		acquiresLeq(s.Acquires, t.Acquires) && acquiresLeq(t.Acquires, s.Acquires)
}
