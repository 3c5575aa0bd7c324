package instrument

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// stdEffect is one access of an intercepted call.
type stdEffect struct {
	operand int    // -1: the receiver; else an argument
	kind    string // R, W, D, ER, EW, MR, MW, J, F...
	rest    bool   // every argument from operand on (expandRest)
	bound   string // EF, EFW, EL: the most bytes accessed; O: rt.Fields' layout, quoted
	lenOf   int    // EF@k, EL@k: k+1, the bound is len of argument k
}

// stdEffectsOf returns the effects of a call of fn (nil: not in the table).
func stdEffectsOf(fn *types.Func) []stdEffect {
	if fn == nil || fn.Pkg() == nil {
		return nil
	}
	spec, ok := stdTable[stdKey(fn)]
	if !ok {
		spec = modrefStd[stdKey(fn)]
	}
	if e := ioBufEffect(fn); e != "" {
		if e == "0:EWB" {
			// A summary's write of the whole buffer: the bytes the
			// call reports, as for any Read.
			spec = strings.Join(slices.DeleteFunc(strings.Fields(spec), func(f string) bool { return f == "0:EW" }), " ")
		}
		if !strings.Contains(" "+spec, " 0:") {
			spec += " " + e
		}
	}
	if spec == "" {
		return nil
	}
	var out []stdEffect
	for _, f := range strings.Fields(spec) {
		op, kind, _ := strings.Cut(f, ":")
		i := -1
		op, rest := strings.CutSuffix(op, "+")
		if op != "r" {
			i, _ = strconv.Atoi(op)
		}
		var bound string
		if items, ok := strings.CutPrefix(kind, "O="); ok {
			// Fields by name: the layout is the operand type's (stdfields.go).
			if layout, ok := objectLayout(fn, i, items); ok {
				out = append(out, stdEffect{operand: i, kind: "O", bound: layout})
			}
			continue
		}
		lenOf := 0
		if k, arg, ok := strings.Cut(kind, "@"); ok {
			n, _ := strconv.Atoi(arg)
			kind, lenOf = k, n+1 // EF@1: EF, the length of argument 1
		} else if j := strings.IndexAny(kind, "0123456789"); j > 0 {
			kind, bound = kind[:j], kind[j:] // EF10: EF, 10
		}
		out = append(out, stdEffect{operand: i, kind: kind, rest: rest, bound: bound, lenOf: lenOf})
	}
	return out
}

// expandRest replaces each effect on "every argument from k" by one
// effect per argument of the call (nargs of them); those of an F effect
// after a format argument only if formatOK says the format prints values.
func expandRest(effs []stdEffect, nargs int, formatOK func(i int) bool) []stdEffect {
	var out []stdEffect
	for _, e := range effs {
		if !e.rest {
			out = append(out, e)
			continue
		}
		if e.kind == "F" && e.operand > 0 && !formatOK(e.operand-1) {
			continue
		}
		for i := e.operand; i < nargs; i++ {
			out = append(out, stdEffect{operand: i, kind: e.kind, bound: e.bound, lenOf: e.lenOf})
		}
	}
	return out
}

// fmtValueFormat reports whether the format argument x is a constant
// whose verbs all print their operand's value (none is %T or %p).
func (r *rewriter) fmtValueFormat(x ast.Expr) bool {
	tv, ok := r.info.Types[x]
	if !ok || tv.Value == nil || tv.Value.Kind() != constant.String {
		return false
	}
	f := constant.StringVal(tv.Value)
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		// Skip flags, width, precision and argument indexes to the verb.
		j := i + 1
		for j < len(f) && strings.IndexByte("+-# 0123456789.*[]", f[j]) >= 0 {
			j++
		}
		if j < len(f) && (f[j] == 'T' || f[j] == 'p') {
			return false
		}
		i = j
	}
	return true
}

