package instrument

import (
	"go/ast"
	"go/token"
	"go/types"
)

// The rewriter's memory accesses: which locations are shared (package
// variables, escaping locals, heap cells), and the reads and writes
// recorded for an expression, its operands first.

func unparen(e ast.Expr) ast.Expr {
	for {
		p, ok := e.(*ast.ParenExpr)
		if !ok {
			return e
		}
		e = p.X
	}
}

func (r *rewriter) isType(e ast.Expr) bool {
	tv, ok := r.info.Types[e]
	return ok && tv.IsType()
}

// sharedIdent reports whether id names a variable whose accesses are
// recorded: a package-level variable or a shared local.
func (r *rewriter) sharedIdent(id *ast.Ident) bool {
	if id.Name == "_" || r.norace {
		return false
	}
	v, ok := r.info.Uses[id].(*types.Var)
	if !ok {
		return false
	}
	if v.IsField() {
		return false
	}
	if isPackageVar(v) {
		return r.in.InitOnly == nil || !r.in.InitOnly(v)
	}
	return r.shared[v]
}

// pkgVarSel reports whether x is pkg.V for a package-level variable V of an
// imported package.
func (r *rewriter) pkgVarSel(x *ast.SelectorExpr) bool {
	if _, ok := r.info.Selections[x]; ok {
		return false
	}
	v, ok := r.info.Uses[x.Sel].(*types.Var)
	return ok && isPackageVar(v)
}

// sharedLoc reports whether the location e may be reached by another
// goroutine: it is (part of) a package variable or a shared local, or it
// is reached through a pointer or a slice.
func (r *rewriter) sharedLoc(e ast.Expr) bool {
	if r.norace {
		return false
	}
	switch x := e.(type) {
	case *ast.ParenExpr:
		return r.sharedLoc(x.X)
	case *ast.Ident:
		return r.sharedIdent(x)
	case *ast.SelectorExpr:
		if r.pkgVarSel(x) {
			return true
		}
		sel := r.info.Selections[x]
		if sel == nil || sel.Kind() != types.FieldVal {
			return false
		}
		if sel.Indirect() || isPointer(typeOf(r.info, x.X)) {
			return true
		}
		return r.sharedLoc(x.X)
	case *ast.IndexExpr:
		if r.isInstance(x) {
			return false
		}
		t := typeOf(r.info, x.X)
		switch {
		case isSlice(t), isPtrToArray(t):
			return true
		case isArray(t):
			return r.sharedLoc(x.X)
		}
		return false
	case *ast.StarExpr:
		return !r.isType(x)
	}
	return false
}

func (r *rewriter) isInstance(x *ast.IndexExpr) bool {
	if _, ok := r.info.Instances[identOf(x.X)]; ok {
		return true
	}
	_, isSig := core(typeOf(r.info, x.X)).(*types.Signature)
	return isSig || r.isType(x)
}

func identOf(e ast.Expr) *ast.Ident {
	switch x := unparen(e).(type) {
	case *ast.Ident:
		return x
	case *ast.SelectorExpr:
		return x.Sel
	}
	return nil
}

// access wraps the location e: kind R reads it, W writes it, RW does both.
// A value that is only ever accessed whole (anything but a struct, an array
// or a type parameter) is recorded as one event (the hooks R1, W1, RW1).
//
// An access of a struct or an array of several parts has a wide site: Go's
// compiler has such an access checked as one range (racereadrange), which
// go test -race treats apart (trace.Site.Wide).
func (r *rewriter) access(e ast.Expr, kind string) {
	lo, hi := r.span(e)
	t := typeOf(r.info, e)
	if whole(t) {
		kind += "1"
	}
	r.ed.wrap(lo, hi, "(*"+rtAlias+"."+kind+"(&", ", "+r.valueSite(t, e.Pos())+"))")
}

// valueSite is asite for an access of a value of type t at p: a wide site
// (wideAsite) for a struct or an array of several parts.
func (r *rewriter) valueSite(t types.Type, p token.Pos) string {
	if _, param := types.Unalias(t).(*types.TypeParam); param || whole(t) {
		return r.asite(p) // a type parameter's shape is not known here
	}
	return r.wideAsite(p)
}

