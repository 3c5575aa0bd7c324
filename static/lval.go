package static

import (
	"strconv"
	"strings"
)

// RootKind says what a symbolic lvalue is rooted at (the x and p of the
// paper's Figure 2).
type RootKind uint8

const (
	// RootParam is the incoming value of a formal parameter (receiver
	// first), Index is its position.
	RootParam RootKind = iota + 1
	// RootFreeVar is the incoming value of a closure's free variable:
	// closures are summarized as if their captures were parameters.
	RootFreeVar
	// RootGlobal is the address of a package variable, Name is
	// "pkgpath.name".
	RootGlobal
	// RootAlloc is an object allocated at one site (Name is the site,
	// "file:line:col"), or returned fresh by a call at that site.
	RootAlloc
	// RootUnknown is a value the symbolic execution could not express in
	// terms of formals and globals (the paper's ⊤, or a points-to
	// representative that does not survive rebinding). Lvalues rooted here
	// may alias any lvalue with the same memory identity.
	RootUnknown
)

// Root is the base of a symbolic lvalue.
type Root struct {
	Kind  RootKind
	Index int    // parameter or free variable position
	Name  string // display name (parameter, global) or site (alloc)
	Fn    string // for parameters compared across functions: the function
	Mem   string // memory identity of *root (see Lval.Mem)
	Var   string // for allocations of named variables: the name (display only)
}

// SelKind is one step of an access path.
type SelKind uint8

const (
	// SelField is &(*a).f.
	SelField SelKind = iota + 1
	// SelElem is &(*a)[i] for any i: arrays, slices and maps are one
	// lvalue per object (the paper's index 0).
	SelElem
	// SelLoad is *a: the pointer stored at a, as the incoming value
	// init(o) of Figure 2.
	SelLoad
)

// Sel is a path step. Mem is the memory identity of the cell the step
// designates: "T.f" for a field of struct type T, "[]E" for an element of
// type E, "*T" for a whole object of type T.
type Sel struct {
	Kind SelKind
	Name string // field name (SelField)
	Mem  string
}

// maxPath bounds access paths so that symbolic execution and rebinding in
// recursive functions terminate (RELAY uses points-to representatives for
// the same purpose). Longer paths are collapsed to an unknown root that
// keeps the memory identity of the last step.
const maxPath = 10

// Lval is a symbolic address: the lvalue *Lval is what an access touches or
// a lock names. It is the paper's o ∈ 𝕆: x | x.f | p.f | (*o).f.
type Lval struct {
	Root Root
	Path []Sel
	k    string // cached Key, when known
}

// keyed returns l with its key cached.
func (l Lval) keyed() Lval {
	l.k = ""
	l.k = l.Key()
	return l
}

// Mem is the memory identity of the cell the lvalue designates. Go is type
// safe, so two lvalues with different memory identities never alias.
func (l Lval) Mem() string {
	if n := len(l.Path); n > 0 {
		return l.Path[n-1].Mem
	}
	return l.Root.Mem
}

// With returns l extended by one step, collapsing overlong paths.
func (l Lval) With(s Sel) Lval {
	if len(l.Path) >= maxPath {
		return Lval{Root: Root{Kind: RootUnknown, Mem: s.Mem}}.keyed()
	}
	p := make([]Sel, len(l.Path)+1)
	copy(p, l.Path)
	p[len(l.Path)] = s
	return Lval{Root: l.Root, Path: p}.keyed()
}

// Exact reports whether the lvalue names one memory cell per calling
// context: it is not rooted at an unknown value.
func (l Lval) Exact() bool { return l.Root.Kind != RootUnknown }

// Key is a canonical string: equal keys, equal lvalues.
func (l Lval) Key() string {
	if l.k != "" {
		return l.k
	}
	var b strings.Builder
	l.writeKey(&b)
	return b.String()
}

func (l Lval) writeKey(b *strings.Builder) {
	if l.k != "" {
		b.WriteString(l.k)
		return
	}
	switch l.Root.Kind {
	case RootParam:
		b.WriteString("P")
		b.WriteString(strconv.Itoa(l.Root.Index))
		if l.Root.Fn != "" {
			b.WriteString("@" + l.Root.Fn)
		}
	case RootFreeVar:
		b.WriteString("F")
		b.WriteString(strconv.Itoa(l.Root.Index))
		if l.Root.Fn != "" {
			b.WriteString("@" + l.Root.Fn)
		}
	case RootGlobal:
		b.WriteString("G" + l.Root.Name)
	case RootAlloc:
		b.WriteString("A" + l.Root.Name)
	default:
		b.WriteString("?" + l.Root.Mem)
	}
	for _, s := range l.Path {
		switch s.Kind {
		case SelField:
			b.WriteString("." + s.Mem)
		case SelElem:
			b.WriteString("[]")
		case SelLoad:
			b.WriteString("*")
		}
	}
}

