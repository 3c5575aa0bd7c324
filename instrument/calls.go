package instrument

import (
	"go/types"
	"strings"
)

// Calls the rewriter replaces by a hook of package rt (or rt/rttest): the
// hook performs the operation and records its synchronization. A method is
// named "pkgpath.Type.Method", a function "pkgpath.Func".
//
// The hook takes the receiver (as a pointer for pointer methods, the value
// for interface methods) first, then the call's arguments, then the site
// (unless the hook is variadic).

type hook struct {
	name   string // function of rt or rttest
	test   bool   // in rttest
	noSite bool   // the hook takes no site (variadic hooks)
	// sited: a variadic hook that takes its site (and rec flag) first
	// and returns the function the call's arguments go to:
	// rt.ReflectAppend(site, rec)(s, x...).
	sited bool
	// rec: the hook records an access too (a lock's word) and takes the
	// access hooks' flag after its site (rewriter.recFlag).
	rec bool
	// g: in a function body the call is to the hook's G variant, which
	// takes the goroutine's state last (rewriter.gArg).
	g bool
	// value: the hook takes the receiver's value (a reflect.Value), not
	// a pointer to it.
	value bool
}

var methodHooks = map[string]hook{
	"sync.Mutex.Lock":    {name: "MutexLock", rec: true, g: true},
	"sync.Mutex.Unlock":  {name: "MutexUnlock", rec: true, g: true},
	"sync.Mutex.TryLock": {name: "MutexTryLock", rec: true},

	"sync.RWMutex.Lock":     {name: "RWMutexLock", rec: true},
	"sync.RWMutex.Unlock":   {name: "RWMutexUnlock", rec: true},
	"sync.RWMutex.RLock":    {name: "RWMutexRLock", rec: true},
	"sync.RWMutex.RUnlock":  {name: "RWMutexRUnlock", rec: true},
	"sync.RWMutex.TryLock":  {name: "RWMutexTryLock", rec: true},
	"sync.RWMutex.TryRLock": {name: "RWMutexTryRLock", rec: true},

	"sync.Locker.Lock":   {name: "LockerLock"},
	"sync.Locker.Unlock": {name: "LockerUnlock"},

	"sync.WaitGroup.Add":  {name: "WaitGroupAdd", rec: true},
	"sync.WaitGroup.Done": {name: "WaitGroupDone", rec: true},
	"sync.WaitGroup.Wait": {name: "WaitGroupWait", rec: true},
	"sync.WaitGroup.Go":   {name: "WaitGroupGo", rec: true},

	"sync.Once.Do": {name: "OnceDo"},

	// Timers run on rt's virtual clock under its controlled scheduler.
	"time.Timer.Stop":  {name: "TimerStop"},
	"time.Timer.Reset": {name: "TimerReset"},

	"sync.Cond.Wait":      {name: "CondWait"},
	"sync.Cond.Signal":    {name: "CondSignal"},
	"sync.Cond.Broadcast": {name: "CondBroadcast"},

	"sync.Map.Load":             {name: "SyncMapLoad"},
	"sync.Map.Store":            {name: "SyncMapStore"},
	"sync.Map.LoadOrStore":      {name: "SyncMapLoadOrStore"},
	"sync.Map.LoadAndDelete":    {name: "SyncMapLoadAndDelete"},
	"sync.Map.Delete":           {name: "SyncMapDelete"},
	"sync.Map.Swap":             {name: "SyncMapSwap"},
	"sync.Map.CompareAndSwap":   {name: "SyncMapCompareAndSwap"},
	"sync.Map.CompareAndDelete": {name: "SyncMapCompareAndDelete"},
	"sync.Map.Range":            {name: "SyncMapRange"},
	"sync.Map.Clear":            {name: "SyncMapClear"},

	"testing.T.Run":          {name: "Run", test: true},
	"testing.T.Parallel":     {name: "Parallel", test: true},
	parallelKey:              {name: "ParallelOf", test: true},
	"testing.B.Run":          {name: "RunB", test: true},
	"testing.B.RunParallel":  {name: "RunParallel", test: true},
	"testing.M.Run":          {name: "MRun", test: true},
	"sync.Pool.Get":          {name: "PoolGet"},
	"sync.Pool.Put":          {name: "PoolPut"},
	"testing.F.Fuzz":         {name: "Fuzz", test: true},
	"testing.T.Cleanup":      {name: "Cleanup", test: true},
	"testing.B.Cleanup":      {name: "Cleanup", test: true},
	"testing.F.Cleanup":      {name: "Cleanup", test: true},
	"testing.common.Cleanup": {name: "Cleanup", test: true},
	"testing.TB.Cleanup":     {name: "Cleanup", test: true},
	"testing.common.Context": {name: "Context", test: true},
	"testing.TB.Context":     {name: "Context", test: true},
	"testing.PB.Next":        {name: "PBNext", test: true},

	// reflect: accesses through a Value (rt/reflect.go).
	"reflect.Value.Int":         {name: "ReflectInt", value: true, rec: true},
	"reflect.Value.Uint":        {name: "ReflectUint", value: true, rec: true},
	"reflect.Value.Float":       {name: "ReflectFloat", value: true, rec: true},
	"reflect.Value.Bool":        {name: "ReflectBool", value: true, rec: true},
	"reflect.Value.Complex":     {name: "ReflectComplex", value: true, rec: true},
	"reflect.Value.String":      {name: "ReflectString", value: true, rec: true},
	"reflect.Value.Interface":   {name: "ReflectInterface", value: true, rec: true},
	"reflect.Value.Set":         {name: "ReflectSet", value: true, rec: true},
	"reflect.Value.SetInt":      {name: "ReflectSetInt", value: true, rec: true},
	"reflect.Value.SetUint":     {name: "ReflectSetUint", value: true, rec: true},
	"reflect.Value.SetFloat":    {name: "ReflectSetFloat", value: true, rec: true},
	"reflect.Value.SetBool":     {name: "ReflectSetBool", value: true, rec: true},
	"reflect.Value.SetComplex":  {name: "ReflectSetComplex", value: true, rec: true},
	"reflect.Value.SetString":   {name: "ReflectSetString", value: true, rec: true},
	"reflect.Value.SetBytes":    {name: "ReflectSetBytes", value: true, rec: true},
	"reflect.Value.SetLen":      {name: "ReflectSetLen", value: true, rec: true},
	"reflect.Value.SetCap":      {name: "ReflectSetCap", value: true, rec: true},
	"reflect.Value.MapIndex":    {name: "ReflectMapIndex", value: true, rec: true},
	"reflect.Value.MapKeys":     {name: "ReflectMapKeys", value: true, rec: true},
	"reflect.Value.SetMapIndex": {name: "ReflectSetMapIndex", value: true, rec: true},
	"reflect.Value.Grow":        {name: "ReflectGrow", value: true, rec: true},
	"reflect.Value.Call":        {name: "ReflectCall", value: true, rec: true},
	"reflect.Value.CallSlice":   {name: "ReflectCallSlice", value: true, rec: true},
	// Channel operations through reflect (rt/reflectchan.go).
	"reflect.Value.Send":    {name: "ReflectSend", value: true, rec: true},
	"reflect.Value.Recv":    {name: "ReflectRecv", value: true, rec: true},
	"reflect.Value.TrySend": {name: "ReflectTrySend", value: true, rec: true},
	"reflect.Value.TryRecv": {name: "ReflectTryRecv", value: true, rec: true},
	"reflect.Value.Close":   {name: "ReflectClose", value: true, rec: true},
}

