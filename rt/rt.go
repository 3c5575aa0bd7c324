package rt

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"unsafe"

	"github.com/racekit/racekit/trace"
	"github.com/racekit/racekit/trace/rkt"
)

// on is true when the program traces: set once by start (at init), before
// the program's goroutines run, and read by every hook first. live is
// true until the trace is finished or fails: the recording paths check it,
// so that hooks become no-ops after Finish.
var (
	on   bool
	live OwnBool
)

// Definitions (sites, goroutines) are queued under defMu and written by
// the writer before the events that use them (see round).
type def struct {
	isSite bool
	site   trace.Site
	g      trace.Goroutine
	name   *trace.Name // a name to define, not a site or goroutine
}

var (
	defMu  OwnMutex
	defs   []def
	nsites uint32 = 1 // site IDs defined so far, counting the unknown site 0
	ngors  uint32     // goroutine IDs allocated so far
	nroots int        // of which born in untraced code (gstate.root)
	// rootGoids[k] is the goid of root k: the controlled scheduler looks up
	// a root that ended without reaching a scheduling point (sched.go).
	rootGoids []uint64
)

func init() {
	configureSampling() // RACEKIT_SAMPLE (sample.go), RACEKIT_FILTER (filter.go)
	configureFilter()
	if dispatchOnly {
		probeGoid() // the dispatch check alone, no trace (sample.go)
		return
	}
	path := os.Getenv("RACEKIT_TRACE")
	if path == "" {
		dir := os.Getenv("RACEKIT_TRACE_DIR")
		if dir == "" {
			return
		}
		path = filepath.Join(dir, traceName()+"."+strconv.Itoa(os.Getpid())+".rkt")
	}
	wgMisuse = os.Getenv("RACEKIT_WGMISUSE") != "0"
	traceMinFree = minFreeOf(os.Getenv("RACEKIT_TRACE_MINFREE"))
	setDedupMax(os.Getenv("RACEKIT_DEDUP_MAX"))
	wordEvents = os.Getenv("RACEKIT_RANGES") == "0"
	dedupAcquires = os.Getenv("RACEKIT_DEDUP") == "release"
	if err := start(path, os.Getenv("RACEKIT_DEDUP") != "0"); err != nil {
		fmt.Fprintf(os.Stderr, "racekit: cannot trace: %v\n", err)
		return
	}
	if os.Getenv("RACEKIT_SIGNALS") == "1" {
		watchSignals()
	}
}

// start begins tracing into a new file at path, from a clean state (tests
// start several traces in one process, one after the other).
func start(path string, withDedup bool) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	wmu.Lock()
	defer wmu.Unlock()
	defMu.Lock()
	defs, nsites, ngors, nroots, rootGoids = nil, 1, 0, 0, nil
	gmap = map[uint64]*gstate{}
	seenBytes.Store(0) // the old goroutines' tables go with their states
	for i := range gtab {
		gtab[i].Store(nil)
	}
	defMu.Unlock()
	regMu.Lock()
	reg = nil
	regMu.Unlock()
	traceCount.Add(1)
	seq.Store(0)
	pending.Store(0)
	out = f
	noteOwnFD(ownTraceFD, f)
	outPath = path
	dedup = withDedup
	w = rkt.NewWriter(newGuardedFile(f, traceMinFree))
	outSeq, wsites, unflushed, finished = 0, 1, 0, false
	newTraceFilter() // a fresh TREE for this trace (filter.go)
	probeGoid()
	if bi, ok := debug.ReadBuildInfo(); ok {
		_ = w.DefineName(0, "program "+bi.Path)
	}
	for _, n := range globalObjs {
		_ = w.DefineName(n.Obj, n.Name)
	}
	defMu.Lock()
	for _, n := range globalVars {
		_ = w.DefineName(n.Obj, n.Name)
	}
	defMu.Unlock()
	for i := range edgeVer {
		edgeVer[i].Store(0)
	}
	// The header and the program's name go out now: a run killed before
	// the first flush leaves a readable (empty) trace.
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	newWriterTimer() // disarmed: the first event arms it (open)
	on = true
	live.Store(true)
	installAllocHook()
	installChanHook()
	installSyncHook()
	installMapHook()
	installValueHook()
	installIOHook()
	installExitHook()
	installBatchHooks()
	return nil
}

// traceName is the main package's path made into a file name.
func traceName() string {
	name := filepath.Base(os.Args[0])
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Path != "" {
		name = bi.Path
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			return r
		}
		return '_'
	}, name)
}

// Enabled reports whether the program is being traced.
func Enabled() bool { return on && live.Load() }

// emit records one event of the current goroutine.
func emit(op trace.Op, flags trace.Flags, site uint32, obj uint64) {
	emitVal(op, flags, site, obj, 0)
}

// emitVal records one event of the current goroutine, with its value.
func emitVal(op trace.Op, flags trace.Flags, site uint32, obj, val uint64) {
	if !live.Load() {
		return
	}
	cur().record(op, flags, site, obj, val)
}

// emitAddrs records a MethodBegin (or another event) of the current
// goroutine with the address set addrs.
func emitAddrs(op trace.Op, flags trace.Flags, site uint32, obj uint64, addrs []uint64) {
	if !live.Load() {
		return
	}
	g := cur()
	if isPlain(op) {
		g.plain(op, flags, site, obj, 0)
		return
	}
	g.sync(op, flags, site, obj, 0, addrs)
}