// whole reports whether values of type t are read and written only as a
// whole by Go code: not a struct or array (whose parts are locations of
// their own), nor a type parameter (which may be one). A struct of one
// field and an array of one element are their element, as Go's compiler
// takes them (and so its race instrumentation): a copy of a
// sync/atomic.Value (struct{ v any }) is one access at its first word,
// which Store's atomic write of the second does not race with under go
// test -race, while a struct holding a Value and more is its words.
func whole(t types.Type) bool {
	if t == nil {
		return false
	}
	if _, ok := types.Unalias(t).(*types.TypeParam); ok {
		return false
	}
	switch u := t.Underlying().(type) {
	case *types.Struct:
		return u.NumFields() == 1 && whole(u.Field(0).Type())
	case *types.Array:
		return u.Len() == 1 && whole(u.Elem())
	}
	return true
}

// loc instruments the parts of location e that are evaluated as values
// (pointers dereferenced, slices indexed, indices), not e itself.
func (r *rewriter) loc(e ast.Expr) {
	if r.cgoName(e) {
		return
	}
	switch x := e.(type) {
	case *ast.ParenExpr:
		r.loc(x.X)
	case *ast.Ident:
	case *ast.SelectorExpr:
		if r.pkgVarSel(x) {
			return
		}
		sel := r.info.Selections[x]
		if sel != nil && sel.Kind() == types.FieldVal {
			if isPointer(typeOf(r.info, x.X)) {
				r.rd(x.X)
			} else {
				r.loc(x.X)
			}
			return
		}
		r.rd(x.X)
	case *ast.IndexExpr:
		switch t := typeOf(r.info, x.X); {
		case isMap(t):
			r.rd(x) // an element of a map value: the map is read
			return
		case isArray(t):
			r.loc(x.X)
		default:
			r.rd(x.X)
		}
		r.rd(x.Index)
	case *ast.StarExpr:
		r.rd(x.X)
	default:
		r.rd(e)
	}
}

// lv instruments e as the target of an assignment (kind W) or of x op= v
// and x++ (kind RW).
func (r *rewriter) lv(e ast.Expr, kind string) {
	if isBlank(e) {
		return
	}
	if r.cgoOpaque(e) {
		r.cgoAccess(e, kind)
		return
	}
	if ix, ok := unparen(e).(*ast.IndexExpr); ok && isMap(typeOf(r.info, ix.X)) {
		// The map hook goes around the map expression's own read, so it
		// is added first (the outer of two wraps of one node).
		lo, hi := r.span(ix.X)
		r.ed.wrap(lo, hi, rtAlias+".M"+kind+"(", ", "+r.asite(ix.X.Pos())+")")
		r.rd(ix.X)
		r.rd(ix.Index)
		return
	}
	r.loc(e)
	if r.sharedLoc(e) {
		r.access(e, kind)
	}
}