var funcHooks = map[string]hook{
	"os.Exit":           {name: "Exit", noSite: true},
	"os/signal.Notify":  {name: "SignalNotify", noSite: true},
	"sync.OnceFunc":     {name: "OnceFunc"},
	"time.AfterFunc":    {name: "AfterFunc"},
	"time.Sleep":        {name: "Sleep"},
	"time.NewTimer":     {name: "NewTimer"},
	"time.After":        {name: "After"},
	"time.Now":          {name: "Now", noSite: true},
	"time.Since":        {name: "Since", noSite: true},
	"time.Until":        {name: "Until", noSite: true},
	"context.AfterFunc": {name: "ContextAfterFunc"},
	// Each run a goroutine born in untraced code (rt/gor.go).
	"runtime.SetFinalizer": {name: "SetFinalizer", noSite: true},
	"runtime.AddCleanup":   {name: "AddCleanup", noSite: true},
	"sync.OnceValue":       {name: "OnceValue"},
	// The coroutine a pull runs its sequence in (rt/iter.go).
	"iter.Pull":         {name: "IterPull"},
	"iter.Pull2":        {name: "IterPull2"},
	"sync.OnceValues":   {name: "OnceValues"},
	"log.Fatal":         {},
	"log.Fatalf":        {},
	"log.Fatalln":       {},
	"log.Logger.Fatal":  {},
	"log.Logger.Fatalf": {},

	"testing/synctest.Test": {name: "SynctestTest", test: true},
	"testing/synctest.Wait": {name: "SynctestWait", test: true},

	"reflect.Copy":        {name: "ReflectCopy", rec: true},
	"reflect.Select":      {name: "ReflectSelect", rec: true},
	"reflect.Append":      {name: "ReflectAppend", rec: true, sited: true},
	"reflect.AppendSlice": {name: "ReflectAppendSlice", rec: true},
	// Objects reflect allocates (rt.Alloc's reason).
	"reflect.New":             {name: "ReflectNew"},
	"reflect.MakeSlice":       {name: "ReflectMakeSlice"},
	"reflect.MakeMap":         {name: "ReflectMakeMap"},
	"reflect.MakeMapWithSize": {name: "ReflectMakeMapWithSize"},
	"reflect.MakeFunc":        {name: "ReflectMakeFunc"},

	// A count of the program's allocations (rt/barrier.go's countingAllocs).
	"runtime.ReadMemStats": {name: "ReadMemStats", noSite: true},
	"testing.AllocsPerRun": {name: "AllocsPerRun", test: true, noSite: true},
}