// ioBufEffect is the effect of a method with io.Reader's Read or
// io.ReaderAt's ReadAt signature on its buffer (EWB), or of one with
// io.Writer's Write or io.WriterAt's WriteAt signature (EB): "" for other
// functions. Applied to untraced methods only (stdCall), whether the
// receiver is a type (os.File.Read) or an interface (io.Reader.Read,
// hash.Hash.Write: whatever implements it, the contract is the same).
func ioBufEffect(fn *types.Func) string {
	sig, _ := fn.Type().(*types.Signature)
	if sig == nil || sig.Recv() == nil {
		return ""
	}
	ps, rs := sig.Params(), sig.Results()
	if rs.Len() != 2 || !isBasic(rs.At(0).Type(), types.Int) || rs.At(1).Type().String() != "error" ||
		ps.Len() < 1 || !isByteSlice(ps.At(0).Type()) {
		return ""
	}
	at := ps.Len() == 2 && isBasic(ps.At(1).Type(), types.Int64)
	switch {
	case fn.Name() == "Read" && ps.Len() == 1, fn.Name() == "ReadAt" && at:
		return "0:EWB"
	case fn.Name() == "Write" && ps.Len() == 1, fn.Name() == "WriteAt" && at:
		return "0:EB"
	}
	return ""
}

// returnsIntError reports whether fn's results are exactly (int, error),
// those of rt.Fill.W, which a Read's call is wrapped in.
func returnsIntError(fn *types.Func) bool {
	sig, _ := fn.Type().(*types.Signature)
	if sig == nil || sig.Results().Len() != 2 {
		return false
	}
	rs := sig.Results()
	return types.Identical(rs.At(0).Type(), types.Typ[types.Int]) && types.Identical(rs.At(1).Type(), types.Universe.Lookup("error").Type())
}

// isBasic reports whether t's underlying type is the basic type k.
func isBasic(t types.Type, k types.BasicKind) bool {
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Kind() == k
}

// isByteSlice reports whether t is a []byte.
func isByteSlice(t types.Type) bool {
	sl, ok := t.Underlying().(*types.Slice)
	return ok && isBasic(sl.Elem(), types.Uint8)
}

// stdHooks names the rt hook of each effect.
var stdHooks = map[string]string{
	"R": "R1", "W": "W1", "D": "RDeep", "DP": "RDeepProgram", "RA": "R1Arrays", "WA": "W1Arrays", "ER": "Elems", "EB": "ElemsWords", "EW": "ElemsW", "EWB": "ElemsWordsW", "ES": "SortPre",
	"MR": "MR", "MW": "MW", "J": "RJSON", "F": "RFmt", "WB": "W1",
	"EF": "BytesFirst", "EFW": "BytesFirstW", "EL": "BytesLast", "EI": "ElemsUpTo", "EIL": "ElemsUpToLong", "ERL": "ElemsLong", "O": "Fields", "IM": "RAnyMap", "DS": "RStringer",
}

// boundArg is the bound argument of a bounded effect's hook (", 10"), or "".
func (e stdEffect) boundArg() string {
	if e.bound == "" {
		return ""
	}
	return ", " + e.bound
}

// stdCall instruments the accesses the table gives for the call x, before
// its operands are instrumented (the hooks wrap the operands, outside
// their own instrumentation). Each effect's hook wraps its operand,
// rt.W(p, site, rec) returning p (or (*rt.W(&x, ...)) for a pointer
// method of an addressable x), so the operand is evaluated once, and the
// access is recorded when it is. If an operand evaluated after it calls a
// function or receives (which may synchronize, and would then fall between
// the recorded access and the call), the access is recorded after the last
// such operand instead, rt.Then(arg, rt.W(p, site, rec)), by evaluating
// the effect's operand again: only when that is pure (no call or receive)
// and on one line; otherwise the effect is not recorded. Calls in go and
// defer statements (run later) record nothing, nor do calls of std methods
// promoted through an embedded field, method values and interface calls.
func (r *rewriter) stdCall(x *ast.CallExpr) (post func()) {
	if r.noBarrier[x] {
		return nil
	}
	fn := r.calledFunc(x)
	effs := stdEffectsOf(fn)
	if effs == nil || r.traced(fn.Pkg().Path()) || r.asmRuneSearch(x, fn) {
		return nil
	}
	// Operands in evaluation order: the receiver (position 0), then the
	// arguments.
	recv, ok := r.stdReceiver(x)
	if !ok {
		return nil
	}
	if x.Ellipsis.IsValid() {
		return nil // f(s...): the arguments are not the parameters
	}
	effs = expandRest(effs, len(x.Args), func(i int) bool {
		return i < len(x.Args) && r.fmtValueFormat(x.Args[i])
	})
	c := &stdCallSite{r: r, x: x, fn: fn, recv: recv, last: lastCallingOperand(r.info, recv.x, x.Args)}
	for _, e := range effs {
		c.record(e)
	}
	if c.sortSite != "" {
		r.after = append(r.after, rtAlias+".SortPost("+c.sortSite+")")
	}
	c.recordThen()
	return c.post
}