// rd instruments e evaluated for its value.
func (r *rewriter) rd(e ast.Expr) {
	if e == nil || r.isType(e) {
		return
	}
	if r.cgoOpaque(e) {
		// A value of C's: not read through a hook, but the Go operands
		// it is computed from are (C.int(x.n), C.f(p.buf) + y).
		switch x := e.(type) {
		case *ast.ParenExpr:
			r.rd(x.X)
		case *ast.Ident, *ast.SelectorExpr:
			r.cgoAccess(x, "R")
		case *ast.StarExpr:
			r.rd(x.X) // the pointer; what it points to is C's, most often
		case *ast.CallExpr:
			r.call(x)
		case *ast.BinaryExpr:
			r.rd(x.X)
			r.rd(x.Y)
		case *ast.UnaryExpr:
			if x.Op != token.AND && x.Op != token.ARROW {
				r.rd(x.X)
			}
		}
		return
	}
	switch x := e.(type) {
	case *ast.ParenExpr:
		r.rd(x.X)
	case *ast.Ident:
		if r.sharedIdent(x) {
			r.access(x, "R")
		}
	case *ast.SelectorExpr:
		if r.pkgVarSel(x) {
			r.access(x, "R")
			return
		}
		sel := r.info.Selections[x]
		if sel == nil {
			return // a qualified function, constant or type
		}
		switch sel.Kind() {
		case types.FieldVal:
			r.loc(x)
			if r.sharedLoc(x) && !r.headerData(x) {
				// A header's Data field read as it is: the compiler
				// follows the pointer it holds through it
				// (headerData), as it does through a write.
				r.access(x, "R")
			}
		case types.MethodVal:
			if r.bindHooked(x, sel) {
				return
			}
			r.receiver(x.X, sel)
		}
	case *ast.IndexExpr:
		if r.isInstance(x) {
			r.rd(x.X)
			return
		}
		t := typeOf(r.info, x.X)
		if isMap(t) {
			lo, hi := r.span(x.X)
			r.ed.wrap(lo, hi, rtAlias+".MR(", ", "+r.asite(x.X.Pos())+")")
			r.rd(x.X)
			r.rd(x.Index)
			return
		}
		r.loc(x)
		if r.sharedLoc(x) {
			r.access(x, "R")
		}
	case *ast.IndexListExpr:
	case *ast.StarExpr:
		r.rd(x.X)
		r.access(x, "R")
	case *ast.SliceExpr:
		if isArray(typeOf(r.info, x.X)) {
			r.loc(x.X)
		} else {
			r.rd(x.X)
		}
		r.rd(x.Low)
		r.rd(x.High)
		r.rd(x.Max)
	case *ast.CallExpr:
		r.call(x)
	case *ast.UnaryExpr:
		switch x.Op {
		case token.AND:
			if lit, ok := unparen(x.X).(*ast.CompositeLit); ok {
				// &T{...} allocates: a new object, maybe at an address
				// a dead one had, and writes its fields.
				if !r.pkgVarInit {
					lo, hi := r.span(x)
					r.ed.wrapInner(lo, hi, rtAlias+".NewLit(", ", "+r.allocSite(x.Pos())+")")
				}
				if r.addrLits == nil {
					r.addrLits = map[*ast.CompositeLit]bool{}
				}
				r.addrLits[lit] = true
			}
			r.loc(x.X)
		case token.ARROW:
			r.recv(x, false)
		default:
			r.rd(x.X)
		}
	case *ast.BinaryExpr:
		r.rd(x.X)
		r.rd(x.Y)
	case *ast.KeyValueExpr:
		r.rd(x.Key)
		r.rd(x.Value)
	case *ast.CompositeLit:
		// []T{...} and map[K]V{...} allocate as make does. A literal
		// with its type elided, inside another ({"a": {x, y}} of a
		// map[string][]T), gets its type written, when the file can
		// name it, so that a call can wrap it (go-sockaddr's KnownRFCs
		// map of slices, made at each call), and {...} standing for
		// &T{...} is written so.
		if !r.addrLits[x] && !r.pkgVarInit {
			fn := ""
			t := typeOf(r.info, x)
			switch {
			case isSlice(t) && len(x.Elts) > 0:
				fn = "MakeSlice"
			case isMap(t):
				fn = "MakeMap"
			}
			name, named := "", x.Type != nil
			if p, isPtr := types.Unalias(t).(*types.Pointer); isPtr && !named {
				// {...} for &T{...} ([]*T{{...}}): a new T, as &T{...}.
				if name, named = r.typeName(p.Elem(), x.Pos()); named {
					fn, name = "NewLit", "&"+name
				}
			} else if fn != "" && !named {
				name, named = r.typeName(t, x.Pos())
			}
			if fn != "" && named {
				lo, hi := r.span(x)
				var site string
				if fn == "NewLit" {
					site = r.allocSite(x.Pos())
				} else {
					site = r.site(x.Pos())
				}
				r.ed.wrapInner(lo, hi, rtAlias+"."+fn+"("+name, ", "+site+")")
			}
		}
		st, isStruct := core(typeOf(r.info, x)).(*types.Struct)
		for i, el := range x.Elts {
			// cancelStored's wrap first: the first wrap of a node is the
			// outer one, and a read hook takes its operand's address.
			if kv, ok := el.(*ast.KeyValueExpr); ok && isStruct {
				if key, ok := kv.Key.(*ast.Ident); ok {
					for f := range st.Fields() {
						if f.Name() == key.Name {
							r.cancelStored(kv.Value, f.Type())
						}
					}
				}
				r.rd(kv.Value)
				continue
			}
			if isStruct && i < st.NumFields() {
				r.cancelStored(el, st.Field(i).Type())
			}
			r.rd(el)
		}
	case *ast.FuncLit:
		r.funcLit(x)
	case *ast.TypeAssertExpr:
		r.rd(x.X)
	}
}