func init() {
	// sync/atomic: every function, and every method of its types.
	ints := []string{"Int32", "Int64", "Uint32", "Uint64", "Uintptr"}
	for _, t := range ints {
		for _, op := range []string{"Add", "And", "Or", "CompareAndSwap", "Load", "Store", "Swap"} {
			funcHooks["sync/atomic."+op+t] = hook{name: "Atomic" + op + t}
			methodHooks["sync/atomic."+t+"."+op] = hook{name: "Atomic" + t + op}
		}
	}
	for _, op := range []string{"CompareAndSwap", "Load", "Store", "Swap"} {
		funcHooks["sync/atomic."+op+"Pointer"] = hook{name: "Atomic" + op + "Pointer"}
		for _, t := range []string{"Bool", "Value", "Pointer"} {
			methodHooks["sync/atomic."+t+"."+op] = hook{name: "Atomic" + t + op}
		}
	}
}

// funcKey names a package-level function for funcHooks.
func funcKey(fn *types.Func) string {
	if fn.Pkg() == nil {
		return ""
	}
	return fn.Pkg().Path() + "." + fn.Name()
}

// methodKey names a method for methodHooks: the receiver's named type
// (pointer and type arguments stripped).
func methodKey(fn *types.Func) string {
	if parallelMethod(fn) {
		return parallelKey
	}
	n, _, ok := recvNamed(fn)
	if !ok || fn.Pkg() == nil {
		return ""
	}
	if lockerMethod(fn, n) {
		return "sync.Locker." + fn.Name()
	}
	return fn.Pkg().Path() + "." + n.Obj().Name() + "." + fn.Name()
}

// parallelKey is methodKey's name for Parallel() of an interface: a
// testing.T's, through a wrapper of its (rttest.ParallelOf).
const parallelKey = "testing.interface.Parallel"

// parallelMethod reports whether fn is a method Parallel() of an interface
// type, named or not, outside package testing (testscript's T, whose
// dynamic values embed a *testing.T).
func parallelMethod(fn *types.Func) bool {
	sig, _ := fn.Type().(*types.Signature)
	if fn.Name() != "Parallel" || sig == nil || sig.Recv() == nil || sig.Params().Len() != 0 || sig.Results().Len() != 0 ||
		fn.Pkg() == nil || fn.Pkg().Path() == "testing" {
		return false
	}
	_, isIface := types.Unalias(sig.Recv().Type()).Underlying().(*types.Interface)
	return isIface
}