// asmRuneSearch reports whether x, a call of bytes.IndexRune or
// ContainsRune of a constant ASCII rune, or of IndexAny or ContainsAny of
// a constant of one ASCII character, searches with IndexByte, in
// assembly, whose reads go test -race does not see (stdtable.go's bytes
// entries).
func (r *rewriter) asmRuneSearch(x *ast.CallExpr, fn *types.Func) bool {
	if fn.Pkg().Path() != "bytes" || len(x.Args) != 2 {
		return false
	}
	tv, ok := r.info.Types[x.Args[1]]
	if !ok || tv.Value == nil {
		return false
	}
	switch fn.Name() {
	case "IndexRune", "ContainsRune":
		v, ok := constant.Int64Val(constant.ToInt(tv.Value))
		return ok && 0 <= v && v < utf8.RuneSelf
	case "IndexAny", "ContainsAny":
		if tv.Value.Kind() != constant.String {
			return false
		}
		cs := constant.StringVal(tv.Value)
		return len(cs) == 1 && cs[0] < utf8.RuneSelf
	}
	return false
}

// stdRecv is the receiver operand of a std method call, and how a hook
// reaches the object it stands for.
type stdRecv struct {
	x      ast.Expr // nil: a function, or a value method's copy, read by the caller
	addr   bool     // the hook takes the receiver's address
	embed  string   // ".F.G": the embedded fields a promoted method is reached through
	viaPtr bool     // a pointer leads to the embedded field: it is on the heap
	ref    bool     // a map's or slice's value method
}

// stdReceiver returns the receiver operand of the call x, if it calls a
// method; ok is false when the method is one stdCall does not record (one
// promoted through a non-struct or an interface, or a map's or slice's
// value method promoted through an embedded field).
func (r *rewriter) stdReceiver(x *ast.CallExpr) (recv stdRecv, ok bool) {
	se, isSel := unparen(x.Fun).(*ast.SelectorExpr)
	if !isSel {
		return recv, true
	}
	sel := r.info.Selections[se]
	if sel == nil || sel.Kind() != types.MethodVal {
		return recv, true
	}
	recv.x = se.X
	recvType := typeOf(r.info, se.X)
	if len(sel.Index()) != 1 {
		var ok bool
		recv.embed, recvType, recv.viaPtr, ok = embeddedPath(recvType, sel.Index())
		if !ok {
			return recv, false
		}
	}
	if types.IsInterface(recvType) {
		// An interface's method: the hook (DS) takes the
		// interface value and finds the object it holds.
		return recv, recv.embed == ""
	}
	if isMap(recvType) || isSlice(recvType) {
		// A value method of a map or slice type (url.Values.Add,
		// sort.IntSlice.Swap): the copy refers to the same
		// elements.
		recv.ref = recv.embed == ""
		if !recv.ref {
			return recv, false
		}
	} else if !isPointer(recvType) {
		// The receiver (or its embedded field) is addressable
		// if se.X is, or if a pointer leads to it.
		if !recvIsPointer(sel) || recv.embed == "" && !r.addressable(se.X) {
			recv.x = nil // a value method gets a copy, read by the caller
		}
		recv.addr = true
	}
	return recv, true
}

