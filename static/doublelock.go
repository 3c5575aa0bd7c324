package static

import (
	"fmt"
	"go/token"
	"sort"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// Double locking: a goroutine that takes a lock it already holds waits for
// itself forever (sync.Mutex is not reentrant), as does one that takes the
// write side of an RWMutex while it holds the read side ("upgrading" a read
// lock) or the other way round. Go's own tools say nothing; the relative
// lockset analysis already knows what a function surely holds (L₊) and,
// through Summary.Acquires, what each callee may take that it did not
// release first, so a call made holding a lock that the callee takes
// again is found where it is made, whichever branch of the callee takes it
// (issue 30, item 1: Go's double locking). Two read locks of one RWMutex
// are not reported: they deadlock only with a writer between them (the
// dynamic detect/deadlock's RecursiveRead).

// Acquire is a lock a function may take (Lock, RLock), in terms of its
// formals, with no release of that lock before it in the function: a call
// made while that lock is held makes the goroutine wait for itself.
type Acquire struct {
	Lock Lock
	Site string   // the Lock or RLock call
	Via  []string // the calls that lead to it from the function, outermost first ("site callee")
}

func (a Acquire) key() string { return a.Lock.K + "@" + a.Site }

// maxAcquires bounds a summary's acquires (a function reaching many locks).
const maxAcquires = 64

// joinAcquires is the union of a and b by lock and site, bounded.
func joinAcquires(a, b []Acquire) []Acquire {
	if len(b) == 0 {
		return a
	}
	seen := map[string]bool{}
	var out []Acquire
	for _, x := range append(append([]Acquire(nil), a...), b...) {
		if k := x.key(); !seen[k] && len(out) < maxAcquires {
			seen[k] = true
			out = append(out, x)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key() < out[j].key() })
	return out
}

// acquiresLeq reports whether every acquire of a is in b.
func acquiresLeq(a, b []Acquire) bool {
	keys := map[string]bool{}
	for _, x := range b {
		keys[x.key()] = true
	}
	for _, x := range a {
		if !keys[x.key()] {
			return false
		}
	}
	return true
}

// DoubleLock is a lock taken while its goroutine surely holds it (or the
// read side while it holds the write side, or the write side while it
// holds the read side).
type DoubleLock struct {
	Pkg   string   `json:"package"`
	Fn    string   `json:"function"` // the function that holds the lock
	Lock  string   `json:"lock"`
	Held  string   `json:"held"`  // the mode it holds it in: "write" or "read"
	Taken string   `json:"taken"` // the mode it takes it again in
	At    string   `json:"at"`    // where it takes it again: the call in Fn, or the Lock itself
	Lock2 string   `json:"lock_site"`
	Via   []string `json:"via,omitempty"` // the calls from At to the Lock
	pos   token.Pos
}

// DoubleLockRule is a double lock's rule id (diagnostic category, SARIF).
const DoubleLockRule = "RELAY-DOUBLE-LOCK"

// Pos is where the goroutine takes the lock again, in the analyzed package.
func (d *DoubleLock) Pos() token.Pos { return d.pos }

// Message is the one-line diagnostic.
func (d *DoubleLock) Message() string {
	via := ""
	if len(d.Via) > 0 {
		calls := make([]string, len(d.Via))
		for i, v := range d.Via {
			site, callee, _ := strings.Cut(v, " ")
			calls[i] = callee + " called at " + shortSite(site)
		}
		via = " (through " + strings.Join(calls, ", ") + ")"
	}
	return fmt.Sprintf("potential deadlock: %s takes %s in %s mode at %s%s while it holds it in %s mode; the goroutine waits for itself",
		d.Fn, d.Lock, d.Taken, shortSite(d.Lock2), via, d.Held)
}

// heldMode returns the mode in which L surely holds k's lock, if one
// excludes k ("write" or "read"), or "".
func heldMode(L RelLockset, k Lock) string {
	if L.Bottom || L.Top {
		return ""
	}
	base := k.L.Key()
	switch {
	case L.Plus.Has(base + "/w"):
		return "write"
	case !k.Read && L.Plus.Has(base+"/r"):
		return "read"
	}
	return ""
}

// released reports whether L says k's lock was released (in either mode).
func released(L RelLockset, k Lock) bool {
	base := k.L.Key()
	return L.Minus.Has(base+"/w") || L.Minus.Has(base+"/r")
}

// acquire notes that the function, with relative lockset L, takes k at
// site (through the calls via from the call at pos): a double lock if L
// surely holds it, else an acquire of the summary unless L released it.
func (fa *funcAnalysis) acquire(k Lock, L RelLockset, site string, via []string, pos token.Pos) {
	if !fa.emit || !k.L.Exact() {
		return
	}
	if mode := heldMode(L, k); mode != "" && !fa.handedOff(k) {
		taken := "write"
		if k.Read {
			taken = "read"
		}
		at := site
		if len(via) > 0 {
			at = fa.ps.site(pos)
		}
		fa.res.doubles = append(fa.res.doubles, DoubleLock{
			Pkg: fa.ps.pkg.Pkg.Path(), Fn: fa.fn.String(), Lock: k.L.String(), Held: mode, Taken: taken,
			At: at, Lock2: site, Via: via, pos: pos,
		})
		return
	}
	if !released(L, k) {
		fa.acquires = joinAcquires(fa.acquires, []Acquire{{Lock: k, Site: site, Via: via}})
	}
}

// handedOff reports whether the function makes a closure or a method
// value that captures k's lock or what holds it (the lvalue's root): a
// Mutex may be unlocked by another goroutine (go func() { mu.Unlock() },
// time.AfterFunc(d, mu.Unlock)), and a Lock after that is a wait for it,
// not for itself.
func (fa *funcAnalysis) handedOff(k Lock) bool {
	if fa.captured == nil {
		fa.captured = map[Root]bool{}
		for _, b := range fa.fn.Blocks {
			for _, instr := range b.Instrs {
				mc, ok := instr.(*ssa.MakeClosure)
				if !ok {
					continue
				}
				for _, v := range mc.Bindings {
					if l := fa.sym.eval(v); l != nil {
						fa.captured[l.Root] = true
					}
				}
			}
		}
	}
	return fa.captured[k.L.Root]
}

// doubleLocks returns the package's double locks, each once by where it
// happens, in site order.
func (ps *pkgState) doubleLocks() []DoubleLock {
	seen := map[string]bool{}
	var out []DoubleLock
	for _, r := range ps.res {
		for _, d := range r.doubles {
			k := d.At + "|" + d.Lock2 + "|" + d.Lock
			if !seen[k] {
				seen[k] = true
				out = append(out, d)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if c := compareSites(out[i].At, out[j].At); c != 0 {
			return c < 0
		}
		return out[i].Lock2 < out[j].Lock2
	})
	return out
}
