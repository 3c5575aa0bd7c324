package instrument

import (
	"go/ast"
	"go/token"
	"go/types"
	"strconv"
	"strings"
)

// Objects allocated in untraced code. The standard library is not
// instrumented, so the objects it allocates and returns (the *http.Request
// of r.WithContext(ctx), the []string of strings.Split) record no
// allocation, and an address the garbage collector gave to a dead object
// would carry that object's accesses into the new one's. freshStd
// (fresh_table.go, computed by package fresh from the standard library)
// names the functions whose result is, on every return, an object the call
// allocated; at their calls the rewriter records that object's allocation
// and the writes that filled it in when the call returns (the race
// detector sees std's stores, and an unsynchronized read of the result in
// another goroutine races with them): rt.Made(f(x), site, rec) for a
// pointer (rt.MadeFields(f(x), site, rec, "URL", "Header") when fields of
// the object hold new objects too: freshStdFields), rt.MadeSlice,
// rt.MadeMap. A result among several is recorded after its statement when
// it is assigned to a variable (a, err := f(); rt.Made(a, site, rec)).

// freshHand are the std functions with a new result that package fresh
// cannot see: generic ones (it skips type parameters), each returning a new
// map or slice, or nil; and time.NewTicker, whose *Ticker the runtime
// allocates (a bodyless function: time.NewTimer and AfterFunc have rt
// hooks, which record theirs). maps.Clone's was missing: logrus's
// TestLoggingRaceWithHooksOnEntry clones an entry's Data, and the clone, at
// the address of a map another goroutine had read and the collector freed,
// raced with that read (corpus, session 25); go-quartz's timers did the
// same.
var freshHand = map[string]uint8{
	"maps.Clone": 1, "maps.Collect": 1,
	"slices.Clone": 1, "slices.Collect": 1, "slices.Concat": 1, "slices.Repeat": 1,
	"slices.Sorted": 1, "slices.SortedFunc": 1, "slices.SortedStableFunc": 1,
	"time.NewTicker": 1,
	// A new address from the resolver's new list on every call (through
	// an interface there, which package fresh does not follow), its IP a
	// new slice too: serf's Config.AddrParts read a dead go-metrics
	// object's address (corpus session 29, batch L2).
	"net.ResolveTCPAddr": 1, "net.ResolveUDPAddr": 1, "net.ResolveIPAddr": 1,
}

// runtimeMade are freshHand's functions whose result the runtime fills
// in: the race detector does not instrument the runtime, and sees no write.
var runtimeMade = map[string]bool{"time.NewTicker": true}

// freshHandFields are, for freshHand's results that point to a struct,
// the fields that hold a new object too (freshStdFields' hand part).
var freshHandFields = map[string][]string{
	"net.ResolveTCPAddr": {"IP"}, "net.ResolveUDPAddr": {"IP"}, "net.ResolveIPAddr": {"IP"},
}

// freshFields returns the fields of fn's fresh result that hold new
// objects too.
func freshFields(fn *types.Func) []string {
	if fs := freshStdFields[stdKey(fn)]; len(fs) > 0 {
		return fs
	}
	return freshHandFields[stdKey(fn)]
}

// freshHook returns the rt hook that records the allocation of result i of
// a call of fn, of type t, and the writes that filled it in (rt.Made), or
// "" if the result is not known fresh.
func (r *rewriter) freshHook(fn *types.Func, i int, t types.Type) string {
	if fn == nil || fn.Pkg() == nil || i >= 8 || r.traced(fn.Pkg().Path()) || (freshStd[stdKey(fn)]|freshHand[stdKey(fn)])&(1<<i) == 0 || t == nil {
		return ""
	}
	if _, ok := types.Unalias(t).(*types.Pointer); ok {
		// Not a named pointer type: rt.Made infers *T.
		if runtimeMade[stdKey(fn)] {
			return "New"
		}
		if fs := freshFields(fn); i == 0 && len(fs) > 0 {
			return "MadeFields"
		}
		return "Made"
	}
	switch t.Underlying().(type) {
	case *types.Slice:
		return "MadeSlice"
	case *types.Map:
		return "MadeMap"
	}
	return ""
}