// lockerMethod reports whether fn is Lock or Unlock of an interface type
// other than sync.Locker that has both (go-sqlmock's expectation, whose
// dynamic types embed a sync.Mutex): a call of it is a call of
// sync.Locker's, and its hook finds the embedded mutex (rt.lockerObj).
// Without it the lock was taken unseen, and the critical sections raced
// (corpus, session 30).
func lockerMethod(fn *types.Func, n *types.Named) bool {
	iface, ok := n.Underlying().(*types.Interface)
	if !ok || (fn.Name() != "Lock" && fn.Name() != "Unlock") {
		return false
	}
	for _, name := range []string{"Lock", "Unlock"} {
		m, _, _ := types.LookupFieldOrMethod(iface, false, nil, name)
		f, ok := m.(*types.Func)
		if !ok {
			return false
		}
		if sig := f.Type().(*types.Signature); sig.Params().Len() != 0 || sig.Results().Len() != 0 {
			return false
		}
	}
	return true
}

// recvNamed returns the named type of method fn's receiver, and whether
// the receiver is a pointer to it; ok is false for a function, or a
// receiver of no named type.
func recvNamed(fn *types.Func) (n *types.Named, ptr, ok bool) {
	sig, _ := fn.Type().(*types.Signature)
	if sig == nil || sig.Recv() == nil {
		return nil, false, false
	}
	t := types.Unalias(sig.Recv().Type())
	if p, isPtr := t.(*types.Pointer); isPtr {
		t, ptr = types.Unalias(p.Elem()), true
	}
	n, ok = t.(*types.Named)
	return n, ptr, ok
}

// runtimeName names fn as Go's stack traces and race reports do:
// net/http.(*Client).Do, strings.Builder.String, io.ReadAll.
func runtimeName(fn *types.Func) string {
	if fn.Pkg() == nil {
		return fn.Name()
	}
	n, ptr, ok := recvNamed(fn)
	switch {
	case ok && ptr:
		return fn.Pkg().Path() + ".(*" + n.Obj().Name() + ")." + fn.Name()
	case ok:
		return fn.Pkg().Path() + "." + n.Obj().Name() + "." + fn.Name()
	case fn.Signature().Recv() != nil:
		return fn.FullName()
	}
	return fn.Pkg().Path() + "." + fn.Name()
}

// stdKey names fn in the tables of std functions (stdTable, freshStd):
// methodKey for a method, funcKey for a function.
func stdKey(fn *types.Func) string {
	if k := methodKey(fn); k != "" {
		return k
	}
	return funcKey(fn)
}

// isLogFatal reports whether key is one of the log.Fatal functions, which
// exit without returning: the trace is finished before them.
func isLogFatal(key string) bool {
	return strings.HasPrefix(key, "log.") && strings.Contains(key, "Fatal")
}

// timerCalls start, reset or stop a timer or ticker: rt.TimerStart is
// recorded before them (see rt's timersObj). Timers proper (NewTimer,
// After, Timer.Stop and Reset) have hooks of their own (funcHooks,
// methodHooks), which record it.
var timerCalls = map[string]bool{
	"time.NewTicker": true, "time.Tick": true, "time.Ticker.Reset": true, "time.Ticker.Stop": true,
	"context.WithTimeout": true, "context.WithDeadline": true,
	"context.WithTimeoutCause": true, "context.WithDeadlineCause": true,
}

// ioPkgs are the packages whose calls may read or write files, pipes or
// connections.
var ioPkgs = map[string]bool{
	"os": true, "io": true, "io/ioutil": true, "bufio": true, "net": true, "net/http": true,
	"net/rpc": true, "net/textproto": true, "os/exec": true, "syscall": true, "fmt": true,
	"log": true, "encoding/json": true, "encoding/gob": true, "encoding/csv": true,
	"compress/gzip": true, "archive/tar": true, "archive/zip": true,
	"database/sql": true, "encoding/xml": true, "encoding/binary": true, "crypto/tls": true,
}

