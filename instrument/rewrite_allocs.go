package instrument

import (
	"go/ast"
	"go/token"
	"go/types"
	"go/version"
	"strings"
)

// The rewriter's allocation events: a shared local's declaration (and each
// loop iteration's own variables) starts a fresh object.

// allocAt records, at offset pos (the start of a clause's or loop body's
// statements), the creation of v, declared at decl, if it escapes: the
// variable of a type switch's clause, of a select's receive, or of a loop
// iteration.
func (r *rewriter) allocAt(pos int, v *types.Var, decl token.Pos) {
	if !r.shared[v] || v.Name() == "_" {
		return
	}
	r.ed.insertAt(pos, " "+r.allocVar("Alloc", v.Name(), decl)+";", pos, pos)
}

// allocVar is the hook call (fn: Alloc or AllocTrue) that records the
// creation of escaping variable name, declared at decl, and the write of
// its initial value (rt.Alloc).
func (r *rewriter) allocVar(fn, name string, decl token.Pos) string {
	return rtAlias + "." + fn + "(&" + name + ", " + r.allocSite(decl) + ")"
}

// allocSite is the site and sampling flag of an allocation hook that also
// records a write (rt.Alloc, rt.NewLit). Unlike asite it does not count
// as an access hook: a function with allocations gets no unrecorded copy
// (leafCopy), since its allocations must be recorded in every call. In a
// //go:norace function the write is not recorded (the flag false): the
// compiler does not instrument its stores; the allocation still is, as
// the Go race detector's malloc hook resets the memory's state.
func (r *rewriter) allocSite(p token.Pos) string {
	if r.norace {
		return r.site(p) + ", false"
	}
	return r.site(p) + ", " + r.recFlag()
}

// allocIterVars records, at the top of a loop's body, the creation of the
// escaping variables the loop declares (ids: a for loop's init or a
// range's key and value, declared by :=), when each iteration has its own
// (go1.22 and later). Before go1.22 they are one variable per loop, and
// get no allocation event: an earlier object at their address stays
// related to them.
func (r *rewriter) allocIterVars(body *ast.BlockStmt, ids ...ast.Expr) {
	if !r.perIterationVars() {
		return
	}
	lo, _ := r.span(body)
	for _, e := range ids {
		if id, ok := e.(*ast.Ident); ok {
			if v, _ := r.info.Defs[id].(*types.Var); v != nil {
				r.allocAt(lo+1, v, id.Pos())
			}
		}
	}
}

// initAllocs returns, for an if or switch statement's init statement, the
// expression that records the creation of the escaping variables it
// declares (rt.AllocTrue(&v, site) && ..., true), or "": placed before
// the condition or tag, it runs after the init, before anything else
// reaches them.
func (r *rewriter) initAllocs(init ast.Stmt) string {
	var parts []string
	if init != nil && len(r.initAft) > 0 {
		// The events recorded after a statement (an I/O read's acquire,
		// a fresh result's allocation), which no statement can follow
		// here: if n, err := conn.Read(b); err == nil { ... }.
		parts = append(parts, "func() bool { "+strings.Join(r.initAft, "; ")+"; return true }()")
	}
	r.initAft = r.initAft[:0]
	a, ok := init.(*ast.AssignStmt)
	if !ok || a.Tok != token.DEFINE {
		return strings.Join(parts, " && ")
	}
	for _, l := range a.Lhs {
		if id, ok := l.(*ast.Ident); ok && id.Name != "_" {
			if v, _ := r.info.Defs[id].(*types.Var); v != nil && r.shared[v] {
				parts = append(parts, r.allocVar("AllocTrue", id.Name, id.Pos()))
			}
		}
	}
	return strings.Join(parts, " && ")
}

// perIterationVars reports whether the file's language version gives each
// loop iteration its own variables (go1.22); an unknown version counts as
// too old.
func (r *rewriter) perIterationVars() bool {
	v := r.info.FileVersions[r.in.File]
	return v != "" && version.Compare(v, "go1.22") >= 0
}

// hideVars makes the escaping variables among ids private (their accesses
// not recorded) until the caller restores the ones it returns.
func (r *rewriter) hideVars(ids []ast.Expr) []*types.Var {
	var hidden []*types.Var
	for _, e := range ids {
		if id, ok := e.(*ast.Ident); ok {
			if v, _ := r.info.Defs[id].(*types.Var); v != nil && r.shared[v] {
				r.shared[v] = false
				hidden = append(hidden, v)
			}
		}
	}
	return hidden
}

// allocVars records, after var declaration d (statement s), the creation
// of each escaping variable it declares: a new object each time s runs.
func (r *rewriter) allocVars(s ast.Stmt, d *ast.GenDecl) {
	var b strings.Builder
	for _, sp := range d.Specs {
		for _, id := range sp.(*ast.ValueSpec).Names {
			if v, ok := r.info.Defs[id].(*types.Var); ok && r.shared[v] && id.Name != "_" {
				b.WriteString("; " + r.allocVar("Alloc", id.Name, id.Pos()))
			}
		}
	}
	if b.Len() > 0 {
		lo, hi := r.span(s)
		r.ed.appendAt(hi, b.String(), lo, hi)
	}
}

func (r *rewriter) valueSpec(vs *ast.ValueSpec) {
	if len(vs.Names) == 2 && len(vs.Values) == 1 {
		if u, ok := unparen(vs.Values[0]).(*ast.UnaryExpr); ok && u.Op == token.ARROW {
			r.recv(u, true)
			return
		}
	}
	for _, v := range vs.Values {
		r.rd(v)
	}
}