// freshCall wraps the call x, of fn, in the hook recording its result's
// allocation, when it has one result and that is fresh.
func (r *rewriter) freshCall(x *ast.CallExpr, fn *types.Func) {
	if r.noBarrier[x] {
		return // deferred or go: the call runs later
	}
	t := typeOf(r.info, x)
	if _, tuple := t.(*types.Tuple); tuple {
		return // several results: freshAssign
	}
	h := r.freshHook(fn, 0, t)
	if h == "" && r.freshUnlessSame(x, fn, t) {
		h = "Made"
	}
	if h == "" && r.freshUnlessArg(x, fn, t) {
		// An interface argument: whether it is returned is known at run
		// time (rt.NewUnlessArg); the argument is a plain expression,
		// read again for the comparison.
		lo, hi := r.span(x)
		r.ed.wrapInner(lo, hi, rtAlias+".NewUnlessArg(", ", "+r.text(x.Args[0])+", "+r.site(x.Pos())+")")
		return
	}
	if h != "" {
		lo, hi := r.span(x)
		r.ed.wrapInner(lo, hi, rtAlias+"."+h+"(", ", "+r.freshArgs(h, fn, x.Pos())+")")
	}
}

// freshIfOther are the std functions that return their first argument when
// it already is what they make (bufio.NewWriter(w) of a big enough
// *bufio.Writer), and a new object otherwise: package fresh cannot call
// their result fresh.
var freshIfOther = map[string]bool{
	"bufio.NewReader": true, "bufio.NewReaderSize": true,
	"bufio.NewWriter": true, "bufio.NewWriterSize": true,
}

// freshUnlessSame reports whether the call x of such a function returns a
// new object for certain: its first argument's static type is a concrete
// type other than its result's (an *os.File cannot be a *bufio.Writer).
// serf's Snapshotter writes its bufio.Writer over an *os.File: its
// allocation unrecorded, a dead object's accesses at its address raced
// with its writes.
func (r *rewriter) freshUnlessSame(x *ast.CallExpr, fn *types.Func, t types.Type) bool {
	if fn == nil || fn.Pkg() == nil || !freshIfOther[stdKey(fn)] || len(x.Args) == 0 {
		return false
	}
	at := typeOf(r.info, x.Args[0])
	if at == nil || types.IsInterface(at) || types.Identical(at, t) {
		return false
	}
	_, ptr := types.Unalias(t).(*types.Pointer)
	return ptr
}

// freshUnlessArg reports whether the call x of such a function has an
// interface-typed first argument, a plain expression: serf's RPC client's
// bufio.NewWriter(conn) over a net.Conn, never recorded new, whose dead
// predecessor's accesses at its address raced with its Flush.
func (r *rewriter) freshUnlessArg(x *ast.CallExpr, fn *types.Func, t types.Type) bool {
	if fn == nil || fn.Pkg() == nil || !freshIfOther[stdKey(fn)] || len(x.Args) == 0 {
		return false
	}
	at := typeOf(r.info, x.Args[0])
	if at == nil || !types.IsInterface(at) || !plainExpr(r.info, x.Args[0]) {
		return false
	}
	_, ptr := types.Unalias(t).(*types.Pointer)
	return ptr
}

// freshAssign records, after the statement, the allocations of the fresh
// results among several of a call assigned to variables (lhs, the
// statement's left-hand side or a var declaration's names; rhs its one
// value).
func (r *rewriter) freshAssign(lhs []ast.Expr, rhs []ast.Expr) {
	if len(rhs) != 1 || len(lhs) < 2 {
		return
	}
	x, ok := unparen(rhs[0]).(*ast.CallExpr)
	if !ok {
		return
	}
	fn := r.calledFunc(x)
	tuple, ok := typeOf(r.info, x).(*types.Tuple)
	if !ok || tuple.Len() != len(lhs) {
		return
	}
	for i, e := range lhs {
		id, ok := e.(*ast.Ident)
		if !ok || id.Name == "_" {
			continue
		}
		// The variable's own type: an assignment to one declared as an
		// interface (var rc io.ReadCloser; rc, err = gzip.NewReader(r))
		// is not a pointer for rt.Made.
		if t := typeOf(r.info, id); t == nil || !types.Identical(t, tuple.At(i).Type()) {
			continue
		}
		if h := r.freshHook(fn, i, tuple.At(i).Type()); h != "" {
			r.after = append(r.after, rtAlias+"."+h+"("+id.Name+", "+r.freshArgs(h, fn, x.Pos())+")")
		}
	}
}