// ioAtSyscalls reports whether the release ioKind gives a call of fn (a
// standard-library function that may write) stands for write system calls
// the call makes itself, on the caller's goroutine: an os.File's or a
// net.Conn's Write, fmt's Fprintf, a bufio.Writer's Flush, an Encoder's
// Encode, log's Output. Where rt sees those system calls (the patched
// package syscall, rt/iohook.go), it records their edges exactly and
// skips the call's (rt.IOSysBefore): a write that makes no system call (a
// bufio.Writer filling its buffer, an Fprintf into a strings.Builder)
// orders nothing under go test -race, and the call's release hid the race
// -race reports between what came before it and a later read system call
// (e2e stdraces TestRaceBufferedWriteNoSyscall). Not the calls whose
// edges stand for something else: a Close of a pipe (what it makes fail,
// through io.Pipe's channels; a file's, a connection's and a TLS
// connection's Close is ordered before what it makes fail by the
// descriptor's lock, internal/poll's atomics, which rt sees where it sees
// the system calls: rt.IOSysWrite), an io.Pipe's or a QUIC connection's
// (channels and goroutines of their own), net/http's, net/rpc's and
// database/sql's (other goroutines' I/O, a driver's locks), os/exec's
// (stdIOAtSyscalls).
func ioAtSyscalls(fn *types.Func) bool {
	if !stdIOAtSyscalls(fn) {
		return false
	}
	switch fn.Pkg().Path() {
	case "bytes", "strings":
		return fn.Name() == "WriteTo"
	}
	if strings.HasPrefix(fn.Name(), "Close") {
		switch fn.Pkg().Path() {
		case "os", "net", "crypto/tls":
			return true
		}
		return false
	}
	return true
}

// stdIOAtSyscalls reports whether fn is a call of the I/O table whose edges
// may stand for system calls it makes itself (ioAtSyscalls, readAtSyscalls):
// not an HTTP exchange, an io.Pipe's Write or a QUIC connection's method,
// nor net/http's, net/rpc's, database/sql's, os/exec's or the runtime's
// trace calls.
func stdIOAtSyscalls(fn *types.Func) bool {
	if fn == nil || fn.Pkg() == nil || httpExchange(fn) || isPipeWrite(fn) {
		return false
	}
	if n, _, ok := recvNamed(fn); ok && isNamedIn(n, "crypto/tls", "QUICConn") {
		return false
	}
	switch fn.Pkg().Path() {
	case "bytes", "strings":
		return true
	case "net/http", "net/rpc", "database/sql", "os/exec", "runtime", "runtime/trace":
		return false
	}
	return ioPkgs[fn.Pkg().Path()]
}

// readAtSyscalls reports whether the acquire ioKind gives a call of fn (a
// standard-library function that may read) stands for read system calls
// the call makes itself, on the caller's goroutine: an os.File's or a
// net.Conn's Read, a bufio.Reader's or a Scanner's, an Accept, a
// Decoder's Decode, io.ReadAll, io.Copy's reads. Where rt sees those
// system calls and the descriptors' locks (the patched packages syscall
// and internal/poll: rt.IOSysRead), it records their edges exactly, and a
// Close before the Read or Accept it made fail is ordered by the lock,
// and the call records no acquire, which would order a read that makes no
// system call (a bufio.Reader over a strings.Reader) after every write
// system call before it: -race reports the race (e2e stdraces
// TestRaceMemoryReadAfterWriteSyscall). Not the calls whose edges stand
// for something else (ioAtSyscalls' exceptions), nor a Wait, Run or Output
// (a process's exit and output).
func readAtSyscalls(fn *types.Func) bool {
	if !stdIOAtSyscalls(fn) {
		return false
	}
	switch name := fn.Name(); fn.Pkg().Path() {
	case "bytes", "strings":
		return name == "ReadFrom"
	default:
		return name != "Wait" && name != "Run" && name != "Output" && name != "CombinedOutput"
	}
}

// depIOKind is ioKind for a call into an untraced dependency (not the
// standard library): its I/O is unseen too, and what its methods' names say
// is all racekit knows of it. A dependency's Decode that reads a
// connection (hashicorp/serf's RPC server decodes requests with
// ugorji/go's codec) ordered nothing, so what the client wrote before its
// request raced with what the server read after it (corpus, session 27).
// Only the names of reading and writing (a RoundTrip, an HTTP client's
// request and response, both): Wait, Run or Print, which
// ioKind reads as I/O in the standard library, are a dependency's own
// business.
func depIOKind(fn *types.Func) (write, read bool) {
	name := fn.Name()
	return hasPrefix(name, "Write", "Encode", "Flush", "Send", "RoundTrip"), hasPrefix(name, "Read", "Decode", "Recv", "Accept", "Peek", "RoundTrip")
}