// lastCallingOperand returns the position of the last operand that calls
// or receives (the receiver recv is position 0, the arguments follow), or
// -1 if none does.
func lastCallingOperand(info *types.Info, recv ast.Expr, args []ast.Expr) int {
	last := -1
	if recv != nil && containsCall(info, recv) {
		last = 0
	}
	for i, a := range args {
		if containsCall(info, a) {
			last = i + 1
		}
	}
	return last
}

// stdCallSite is the state of stdCall's instrumentation of one call: its
// receiver, the wraps left for after the operands' own instrumentation,
// and the hooks recorded after the last operand that calls.
type stdCallSite struct {
	r        *rewriter
	x        *ast.CallExpr
	fn       *types.Func // the function x calls
	recv     stdRecv
	last     int      // the position of the last operand that calls or receives
	later    []func() // wraps added by post
	then     []string // hooks recorded after operand last
	sortSite string   // an ES effect's site, once its hook is in
}

// wrap wraps e in before and after. A wrap goes around the operand's own
// instrumentation: added now for a location (whose access hook wraps the
// same node and must stay inside, addressable), after it (post) for
// anything else, which its instrumentation may replace whole (a receive,
// a hooked call), dropping wraps added before.
func (c *stdCallSite) wrap(e ast.Expr, before, after string) {
	lo, hi := c.r.span(e)
	if isLocation(e) {
		c.r.ed.wrap(lo, hi, before, after)
	} else {
		c.later = append(c.later, func() { c.r.ed.wrap(lo, hi, before, after) })
	}
}

// post adds the wraps left for after the operands' instrumentation.
func (c *stdCallSite) post() {
	for _, f := range c.later {
		f()
	}
}

// stdHook returns the hook that records the effect e on operand op (addr:
// the hook takes op's address): the table's, or a narrower one for a
// local on the stack or a slice of wide elements.
func (r *rewriter) stdHook(e stdEffect, op ast.Expr, addr bool) string {
	hook := rtAlias + "." + stdHooks[e.kind]
	if e.kind == "EB" && !narrowElems(typeOf(r.info, op)) {
		hook = rtAlias + ".Elems"
	}
	if e.kind == "EWB" && !narrowElems(typeOf(r.info, op)) {
		hook = rtAlias + ".ElemsW"
	}
	if (e.kind == "D" || e.kind == "DP") && !r.heapOperand(op, addr) {
		// A local on the stack: the slices it holds point to the
		// heap, and only their elements are recorded.
		hook = rtAlias + ".RSlicesOf"
		if e.kind == "DP" {
			hook = rtAlias + ".RSlicesOfProgram"
		}
	}
	if e.kind == "IM" && isMap(typeOf(r.info, op)) {
		hook = rtAlias + ".MR"
	}
	if (e.kind == "RA" || e.kind == "WA") && !r.heapOperand(op, addr) {
		hook = rtAlias + ".ArraysOf" // (the same: only its arrays)
	}
	return hook
}

