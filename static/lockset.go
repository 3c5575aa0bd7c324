package static

import (
	"sort"
	"strings"
)

// Lock is a lock lvalue with its mode: sync.Mutex and the write side of
// sync.RWMutex are write locks; RLock takes the read side.
type Lock struct {
	L    Lval
	Read bool
	K    string // canonical key: L.Key() plus the mode
}

// MakeLock builds a Lock with its key.
func MakeLock(l Lval, read bool) Lock {
	k := l.Key()
	if read {
		k += "/r"
	} else {
		k += "/w"
	}
	return Lock{L: l, Read: read, K: k}
}

func (k Lock) String() string {
	if k.Read {
		return k.L.String() + " (read)"
	}
	return k.L.String()
}

// LockSet is a set of locks sorted by key, without duplicates. The zero
// value is the empty set. LockSets are immutable: operations return new
// slices.
type LockSet []Lock

// NewLockSet returns the set of the given locks.
func NewLockSet(ls ...Lock) LockSet {
	s := append(LockSet(nil), ls...)
	sort.Slice(s, func(i, j int) bool { return s[i].K < s[j].K })
	out := s[:0]
	for i, l := range s {
		if i == 0 || l.K != s[i-1].K {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// Has reports whether s holds a lock with key k.
func (s LockSet) Has(k string) bool {
	i := sort.Search(len(s), func(i int) bool { return s[i].K >= k })
	return i < len(s) && s[i].K == k
}

// Union is s ∪ t.
func (s LockSet) Union(t LockSet) LockSet {
	if len(t) == 0 {
		return s
	}
	if len(s) == 0 {
		return t
	}
	out := make(LockSet, 0, len(s)+len(t))
	i, j := 0, 0
	for i < len(s) && j < len(t) {
		switch {
		case s[i].K < t[j].K:
			out = append(out, s[i])
			i++
		case s[i].K > t[j].K:
			out = append(out, t[j])
			j++
		default:
			out = append(out, s[i])
			i++
			j++
		}
	}
	out = append(out, s[i:]...)
	return append(out, t[j:]...)
}

// Intersect is s ∩ t.
func (s LockSet) Intersect(t LockSet) LockSet {
	var out LockSet
	i, j := 0, 0
	for i < len(s) && j < len(t) {
		switch {
		case s[i].K < t[j].K:
			i++
		case s[i].K > t[j].K:
			j++
		default:
			out = append(out, s[i])
			i++
			j++
		}
	}
	return out
}

// Minus is s − t.
func (s LockSet) Minus(t LockSet) LockSet {
	if len(t) == 0 || len(s) == 0 {
		return s
	}
	var out LockSet
	j := 0
	for _, l := range s {
		for j < len(t) && t[j].K < l.K {
			j++
		}
		if j < len(t) && t[j].K == l.K {
			continue
		}
		out = append(out, l)
	}
	return out
}

// SubsetOf reports s ⊆ t.
func (s LockSet) SubsetOf(t LockSet) bool {
	j := 0
	for _, l := range s {
		for j < len(t) && t[j].K < l.K {
			j++
		}
		if j == len(t) || t[j].K != l.K {
			return false
		}
	}
	return true
}

// Equal reports s = t.
func (s LockSet) Equal(t LockSet) bool {
	if len(s) != len(t) {
		return false
	}
	for i := range s {
		if s[i].K != t[i].K {
			return false
		}
	}
	return true
}

func (s LockSet) String() string {
	parts := make([]string, len(s))
	for i, l := range s {
		parts[i] = l.String()
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// Excludes reports whether holding s and t at two accesses makes them
// mutually exclusive: some lock is in both, and not in read mode in both
// (two readers of an RWMutex run together). This is the Figure 7 test
// L₊ ∩ L′₊ ≠ ∅, refined for read locks.
func (s LockSet) Excludes(t LockSet) bool {
	for _, l := range s {
		base := lockBase(l.K)
		if t.Has(base+"/w") || (!l.Read && t.Has(base+"/r")) {
			return true
		}
	}
	return false
}

func lockBase(k string) string { return k[:len(k)-2] }

// RelLockset is the paper's relative lockset (L₊, L₋): the locks surely
// acquired and the locks maybe released since the function's entry. It is
// a lattice (𝕃, ⊥, ⊤, ⊑, ⊔, ⊓), section 3.2:
//
//	⊥ = (𝕆, ∅)   ⊤ = (∅, 𝕆)
//	(L₊, L₋) ⊑ (L′₊, L′₋)  iff  L′₊ ⊆ L₊ ∧ L₋ ⊆ L′₋
//	(L₊, L₋) ⊔ (L′₊, L′₋)  =  (L₊ ∩ L′₊, L₋ ∪ L′₋)
//	(L₊, L₋) ⊓ (L′₊, L′₋)  =  (L₊ ∪ L′₊, L₋ ∩ L′₋)
//
// 𝕆 is infinite, so ⊥ and ⊤ are flags. Outside them, Plus and Minus are
// disjoint.
type RelLockset struct {
	Plus, Minus LockSet
	Bottom      bool // ⊥: no execution reaches here (yet)
	Top         bool // ⊤: nothing known to be held, anything may be released
}

// Bottom is ⊥, the dataflow's initial value for unreached points.
func BottomLockset() RelLockset { return RelLockset{Bottom: true} }

// TopLockset is ⊤.
func TopLockset() RelLockset { return RelLockset{Top: true} }

// EmptyLockset is (∅, ∅), the relative lockset at a function's entry.
func EmptyLockset() RelLockset { return RelLockset{} }

// Leq is the lattice order ⊑.
func (a RelLockset) Leq(b RelLockset) bool {
	switch {
	case a.Bottom || b.Top:
		return true
	case b.Bottom || a.Top:
		return false
	}
	return b.Plus.SubsetOf(a.Plus) && a.Minus.SubsetOf(b.Minus)
}

// Equal is lattice equality.
func (a RelLockset) Equal(b RelLockset) bool {
	if a.Bottom || b.Bottom || a.Top || b.Top {
		return a.Bottom == b.Bottom && a.Top == b.Top
	}
	return a.Plus.Equal(b.Plus) && a.Minus.Equal(b.Minus)
}

// Join is ⊔: at a merge point a lock stays surely held only if held on
// every incoming path, and is maybe released if released on any.
func (a RelLockset) Join(b RelLockset) RelLockset {
	switch {
	case a.sameAs(b):
		return a
	case a.Bottom:
		return b
	case b.Bottom:
		return a
	case a.Top || b.Top:
		return TopLockset()
	}
	return RelLockset{Plus: a.Plus.Intersect(b.Plus), Minus: a.Minus.Union(b.Minus)}
}

// sameAs is a cheap sufficient test for equality: the same flags and the
// same backing arrays (summaries share interned locksets).
func (a RelLockset) sameAs(b RelLockset) bool {
	return a.Bottom == b.Bottom && a.Top == b.Top && sameSlice(a.Plus, b.Plus) && sameSlice(a.Minus, b.Minus)
}

func sameSlice(a, b LockSet) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// Meet is ⊓.
func (a RelLockset) Meet(b RelLockset) RelLockset {
	switch {
	case a.Top:
		return b
	case b.Top:
		return a
	case a.Bottom || b.Bottom:
		return BottomLockset()
	}
	return RelLockset{Plus: a.Plus.Union(b.Plus), Minus: a.Minus.Intersect(b.Minus)}
}

// LockUpdate applies the effect f of a callee (rebound to the caller) to
// the caller's relative lockset a (Figure 3):
//
//	lockUpdate((L₊, L₋), (L′₊, L′₋)) = ((L₊ ∪ L′₊) − L′₋, (L₋ ∪ L′₋) − L′₊)
//
// ⊥ on either side stays ⊥ (the call is unreachable or never returns). A
// result involving ⊤ is over-approximated by ⊤.
func LockUpdate(a, f RelLockset) RelLockset {
	switch {
	case !f.Bottom && !f.Top && len(f.Plus) == 0 && len(f.Minus) == 0:
		return a
	case a.Bottom || f.Bottom:
		return BottomLockset()
	case a.Top || f.Top:
		return TopLockset()
	}
	return RelLockset{
		Plus:  a.Plus.Union(f.Plus).Minus(f.Minus),
		Minus: a.Minus.Union(f.Minus).Minus(f.Plus),
	}
}

// Rebind re-expresses a callee's relative lockset in the caller's terms
// (Figure 5). A lock whose lvalue becomes unknown cannot be named in the
// caller: it is dropped from L₊ (not known held, which is conservative) but
// kept in L₋. A lock both acquired and released after rebinding (two
// formals bound to one actual) counts as released.
func (a RelLockset) Rebind(b *Binding) RelLockset {
	if a.Bottom || a.Top || len(a.Plus) == 0 && len(a.Minus) == 0 {
		return a
	}
	plus := make([]Lock, 0, len(a.Plus))
	for _, l := range a.Plus {
		r := l.L.Rebind(b)
		if r.Exact() {
			plus = append(plus, MakeLock(r, l.Read))
		}
	}
	minus := make([]Lock, 0, len(a.Minus))
	for _, l := range a.Minus {
		minus = append(minus, MakeLock(l.L.Rebind(b), l.Read))
	}
	m := NewLockSet(minus...)
	return RelLockset{Plus: NewLockSet(plus...).Minus(m), Minus: m}
}

func (a RelLockset) String() string {
	switch {
	case a.Bottom:
		return "⊥"
	case a.Top:
		return "⊤"
	}
	return "(" + a.Plus.String() + ", " + a.Minus.String() + ")"
}

// lsID identifies a relative lockset by its storage (see internLocksets).
type lsID struct {
	plus, minus *Lock
	np, nm      int
	bottom, top bool
}

func (a RelLockset) id() lsID {
	id := lsID{np: len(a.Plus), nm: len(a.Minus), bottom: a.Bottom, top: a.Top}
	if len(a.Plus) > 0 {
		id.plus = &a.Plus[0]
	}
	if len(a.Minus) > 0 {
		id.minus = &a.Minus[0]
	}
	return id
}