// bindHooked rewrites a method value of a hooked sync method without
// parameters or results (wg.Done handed on as a func(), a dependency's
// NotifyStartedFunc: miekg/dns's server calls it) as its hook bound to the
// receiver, rt.Bind(&wg, rt.WaitGroupDone, site), evaluated where the
// method value is, as Go binds the receiver. It reports whether it did.
func (r *rewriter) bindHooked(x *ast.SelectorExpr, sel *types.Selection) bool {
	fn, ok := sel.Obj().(*types.Func)
	if !ok || r.calledFun[x] {
		return false
	}
	h, ok := methodHooks[methodKey(fn)]
	sig, _ := fn.Type().(*types.Signature)
	if !ok || h.name == "" || h.test || h.value || sig == nil || sig.Params().Len() != 0 || sig.Results().Len() != 0 {
		return false
	}
	if _, isIface := core(typeOf(r.info, x.X)).(*types.Interface); isIface {
		return false
	}
	recv, ok := r.receiverArg(x.X, sel, false, false)
	if !ok {
		return false
	}
	bind := "Bind0"
	if h.rec {
		bind = "Bind"
	}
	lo, hi := r.span(x)
	g := r.newGen(lo)
	g.lit(rtAlias + "." + bind + "(" + recv + ", " + hookName(h) + ", " + r.site(x.Sel.Pos()) + ")")
	r.ed.collapse(lo, hi, g.end(hi))
	return true
}

// receiver instruments the receiver x of a method value or call.
func (r *rewriter) receiver(x ast.Expr, sel *types.Selection) {
	xt := typeOf(r.info, x)
	_, isIface := core(xt).(*types.Interface)
	// A type parameter's methods are its constraint's: called as through
	// an interface, whatever its core type (a pointer *T wrapped as rt.R(x)
	// would be a *T, which has none).
	_, isTypeParam := types.Unalias(xt).(*types.TypeParam)
	if isIface || isTypeParam {
		r.rd(x)
		return
	}
	if len(sel.Index()) > 1 && r.embeddedRead(x, sel) {
		return
	}
	if recvIsPointer(sel) || len(sel.Index()) > 1 {
		// The method gets x's address (or a pointer x holds): x itself is
		// not read here.
		if isPointer(xt) {
			r.rd(x)
		} else {
			r.loc(x)
		}
		return
	}
	if isPointer(xt) && !r.norace {
		// A value method through a pointer copies *x.
		lo, hi := r.span(x)
		r.ed.wrap(lo, hi, rtAlias+".R(", ", "+r.valueSite(pointee(xt), x.Pos())+")")
		r.rd(x)
		return
	}
	r.rd(x)
}