// record instruments the effect e: its hook wraps its operand if no later
// operand calls, or else is recorded after the last one (then).
func (c *stdCallSite) record(e stdEffect) {
	r := c.r
	op, pos := c.recv.x, 0
	if e.operand >= 0 {
		if e.operand >= len(c.x.Args) {
			return
		}
		op, pos = c.x.Args[e.operand], e.operand+1
	}
	isRecv := op == c.recv.x
	if op == nil || !(r.stdOperandOK(op, e) || isRecv && c.recv.viaPtr) {
		return
	}
	if e.lenOf > 0 {
		// The bound is another argument's length, evaluated in the hook
		// before that argument is: only a pure one; else the whole.
		src, ok := "", e.lenOf-1 < len(c.x.Args)
		if ok {
			src, ok = r.reevaluable(c.x.Args[e.lenOf-1])
		}
		switch {
		case ok:
			e.bound = "len(" + src + ")"
		case e.kind == "EIL" || e.kind == "ERL":
			e.kind, e.bound = "ERL", "0" // the separator's length unknown
		default:
			e.kind = "ER"
		}
	}
	if e.kind == "EI" || e.kind == "EIL" {
		// After the call, from its result: the operand evaluated again.
		if src, ok := r.reevaluable(op); ok {
			c.wrap(c.x, rtAlias+"."+stdHooks[e.kind]+"(", ", "+src+e.boundArg()+", "+r.withRec(r.calleeSite(c.x.Pos(), c.fn))+")")
			return
		}
		if e.kind == "EIL" {
			e.kind = "ERL"
		} else {
			e.kind, e.bound = "ER", ""
		}
	}
	if e.kind == "EWB" && returnsIntError(c.fn) {
		// The buffer noted where the operand is evaluated, outside its
		// own wraps (an io.Pipe's ReadBefore), and the bytes the call
		// reports written after it returns, inside the call's other
		// wraps and the hooks after its statement (its IORead): rt.Fill.
		lo, hi := r.span(op)
		xlo, xhi := r.span(c.x)
		site := r.withRec(r.calleeSite(c.x.Pos(), c.fn))
		c.later = append(c.later, func() {
			r.ed.wrapOuter(lo, hi, rtAlias+".FillW(", ", "+site+")")
			r.ed.wrapInner(xlo, xhi, rtAlias+".Filled(", ")")
		})
		return
	}
	addr := isRecv && c.recv.addr
	hook := r.stdHook(e, op, addr)
	site := func() string {
		s := r.withRec(r.calleeSite(c.x.Pos(), c.fn))
		if e.kind == "ES" {
			// SortPost names the sort by SortPre's site.
			c.sortSite = strings.TrimSuffix(s, ", "+r.recFlag())
		}
		return s
	}
	if pos >= c.last {
		c.wrapOperand(op, isRecv, addr, hook, e.boundArg()+", "+site()+")")
		return
	}
	if isRecv && c.recv.embed != "" {
		return
	}
	// A later operand calls: evaluate this one again after it.
	src, ok := r.reevaluable(op)
	if !ok {
		return
	}
	if addr {
		src = "&(" + src + ")"
	}
	c.then = append(c.then, hook+"("+src+e.boundArg()+", "+site()+")")
}

// wrapOperand wraps the operand op (isRecv: the call's receiver) in hook,
// whose remaining arguments and closing parenthesis are tail, so that the
// access is recorded where op is evaluated.
func (c *stdCallSite) wrapOperand(op ast.Expr, isRecv, addr bool, hook, tail string) {
	r := c.r
	switch {
	case isRecv && c.recv.ref && r.addressable(op):
		// Kept addressable (a BarrierPair may take its
		// address): (*rt.Then(&(x), hook(x, ...))), x evaluated
		// twice, so only when pure.
		src, ok := r.reevaluable(op)
		if !ok {
			return
		}
		c.wrap(op, "(*"+rtAlias+".Then(&(", "), "+hook+"("+src+tail+"))")
	case isRecv && c.recv.embed != "":
		// The receiver keeps its type (other wraps, a
		// BarrierPair's, may follow the embedded fields from
		// it): rt.Then(x, hook(x.F, ...)), x evaluated twice,
		// so only when pure.
		src, ok := r.reevaluable(op)
		if !ok {
			return
		}
		field := "((" + src + ")" + c.recv.embed + ")" // the embedded field
		if addr {
			field = "&" + field
		}
		if isPointer(typeOf(r.info, op)) {
			c.wrap(op, rtAlias+".Then((", "), "+hook+"("+field+tail+")")
		} else {
			// A value: Then takes its address, so that it stays
			// addressable for a pointer method.
			c.wrap(op, "(*"+rtAlias+".Then(&(", "), "+hook+"("+field+tail+"))")
		}
	case addr:
		c.wrap(op, "(*"+hook+"(&(", ")"+tail+")")
	default:
		c.wrap(op, hook+"(", tail)
	}
}