// record records one event of g, the current goroutine.
func (g *gstate) record(op trace.Op, flags trace.Flags, site uint32, obj, val uint64) {
	if isPlain(op) {
		g.plain(op, flags, site, obj, val)
	} else {
		g.sync(op, flags, site, obj, val, nil)
	}
}

// RegisterFile defines the sites of one instrumented file and returns the
// ID of its first site; the instrumented code names site k of the file as
// base+k. Sites are given as a flat list of (line, column, function index)
// triples, functions by their index in funcs, the index's top bit
// (wideSite) set for a wide site (trace.Site.Wide), the next one
// (inlineSite) for an inline function's declaration (trace.Site.Inline).
// The file's site k=0 is its first triple.
func RegisterFile(file string, funcs []string, sites []uint32) uint32 {
	return RegisterFileCallees(file, funcs, sites, nil, nil)
}

// wideSite marks a wide site in RegisterFile's triples, inlineSite the
// declaration of a function that records no frame (trace.Site.Inline).
const (
	wideSite   = 1 << 31
	inlineSite = 1 << 30
)

// RegisterFileCallees is RegisterFile for a file some of whose sites stand
// for an untraced function called there (a standard-library call whose
// accesses an interceptor records): callees holds (site k of the file,
// frame j, line) triples, frames (function, file) pairs, frame j at
// 2j. The trace gives such a site its trace.Site.Callee.
func RegisterFileCallees(file string, funcs []string, sites, callees []uint32, frames []string) uint32 {
	return RegisterFileCalls(file, funcs, sites, callees, frames, nil)
}

// RegisterFileCalls is RegisterFileCallees for a file with calls in traced
// code: calls holds (site k of the file, the called function's index in
// funcs plus 1, or 0 when it is not known statically, end line, end
// column) quadruples. The trace gives such a site its trace.Site.Call.
func RegisterFileCalls(file string, funcs []string, sites, callees []uint32, frames []string, calls []uint32) uint32 {
	tracedFiles.Store(file, true)
	if ctl && !on {
		return schedFile(file, sites, 0) // controlled mode (sched.go)
	}
	if !on || !live.Load() {
		return 0
	}
	defMu.Lock()
	defer defMu.Unlock()
	base := nsites
	if ctl {
		schedFile(file, sites, base) // controlled mode (sched.go)
	}
	first := len(defs)
	for i := 0; i+2 < len(sites); i += 3 {
		fn := ""
		if k := int(sites[i+2] &^ (wideSite | inlineSite)); k < len(funcs) {
			fn = funcs[k]
		}
		defs = append(defs, def{isSite: true, site: trace.Site{File: file, Line: int(sites[i]), Col: int(sites[i+1]), Func: fn, Wide: sites[i+2]&wideSite != 0, Inline: sites[i+2]&inlineSite != 0}})
		nsites++
	}
	for i := 0; i+2 < len(callees); i += 3 {
		k, j := first+int(callees[i]), 2*int(callees[i+1])
		if k < len(defs) && j+1 < len(frames) {
			defs[k].site.Callee = trace.Frame{Func: frames[j], File: frames[j+1], Line: int(callees[i+2])}
		}
	}
	for i := 0; i+3 < len(calls); i += 4 {
		k, fn := first+int(calls[i]), ""
		if j := int(calls[i+1]); j > 0 && j <= len(funcs) {
			fn = funcs[j-1]
		}
		if k < len(defs) && calls[i+2] > 0 {
			defs[k].site.Call = trace.Call{Func: fn, EndLine: int(calls[i+2]), EndCol: int(calls[i+3])}
		}
	}
	return base
}

// Flush writes everything recorded so far to the file: the events of
// every goroutine, including those blocked with records not yet written.
func Flush() {
	if !on {
		return
	}
	wmu.Lock()
	if !finished {
		round(roundForce)
	}
	wmu.Unlock()
}

// commitOwn commits the calling goroutine's records, if it has a state and
// left frame events uncommitted (gstate.frame), so that Finish writes
// everything it recorded.
func commitOwn() {
	if !live.Load() {
		return
	}
	if g := known(); g != nil && g.written != g.committed {
		g.commit(false)
	}
}

// Finish ends the trace: every goroutine's records are written, then the
// end block, and the file is closed. Hooks are no-ops afterwards; a hook
// running meanwhile in another goroutine may lose its event.
func Finish() {
	schedFlush() // controlled mode's schedule, traced or not
	defer exitIfDeparted()
	if !on {
		return
	}
	schedSettle() // goroutines parked under control record what they block in
	commitOwn()
	live.Store(false)
	wmu.Lock()
	defer wmu.Unlock()
	if finished {
		return
	}
	round(roundFinal)
	if finished {
		return // failed
	}
	writeBlocked()
	finished = true
	stopWriterTimer()
	err := w.Close()
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	noteOwnFD(ownTraceFD, nil)
	if err != nil {
		fmt.Fprintf(os.Stderr, "racekit: finishing trace %s: %v\n", outPath, err)
	}
}

// ptr is the address of p as an object ID.
func ptr(p unsafe.Pointer) uint64 { return uint64(uintptr(p)) }

// counter hands out distinct object IDs for objects that have no address
// (test tokens). They are odd and above 2^63, so no Go pointer is one.
var counter OwnUint64

// NewObject returns an object ID no address can equal.
func NewObject() uint64 { return 1<<63 | counter.Add(1)<<1 | 1 }