// embeddedRead handles a method promoted through a field x embeds: through
// an embedded pointer *T the call reads the pointer, and a value method of
// an embedded T copies it, so x is rewritten as (*rt.R1(&x.T)) (or R) when
// the field's location is shared. It reports whether it did.
func (r *rewriter) embeddedRead(x ast.Expr, sel *types.Selection) bool {
	st := typeOf(r.info, x)
	if p, ok := core(st).(*types.Pointer); ok {
		st = p.Elem()
	}
	s, ok := core(st).(*types.Struct)
	if !ok {
		return false
	}
	f := s.Field(sel.Index()[0])
	if !f.Embedded() || !r.canSelect(f) {
		return false
	}
	// Through an embedded pointer the call reads the pointer; through an
	// embedded value, a value method (found directly in it) copies it.
	kind := "R1"
	if !isPointer(f.Type()) {
		if recvIsPointer(sel) || len(sel.Index()) != 2 {
			return false
		}
		kind = "R"
		if whole(f.Type()) {
			kind = "R1"
		}
	}
	xIsPtr := isPointer(typeOf(r.info, x))
	if !xIsPtr && !r.sharedLoc(x) || r.norace {
		return false
	}
	if xIsPtr {
		r.rd(x)
	} else {
		r.loc(x)
	}
	lo, hi := r.span(x)
	g := r.newGen(lo)
	// A value method through an embedded pointer also copies the value it
	// points to: rt.R(p) reads *p and returns p.
	deref := isPointer(f.Type()) && len(sel.Index()) == 2 && !recvIsPointer(sel)
	if deref {
		g.lit(rtAlias + ".R(")
	}
	g.lit("(*" + rtAlias + "." + kind + "(&")
	g.piece(lo, r.ed.render(lo, hi))
	g.lit("." + f.Name() + ", " + r.asite(x.Pos()) + "))")
	if deref {
		g.lit(", " + r.asite(x.Pos()) + ")")
	}
	r.ed.collapse(lo, hi, g.end(hi))
	return true
}

// canSelect reports whether this file may name field f: exported, or of
// the file's own package (a method promoted through an unexported
// embedded field of another package is called by its promoted name only;
// naming the field fails to compile: "cannot refer to unexported field").
func (r *rewriter) canSelect(f *types.Var) bool {
	return f.Exported() || r.in.Pkg == nil || f.Pkg() == r.in.Pkg
}

// cancelStored wraps e, a CancelFunc or CancelCauseFunc stored where its
// type is another (a struct field or a variable of type func() or
// func(error): errgroup's Group keeps its context's CancelCauseFunc as a
// func(error)), in rt.CtxCancelLater: a call through that type is not a
// cancel to the rewriter, so the release is recorded when the stored
// function runs. A nil function stays nil.
func (r *rewriter) cancelStored(e ast.Expr, dst types.Type) {
	t := typeOf(r.info, e)
	if !isCancelFunc(t) || dst == nil || isCancelFunc(dst) || r.inlineValue(e) {
		return
	}
	r.cancelLater(e, t)
}

// cancelLater wraps e, a function of type t (context.CancelFunc or
// CancelCauseFunc), in rt.CtxCancelLater or CtxCancelCauseLater, which
// record its release when it is called.
func (r *rewriter) cancelLater(e ast.Expr, t types.Type) {
	hook := "CtxCancelLater"
	if isCancelCauseFunc(t) {
		hook = "CtxCancelCauseLater"
	}
	lo, hi := r.span(e)
	r.ed.wrap(lo, hi, rtAlias+"."+hook+"(", ", "+r.site(e.Pos())+")")
}

// isCancelFunc reports whether t is context.CancelFunc or CancelCauseFunc.
func isCancelFunc(t types.Type) bool {
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "context" &&
		(n.Obj().Name() == "CancelFunc" || n.Obj().Name() == "CancelCauseFunc")
}

// isCancelCauseFunc reports whether t, a CancelFunc or CancelCauseFunc
// (isCancelFunc), is the latter.
func isCancelCauseFunc(t types.Type) bool {
	return types.Unalias(t).(*types.Named).Obj().Name() == "CancelCauseFunc"
}

// timerChan reports whether ch is a channel of time.Time (a timer's or a
// ticker's): receiving from it acquires rt's timer object.
func (r *rewriter) timerChan(ch ast.Expr) bool {
	c, ok := core(typeOf(r.info, ch)).(*types.Chan)
	if !ok {
		return false
	}
	n, ok := types.Unalias(c.Elem()).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "time" && n.Obj().Name() == "Time"
}

// pointee is the type a pointer type t points to (through its core type),
// or nil.
func pointee(t types.Type) types.Type {
	if p, ok := core(t).(*types.Pointer); ok {
		return p.Elem()
	}
	return nil
}