// recordThen records the hooks of then after the last operand that calls
// or receives, rt.Then(arg, hook(...)), if that operand has a single typed
// value.
func (c *stdCallSite) recordThen() {
	if len(c.then) == 0 {
		return
	}
	k := c.x.Args[c.last-1] // last > 0 here: the receiver is position 0
	if tv, ok := c.r.info.Types[k]; !ok || isUntyped(tv.Type) {
		return
	}
	if _, isTuple := typeOf(c.r.info, k).(*types.Tuple); isTuple {
		return
	}
	for _, h := range c.then {
		c.wrap(k, rtAlias+".Then(", ", "+h+")")
	}
}

// isLocation reports whether e names a location (a variable, a field,
// an element, a pointer's target): an operand whose own access hook wraps
// the same node and must stay innermost, addressable, so that another
// wrap of it goes on first.
func isLocation(e ast.Expr) bool {
	switch unparen(e).(type) {
	case *ast.Ident, *ast.SelectorExpr, *ast.IndexExpr, *ast.StarExpr:
		return true
	}
	return false
}

// reevaluable returns op's source if the rewriter may write it a second
// time to evaluate it again: no call or receive, no function literal, one
// line.
func (r *rewriter) reevaluable(op ast.Expr) (string, bool) {
	lo, hi := r.span(op)
	src := string(r.ed.src[lo:hi])
	if containsCall(r.info, op) || strings.ContainsAny(src, "\n") || hasFuncLit(op) {
		return "", false
	}
	return src, true
}

// embeddedPath follows the embedded fields that index (a method
// selection's, the method last) goes through from a receiver of type t:
// their names as a selector suffix (".Buffer"), the type of the last one,
// on which the method is declared, and whether a pointer leads to it (t
// or a field on the way). ok is false when a field on the way is not a
// struct's, or the last one is an interface.
func embeddedPath(t types.Type, index []int) (path string, last types.Type, viaPtr, ok bool) {
	for _, i := range index[:len(index)-1] {
		if p, isPtr := core(t).(*types.Pointer); isPtr {
			t = p.Elem()
			viaPtr = true
		}
		st, isStruct := core(t).(*types.Struct)
		if !isStruct || i >= st.NumFields() {
			return "", nil, false, false
		}
		f := st.Field(i)
		path += "." + f.Name()
		t = f.Type()
	}
	if _, isIface := core(t).(*types.Interface); isIface {
		return "", nil, false, false
	}
	return path, t, viaPtr, true
}

// stdOperandOK reports whether the effect e can wrap operand op: a pointer
// (or an addressable receiver) for R, W and D, a slice for ER and EW, a map
// for MR and MW, a typed value for J; never a constant or nil.
func (r *rewriter) stdOperandOK(op ast.Expr, e stdEffect) bool {
	switch u := unparen(op).(type) {
	case *ast.CompositeLit:
		return false // a new object: no other goroutine has it
	case *ast.UnaryExpr:
		if _, lit := unparen(u.X).(*ast.CompositeLit); lit && u.Op == token.AND {
			return false
		}
	}
	// A receiver's address is taken, unless it is a pointer, a map or a
	// slice (the object or the elements are elsewhere, whatever holds the
	// value: b.WriteString(s) on a parameter b *strings.Builder was not
	// recorded).
	t := typeOf(r.info, op)
	recvAddr := e.operand < 0 && !isPointer(t) && !isMap(t) && !isSlice(t)
	if !r.heapOperand(op, recvAddr) && e.kind != "D" && e.kind != "DP" && e.kind != "RA" && e.kind != "WA" && e.kind != "DS" {
		return false
	}
	tv, ok := r.info.Types[op]
	if !ok || tv.Value != nil || tv.IsNil() || isUntyped(tv.Type) {
		return false
	}
	if _, isTuple := tv.Type.(*types.Tuple); isTuple {
		return false
	}
	switch e.kind {
	case "EF", "EFW", "EL":
		return isByteSlice(tv.Type)
	case "ER", "EW", "EB", "EWB", "ES", "EI", "EIL", "ERL":
		_, ok := core(tv.Type).(*types.Slice)
		return ok
	case "MR", "MW":
		return isMap(tv.Type)
	case "IM":
		return isMap(tv.Type) || types.IsInterface(tv.Type)
	case "DS":
		return types.IsInterface(tv.Type)
	case "J":
		return true
	case "F":
		return reachesShared(tv.Type, 0)
	case "WB":
		p, ok := types.Unalias(tv.Type).(*types.Pointer)
		if !ok {
			return false
		}
		n, ok := types.Unalias(p.Elem()).(*types.Named)
		if !ok || n.Obj().Pkg() == nil {
			return false
		}
		return unsyncWriters[n.Obj().Pkg().Path()+"."+n.Obj().Name()]
	}
	return e.operand < 0 || isPointer(tv.Type)
}