// freshArgs is what the hook h recording a fresh result of fn, called at
// p, takes after the result: the site, then for the Made hooks the
// sampling flag (allocSite) and rt.MadeFields' field names.
func (r *rewriter) freshArgs(h string, fn *types.Func, p token.Pos) string {
	if h == "New" {
		return r.site(p)
	}
	var b strings.Builder
	b.WriteString(r.allocSite(p))
	if h == "MadeFields" {
		for _, f := range freshFields(fn) {
			b.WriteString(", " + strconv.Quote(f))
		}
	}
	return b.String()
}

// heldPtrs are std methods whose result points to an object the receiver
// allocated once and keeps (a listener's or a connection's address):
// rt.HeldPtr records it allocated the first time the program sees it in a
// GC cycle, since std allocated it unseen.
var heldPtrs = map[string]bool{
	"net.Listener.Addr": true, "net.TCPListener.Addr": true, "net.UnixListener.Addr": true,
	"net.Conn.LocalAddr": true, "net.Conn.RemoteAddr": true, "net.conn.LocalAddr": true, "net.conn.RemoteAddr": true,
	"net.PacketConn.LocalAddr": true,
}

// heldPtrCall wraps the call x of such a method in rt.HeldPtr.
func (r *rewriter) heldPtrCall(x *ast.CallExpr, fn *types.Func) {
	if r.noBarrier[x] || fn == nil || !heldPtrs[stdKey(fn)] {
		return // (each of them has one result)
	}
	lo, hi := r.span(x)
	r.ed.wrapInner(lo, hi, rtAlias+".HeldPtr(", ", "+r.site(x.Pos())+")")
}

// ioMethodBuf returns the buffer parameter's name of d when d is a Read or
// Write method with io.Reader's or io.Writer's signature: untraced code
// (bufio's fill, io.Copy) calls it with a buffer it allocated, unseen
// (rt.CallerBuf). "" otherwise.
func (r *rewriter) ioMethodBuf(d *ast.FuncDecl) string {
	if d.Name.Name != "Read" && d.Name.Name != "Write" || !r.ioSignature(d) {
		return ""
	}
	sig := r.info.Defs[d.Name].(*types.Func).Type().(*types.Signature)
	if name := sig.Params().At(0).Name(); name != "" && name != "_" {
		return name
	}
	return ""
}

// decodeTargets are the std calls that decode into a pointer operand (its
// position among the arguments), allocating what they store there unseen.
var decodeTargets = map[string]int{
	"encoding/json.Unmarshal":            1,
	"encoding/json.Decoder.Decode":       0,
	"encoding/xml.Unmarshal":             1,
	"encoding/xml.Decoder.Decode":        0,
	"encoding/xml.Decoder.DecodeElement": 0,
	"encoding/gob.Decoder.Decode":        0,
}

// decodeCall records the objects a decoding call stored into a target that
// was zero before it (rt.Decoded): rt.Decoded(rt.DecodeTarget(&v),
// json.Unmarshal(data, &v), site). The target is evaluated twice, so only
// when that is pure; a deferred call and one whose result a statement
// drops (its own hooks go after the statement) are left alone (a go statement's
// call is not visited here).
func (r *rewriter) decodeCall(x *ast.CallExpr, fn *types.Func) {
	if fn == nil || fn.Pkg() == nil || r.traced(fn.Pkg().Path()) || r.discarded[x] || r.noBarrier[x] {
		return
	}
	i, ok := decodeTargets[stdKey(fn)]
	if !ok || i >= len(x.Args) || x.Ellipsis.IsValid() {
		return
	}
	target, ok := r.reevaluable(x.Args[i])
	if !ok {
		return
	}
	lo, hi := r.span(x)
	r.ed.wrap(lo, hi, rtAlias+".Decoded("+rtAlias+".DecodeTarget("+target+"), ", ", "+r.site(x.Pos())+")")
}
