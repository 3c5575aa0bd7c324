package rt

import (
	"io"
	"log"
	"reflect"
	"sync"
	"unsafe"
)

// Callbacks under a std mutex (instrument/callbacklock.go): log.Logger's
// output methods call the program's io.Writer holding the Logger's outMu,
// which orders two goroutines' Writes through one Logger. std is not
// traced, so the call is marked (CallbackLock, CallbackDone) and the
// program's Write methods tell their entry and return (WriteEnter,
// WriteLeave): a Write entered from inside a marked call, one frame below
// its caller's (std's frames are not counted), records an acquire of the
// mutex, and its return the release. Both are recorded inside the real
// critical section, so two goroutines' sections never overlap in the
// trace, and std's own Lock (SetOutput, Writer: the O effect) orders with
// them. Nested Writes (a filter's Write calling the next writer's) are
// inside the first one's section.

// cbLock is a call CallbackLock marked.
type cbLock struct {
	mu    unsafe.Pointer // the mutex
	depth int32          // the caller's depth (gstate.depth) at the call
	site  uint32
	open  bool // its acquire is recorded: a Write one frame below holds it
}

// CallbackLock marks the call at site of a method of *p that calls back
// holding the mutex at the offset in p that layout gives (rt.Fields'
// 'l' item), and returns p.
func CallbackLock[T any](p *T, layout string, site uint32) *T {
	if p == nil || !on || !live.Load() {
		return p
	}
	if l, ok := any(p).(*log.Logger); ok && ownWriter(l) == io.Discard {
		return p // a Logger of io.Discard returns at once: no mutex
	}
	callbackArm(unsafe.Pointer(p), layout, site)
	return p
}

// CallbackLockArg is CallbackLock for a package-level function working on
// the object p (log.Printf on log.Default()): it passes the function's
// first argument v through.
func CallbackLockArg[V, T any](v V, p *T, layout string, site uint32) V {
	CallbackLock(p, layout, site)
	return v
}

// CallbackLockAny is CallbackLock for a call of an output method through
// an interface of the program whose value may be a *log.Logger (a
// library's StdLogger interface, Printf(format string, v ...any)): the call
// is marked when x holds one, and x is passed through (IBM/sarama logs
// through its Logger variable; a goroutine an earlier test left logging
// wrote to the Writer a later test installed with SetOutput).
func CallbackLockAny[T any](x T, site uint32) T {
	if !on || !live.Load() || logOutMu == noLogOutMu {
		return x
	}
	if l, ok := any(x).(*log.Logger); ok && l != nil && ownWriter(l) != io.Discard {
		armCallback(unsafe.Add(unsafe.Pointer(l), logOutMu), site)
	}
	return x
}

// logOutMu is the offset of log.Logger's mutex (noLogOutMu if a Go
// release renamed it: nothing is marked then), read by reflection as
// slogMutex reads its handlers' fields.
var logOutMu = func() uintptr {
	f, ok := reflect.TypeFor[log.Logger]().FieldByName("outMu")
	if !ok || f.Type != reflect.TypeFor[sync.Mutex]() {
		return noLogOutMu
	}
	return f.Offset
}()

const noLogOutMu = ^uintptr(0)

func callbackArm(base unsafe.Pointer, layout string, site uint32) {
	if len(layout) == 0 || layout[0] != 'l' {
		return
	}
	off, _ := layoutUvarint(layout[1:])
	armCallback(unsafe.Add(base, uintptr(off)), site)
}

// callbacksUsed: some call was marked; until then a Write's WriteEnter
// and WriteLeave need not look the goroutine up.
var callbacksUsed OwnBool

// armCallback marks the current goroutine's call at site as holding mu
// when it calls back.
func armCallback(mu unsafe.Pointer, site uint32) {
	if !callbacksUsed.Load() {
		callbacksUsed.Store(true)
	}
	g := cur()
	g.dropCallbacks(g.depth)
	g.cbLocks = append(g.cbLocks, cbLock{mu: mu, depth: g.depth, site: site})
}

// SlogCallback is CallbackLock for an output method of the log/slog.Logger
// p points to: when its handler is slog's TextHandler or JSONHandler, the
// handler calls its writer's Write holding its mutex (commonHandler.mu, a
// pointer the handlers With and WithGroup derive share); slog's first
// default handler writes through log's standard Logger, under its outMu.
// Another handler (the program's own) marks nothing.
func SlogCallback[T any](p *T, site uint32) *T {
	if p != nil && on && live.Load() {
		if mu := slogMutex(reflect.ValueOf(p)); mu != nil {
			armCallback(mu, site)
		}
	}
	return p
}