// reachesShared reports whether a value of type t may lead fmt to memory
// other than its own copy (a pointer, slice, map or interface inside it):
// otherwise rt.RFmt would read nothing.
func reachesShared(t types.Type, depth int) bool {
	if depth > 8 {
		return true
	}
	switch u := core(t).(type) {
	case *types.Basic:
		return false
	case *types.Struct:
		for i := 0; i < u.NumFields(); i++ {
			if reachesShared(u.Field(i).Type(), depth+1) {
				return true
			}
		}
		return false
	case *types.Array:
		return reachesShared(u.Elem(), depth+1)
	case *types.Chan, *types.Signature:
		return false // printed as an address
	}
	return true
}

// narrowElems reports whether t is a slice of pointer-free elements
// narrower than a word (bytes, runes), read by ElemsWords.
func narrowElems(t types.Type) bool {
	sl, ok := core(t).(*types.Slice)
	if !ok {
		return false
	}
	b, ok := sl.Elem().Underlying().(*types.Basic)
	if !ok {
		return false
	}
	switch b.Kind() {
	case types.Int8, types.Uint8, types.Int16, types.Uint16, types.Int32, types.Uint32, types.Float32, types.Bool:
		return true
	}
	return false
}

// heapOperand reports whether the object an operand names may be shared:
// not a local variable (or a part of one) that no function literal
// captures. Such a variable whose address only a std call takes stays on
// its goroutine's stack, which moves when it grows, maybe onto the memory
// of a dead goroutine's stack, whose old accesses at those addresses
// would then race with its new ones (rt.Alloc records the address the
// variable had when declared). A captured variable is on the heap when a
// goroutine's literal captures it, which is how another goroutine reaches
// it. recvAddr: op is a receiver whose address the method takes.
func (r *rewriter) heapOperand(op ast.Expr, recvAddr bool) bool {
	var v *types.Var
	if recvAddr {
		v = rootVar(op, r.info)
	} else if u, ok := unparen(op).(*ast.UnaryExpr); ok && u.Op == token.AND {
		v = rootVar(u.X, r.info)
	}
	if v == nil || isPackageVar(v) {
		return true
	}
	if r.captured == nil {
		r.captured = capturedLocals(r.in.File, r.info)
	}
	return r.captured[v]
}

// capturedLocals returns the local variables that a function literal
// refers to and does not declare.
func capturedLocals(f *ast.File, info *types.Info) map[*types.Var]bool {
	m := map[*types.Var]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.FuncLit)
		if !ok {
			return true
		}
		ast.Inspect(lit.Body, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				if v, ok := info.Uses[id].(*types.Var); ok && !v.IsField() && !isPackageVar(v) &&
					(v.Pos() < lit.Pos() || v.Pos() >= lit.End()) {
					m[v] = true
				}
			}
			return true
		})
		return true
	})
	return m
}

// unsyncWriters are the io.Writers whose Write writes the object and
// nothing else (WB).
var unsyncWriters = map[string]bool{"bytes.Buffer": true, "strings.Builder": true, "bufio.Writer": true}

// hasFuncLit reports whether e contains a function literal.
func hasFuncLit(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if _, ok := n.(*ast.FuncLit); ok {
			found = true
		}
		return !found
	})
	return found
}