// String renders the lvalue *l in Go syntax: "c.mu", "stats", "d.priv.stats",
// "*p", "m[*]". Unknown roots print as "?".
func (l Lval) String() string {
	// obj is Go syntax for the object l points to (auto-dereferencing, as
	// x.f does); lv is the lvalue *l itself.
	var obj string
	deref := true // whether obj is a pointer expression that needs * to be an lvalue
	switch l.Root.Kind {
	case RootParam, RootFreeVar:
		obj = l.Root.Name
		if obj == "" {
			obj = "arg" + strconv.Itoa(l.Root.Index)
		}
	case RootGlobal:
		obj = l.Root.Name
		if i := strings.LastIndexByte(obj, '/'); i >= 0 {
			obj = obj[i+1:]
		}
		deref = false
	case RootAlloc:
		if l.Root.Var != "" {
			obj = l.Root.Var
		} else {
			obj = "new@" + shortSite(l.Root.Name)
		}
		deref = false
	default:
		obj = "?"
	}
	for _, s := range l.Path {
		switch s.Kind {
		case SelField:
			obj = obj + "." + s.Name
			deref = false
		case SelElem:
			obj = obj + "[*]"
			deref = false
		case SelLoad:
			if deref {
				obj = "(*" + obj + ")"
			}
			deref = true
		}
	}
	if deref {
		return "*" + obj
	}
	return obj
}

// shortSite drops the directory from "dir/file.go:1:2".
func shortSite(s string) string {
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// Binding gives the caller-side values of a callee's formals and free
// variables; a nil entry is a value the caller cannot express.
type Binding struct {
	Params   []*Lval
	FreeVars []*Lval
	// FreeVarVals are the known contents of captured variables (written
	// once before capture): a path starting with a load of free variable i
	// continues from FreeVarVals[i].
	FreeVarVals []*Lval
	// FreshFrom, FreshTo rename the callee's fresh result (allocated at
	// site FreshFrom) to the call site FreshTo: each call returns a new
	// object.
	FreshFrom, FreshTo string
}

// Rebind re-expresses a callee lvalue in the caller's context (the paper's
// Figure 5: q[formal(f) ↦ eval(e)]). Globals and allocation sites keep
// their identity; formals become the actuals' symbolic values.
func (l Lval) Rebind(b *Binding) Lval {
	var base *Lval
	switch l.Root.Kind {
	case RootParam:
		if b != nil && l.Root.Index < len(b.Params) {
			base = b.Params[l.Root.Index]
		}
	case RootFreeVar:
		if b != nil && l.Root.Index < len(b.FreeVarVals) && b.FreeVarVals[l.Root.Index] != nil &&
			len(l.Path) > 0 && l.Path[0].Kind == SelLoad {
			rest := Lval{Root: Root{Kind: RootFreeVar, Index: l.Root.Index}, Path: l.Path[1:]}
			return rest.Rebind(&Binding{FreeVars: b.FreeVarVals})
		}
		if b != nil && l.Root.Index < len(b.FreeVars) {
			base = b.FreeVars[l.Root.Index]
		}
	case RootAlloc:
		if b != nil && b.FreshFrom != "" && l.Root.Name == b.FreshFrom {
			l.Root.Name = b.FreshTo
			return l.keyed()
		}
		return l
	default:
		return l
	}
	if base == nil {
		// The actual is unknown: keep the path's memory identity.
		return Lval{Root: Root{Kind: RootUnknown, Mem: l.Root.Mem}, Path: l.Path}.normalize().keyed()
	}
	if len(l.Path) == 0 {
		return *base
	}
	if len(base.Path)+len(l.Path) > maxPath {
		return Lval{Root: Root{Kind: RootUnknown, Mem: l.Mem()}}.keyed()
	}
	p := make([]Sel, 0, len(base.Path)+len(l.Path))
	p = append(p, base.Path...)
	p = append(p, l.Path...)
	return Lval{Root: base.Root, Path: p}.keyed()
}

// normalize collapses unknown-rooted paths to their last step: below an
// unknown root only the memory identity matters.
func (l Lval) normalize() Lval {
	if l.Root.Kind == RootUnknown && len(l.Path) > 0 {
		return Lval{Root: Root{Kind: RootUnknown, Mem: l.Mem()}}
	}
	return l
}

// Qualify ties parameter and free-variable roots to fn, so that lvalues of
// different functions can be compared (warning generation).
func (l Lval) Qualify(fn string) Lval {
	if l.Root.Kind == RootParam || l.Root.Kind == RootFreeVar {
		l.Root.Fn = fn
		return l.keyed()
	}
	return l
}