// SlogCallbackArg is SlogCallback for a package-level function of
// log/slog on slog.Default() (p): it passes the first argument v through.
func SlogCallbackArg[V, T any](v V, p *T, site uint32) V {
	SlogCallback(p, site)
	return v
}

// slogMutex returns the mutex the handler of the slog.Logger l points to
// writes under, or nil. Read by reflection, field by name: a Go release
// that renames them marks nothing.
func slogMutex(l reflect.Value) unsafe.Pointer {
	if l.Kind() != reflect.Pointer || l.IsNil() || l.Elem().Kind() != reflect.Struct {
		return nil
	}
	h := l.Elem().FieldByName("handler")
	if h.Kind() != reflect.Interface || h.IsNil() {
		return nil
	}
	h = h.Elem()
	t := h.Type()
	if t.Kind() != reflect.Pointer || h.IsNil() || t.Elem().PkgPath() != "log/slog" {
		return nil
	}
	switch t.Elem().Name() {
	case "TextHandler", "JSONHandler":
	case "defaultHandler":
		// slog's first default Logger writes through log's standard
		// Logger (log.SetOutput's writer), holding its outMu.
		mu := reflect.ValueOf(log.Default()).Elem().FieldByName("outMu")
		if !mu.IsValid() || !mu.CanAddr() {
			return nil
		}
		return mu.Addr().UnsafePointer()
	default:
		return nil
	}
	c := h.Elem().FieldByName("commonHandler")
	if c.Kind() != reflect.Pointer || c.IsNil() {
		return nil
	}
	mu := c.Elem().FieldByName("mu")
	if mu.Kind() != reflect.Pointer || mu.IsNil() {
		return nil
	}
	return mu.UnsafePointer()
}

// dropCallbacks forgets the marked calls not in a Write of depth or deeper
// frames: their calls returned (a call CallbackDone did not follow, one
// that panicked).
func (g *gstate) dropCallbacks(depth int32) {
	n := len(g.cbLocks)
	for n > 0 && !g.cbLocks[n-1].open && g.cbLocks[n-1].depth >= depth {
		n--
	}
	g.cbLocks = g.cbLocks[:n]
}

// CallbackDone ends the call last marked in the caller's frame (site is
// the call's). When no Write of the program took the call's mutex (the
// Logger writes to a file, or nowhere), the call still held it: an empty
// critical section is recorded, so that each call on a Logger is ordered
// after the earlier ones, as Go's race detector sees them in std's Lock
// and Unlock (lesismal/nbio's TestUDP logs in the test's goroutine, then in
// its event loop before reading what the test wrote before its own log
// line: a false race without it; corpus session 55). It is recorded at
// the call's return, a little after the real one.
func CallbackDone(site uint32) {
	if on && live.Load() {
		g := cur()
		if n := len(g.cbLocks); n > 0 && g.cbLocks[n-1].depth == g.depth && !g.cbLocks[n-1].open {
			c := g.cbLocks[n-1]
			g.cbLocks = g.cbLocks[:n-1]
			acquireLock(c.mu, c.site, g)
			release(c.mu, false, c.site, g)
		}
	}
}

// CallbackDoneV is CallbackDone for a call whose one result is used: it
// passes it through.
func CallbackDoneV[T any](v T, site uint32) T {
	CallbackDone(site)
	return v
}

// WriteEnter is called by a Write method of the program right after its
// Enter: inside a call marked one frame above, it records the acquire of
// the call's mutex.
func WriteEnter() {
	if !callbacksUsed.Load() || !on || !live.Load() {
		return
	}
	g := cur()
	if len(g.cbLocks) == 0 {
		return
	}
	g.dropCallbacks(g.depth)
	if n := len(g.cbLocks); n > 0 {
		if c := &g.cbLocks[n-1]; !c.open && c.depth == g.depth-1 {
			c.open = true
			acquireLock(c.mu, c.site, g)
		}
	}
}

// WriteLeave is deferred by a Write method of the program right after
// WriteEnter: the return of the Write that took a marked call's mutex
// records its release.
func WriteLeave() {
	if !callbacksUsed.Load() || !on || !live.Load() {
		return
	}
	g := cur()
	if n := len(g.cbLocks); n > 0 {
		if c := g.cbLocks[n-1]; c.open && c.depth == g.depth-1 {
			g.cbLocks = g.cbLocks[:n-1]
			release(c.mu, false, c.site, g)
		}
	}
}

// ownWriter is l.Writer(), which locks l's mutex: rt's look, not the
// program's, so that sync's hook records no edge (ownmutex.go).
func ownWriter(l *log.Logger) io.Writer {
	defer skipEnd(skipBegin())
	return l.Writer()
}