// httpExchange reports whether fn is a method of an interface that takes
// an *http.Request and returns an *http.Response: a program's own HTTP
// client interface (connectrpc's HTTPClient, whose Do an *http.Client
// implements). Its call sends the request and returns after the response's
// header arrived, as http.Client.Do, which ioKind sees only when called by
// its own name (held-out module connectrpc.com/connect: a handler's write
// before the response raced with the client's read after Do).
func httpExchange(fn *types.Func) bool {
	sig, ok := fn.Type().(*types.Signature)
	if !ok || sig.Recv() == nil || !types.IsInterface(sig.Recv().Type()) {
		return false
	}
	return hasNamedPtr(sig.Params(), "net/http", "Request") && hasNamedPtr(sig.Results(), "net/http", "Response")
}

// hasNamedPtr reports whether one of vars is a *pkg.name.
func hasNamedPtr(vars *types.Tuple, pkg, name string) bool {
	for i := range vars.Len() {
		if isPtrToNamedIn(vars.At(i).Type(), pkg, name) {
			return true
		}
	}
	return false
}

// isPipeWrite reports whether fn is io.PipeWriter.Write, which returns
// only after a Read consumed its data (rt.PipeWritten).
func isPipeWrite(fn *types.Func) bool {
	return fn != nil && methodKey(fn) == "io.PipeWriter.Write"
}

// hasPrefix reports whether name begins with one of prefixes.
func hasPrefix(name string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// ioKind classifies a call of fn for rt's I/O edges: a write system call is
// ordered before every later read one (the Go race detector's ioSync), so a
// call that may write releases before it, and one that may read acquires
// after it returns. Calls are classified by package and name.
func ioKind(fn *types.Func) (write, read bool) {
	if fn == nil || fn.Pkg() == nil {
		return false, false
	}
	if httpExchange(fn) {
		return true, true
	}
	if n, _, ok := recvNamed(fn); ok && isNamedIn(n, "crypto/tls", "QUICConn") {
		// A QUICConn runs the TLS handshake in a goroutine of its own,
		// which calls the config's callbacks (GetCertificate, ...), and
		// its methods hand the handshake over to it and wait on channels
		// until it blocks again (crypto/tls/quic.go): each call orders
		// what the callbacks did before it returned, and what its caller
		// did before it, as the I/O object does (the callbacks, traced
		// code entered from untraced code, acquire it and release it:
		// rt/gor.go). quic-go's TestHelloRetryRequest reads what its
		// GetCertificate wrote (held-out batch BX).
		return true, true
	}
	name := fn.Name()
	switch fn.Pkg().Path() {
	case "bytes", "strings":
		// An in-memory buffer's WriteTo writes to the io.Writer it is
		// given, ReadFrom reads from the io.Reader: a connection, a pipe
		// (mochi-mqtt's client writes its packets with
		// bytes.Buffer.WriteTo(conn) on a net.Pipe whose reader the test
		// waits for: held-out batch BI).
		return name == "WriteTo", name == "ReadFrom"
	case "runtime/trace":
		// trace.Start (and a FlightRecorder's) starts the trace reader
		// goroutine, which writes the trace to the io.Writer it is given
		// (traced code, entered from untraced code: rt/gor.go's ioObj);
		// Stop (and a FlightRecorder's Stop or WriteTo) returns after the
		// reader's last write, an edge Go's runtime gives the race detector
		// by hand (trace.doneSema). Held-out x/exp's FlightRecorder resets
		// after Stop what its writer filled in (batch GT, session 78).
		return name == "Start", name == "Stop" || name == "WriteTo"
	case "runtime":
		// The same edge for a program that reads the trace itself: the
		// reader's ReadTrace releases, StopTrace acquires.
		return name == "ReadTrace", name == "StopTrace"
	}
	if !ioPkgs[fn.Pkg().Path()] {
		return false, false
	}
	has := func(ps ...string) bool { return hasPrefix(name, ps...) }
	switch fn.Pkg().Path() {
	case "database/sql":
		// A database is a file the driver's locks guard: every call may
		// write what a later one reads (a task committed by one worker,
		// picked up by another: cschleiden/go-workflows over SQLite,
		// corpus session 26). Orders all calls, more than the driver's
		// locks do: races may be hidden, none invented.
		return true, true
	case "fmt":
		return has("Print", "Fprint"), has("Scan", "Fscan")
	case "syscall":
		// Exactly the calls whose ioSync edges the Go race detector
		// sees (syscall_unix.go): recvfrom, sendto, recvmsg and
		// sendmsg have none, and an event loop over raw descriptors
		// (lesismal/nbio's, all syscall) is ordered by nothing else:
		// the race go test -race reports between a UDP connection's
		// setup and its event loop's first read was hidden (corpus
		// session 55).
		return name == "Write" || name == "Pwrite" || name == "Sendfile", name == "Read" || name == "Pread"
	case "net/http":
		// A RoundTrip writes its request and returns after reading the
		// response's header, which the server writes after the handler
		// returns (prometheus/common's round trippers: held-out batch BM).
		if has("Get", "Post", "Head", "Do", "Serve", "ListenAndServe", "RoundTrip") {
			return true, true
		}
		// A Server's Shutdown, as its Close, is seen by the Serve it makes
		// return ErrServerClosed (inShutdown, an atomic the Go race
		// detector sees): held-out stripe/smokescreen's runServer writes a
		// flag before Shutdown in one goroutine and reads it after Serve
		// returns in another (batch FI).
		if name == "Shutdown" {
			return true, false
		}
	case "encoding/xml":
		// A Decoder's Token reads its reader, as Decode does (held-out
		// gosrc.io/xmpp reads its connections token by token: its
		// client's router and its test server were ordered by nothing).
		if name == "Token" || name == "RawToken" || name == "Skip" {
			return false, true
		}
	case "crypto/tls":
		// A handshake writes and reads the connection; so does a Dial,
		// which makes one.
		if has("Handshake", "Dial") {
			return true, true
		}
	case "log":
		// Output writes the line to the logger's writer, as Print does
		// (a file's write system call releases ioSync under -race); it
		// reads nothing (os/exec's Output, which the rule below is for,
		// reads the command's). Held-out schollz/croc's relay logs a
		// failed Listen through its logger's Output, which orders the
		// field the Listen set before the test's later reads.
		if name == "Output" {
			return true, false
		}
	case "net/rpc":
		// A Call writes its request and returns after reading the reply,
		// which the server writes after the method returns.
		if name == "Call" {
			return true, true
		}
	case "io":
		// A pipe's close is what its reader's Read returning io.EOF
		// sees (io.Pipe closes a channel): fasthttp's fasthttpadaptor
		// sets the trailers in the handler's goroutine, closes the body
		// pipe, and reads them in the server's after the EOF.
		if name == "Close" || name == "CloseWithError" {
			return true, false
		}
		// The reader's close is what a pipe writer's Write returning
		// io.ErrClosedPipe sees, likewise.
		if isPipeWrite(fn) {
			return true, true
		}
	}
	// A close is seen by the operations it makes fail: an Accept or a
	// Read blocked on the descriptor returns an error (internal/poll's
	// fdMutex, atomics the Go race detector sees; net.Pipe's channels), so
	// what the closer did before is ordered before what their caller does
	// after (sourcegraph/jsonrpc2's tests: the serving goroutine's write
	// after Accept fails, the test's before lis.Close; corpus session 54).
	write = has("Write", "Encode", "Flush", "Sync", "Send", "Print", "Fatal", "Panic", "Close") || name == "Copy" || name == "CopyN" || name == "CopyBuffer"
	// bufio.Reader's Peek and Discard read from the reader under it when
	// its buffer runs short (hashicorp/memberlist peeks a connection's
	// label header before anything else is read from it).
	read = has("Read", "Scan", "Decode", "Accept", "Recv", "Copy", "Peek", "Discard") || name == "Wait" || name == "Run" || name == "Output" || name == "CombinedOutput"
	return write, read
}
