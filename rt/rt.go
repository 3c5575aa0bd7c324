package rt

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/racekit/racekit/trace"
	"github.com/racekit/racekit/trace/rkt"
)

// on is true while the program traces; hooks test it first. It is set once
// at init and cleared when the trace is finished or fails.
var on bool

// The recorder: one mutex orders every event (see the package comment).
var (
	mu         sync.Mutex
	w          *rkt.Writer
	out        *os.File
	seq        uint64
	nsites     uint32 = 1 // site IDs defined so far, counting the unknown site 0
	ngors      uint32     // goroutine IDs allocated so far
	finished   bool
	armed      bool // the flush timer is pending
	flushTimer *time.Timer
	ev         trace.Event // reused under mu
	outPath    string
)

// flushDelay bounds how long an event may sit in the pending block.
const flushDelay = 100 * time.Millisecond

func init() {
	path := os.Getenv("RACEKIT_TRACE")
	if path == "" {
		dir := os.Getenv("RACEKIT_TRACE_DIR")
		if dir == "" {
			return
		}
		path = filepath.Join(dir, traceName()+"."+strconv.Itoa(os.Getpid())+".rkt")
	}
	if err := start(path, os.Getenv("RACEKIT_DEDUP") != "0"); err != nil {
		fmt.Fprintf(os.Stderr, "racekit: cannot trace: %v\n", err)
		return
	}
	if os.Getenv("RACEKIT_SIGNALS") == "1" {
		watchSignals()
	}
}

// start begins tracing into a new file at path.
func start(path string, withDedup bool) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	out = f
	outPath = path
	dedup = withDedup
	w = rkt.NewWriter(f)
	probeGoid()
	on = true
	if bi, ok := debug.ReadBuildInfo(); ok {
		_ = w.DefineName(0, "program "+bi.Path)
	}
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
func Enabled() bool { return on }

// fail stops tracing after an I/O or encoding error. Called with mu held.
func fail(err error) {
	if finished {
		return
	}
	finished = true
	on = false
	fmt.Fprintf(os.Stderr, "racekit: tracing stopped: %v\n", err)
}

// emitLocked records one event of g. Called with mu held.
func emitLocked(g *gstate, op trace.Op, flags trace.Flags, site uint32, obj uint64) {
	emitValLocked(g, op, flags, site, obj, 0)
}

// emitValLocked records one event of g with its value. Called with mu held.
func emitValLocked(g *gstate, op trace.Op, flags trace.Flags, site uint32, obj, val uint64) {
	if finished {
		return
	}
	if site >= nsites {
		site = 0 // a site table not registered yet (see RegisterFile)
	}
	switch op {
	case trace.OpRead, trace.OpWrite, trace.OpFuncEnter, trace.OpFuncExit:
	default:
		g.epoch++ // a synchronization event: a new epoch for dedup
	}
	seq++
	ev.Seq = seq
	ev.G = g.gid
	ev.Op = op
	ev.Flags = flags
	ev.Site = trace.SiteID(site)
	ev.Obj = obj
	ev.Value = val
	if err := w.WriteEvent(&ev); err != nil {
		fail(err)
		return
	}
	if !armed {
		// One timer, reset rather than made anew: recording allocates
		// nothing per event (a program's own allocation tests hold).
		armed = true
		if flushTimer == nil {
			flushTimer = time.AfterFunc(flushDelay, timedFlush)
		} else {
			flushTimer.Reset(flushDelay)
		}
	}
}

// emit records one event of the current goroutine.
func emit(op trace.Op, flags trace.Flags, site uint32, obj uint64) {
	g := cur()
	mu.Lock()
	emitLocked(g, op, flags, site, obj)
	mu.Unlock()
}

func timedFlush() {
	mu.Lock()
	armed = false
	if !finished && w != nil {
		if err := w.Flush(); err != nil {
			fail(err)
		}
	}
	mu.Unlock()
}

// RegisterFile defines the sites of one instrumented file and returns the
// ID of its first site; the instrumented code names site k of the file as
// base+k. Sites are given as a flat list of (line, column, function index)
// triples, functions by their index in funcs. The file's site k=0 is its
// first triple.
func RegisterFile(file string, funcs []string, sites []uint32) uint32 {
	if !on {
		return 0
	}
	mu.Lock()
	defer mu.Unlock()
	if finished {
		return 0
	}
	base := nsites
	for i := 0; i+2 < len(sites); i += 3 {
		fn := ""
		if k := int(sites[i+2]); k < len(funcs) {
			fn = funcs[k]
		}
		s := trace.Site{File: file, Line: int(sites[i]), Col: int(sites[i+1]), Func: fn}
		if err := w.DefineSite(trace.SiteID(nsites), s); err != nil {
			fail(err)
			return 0
		}
		nsites++
	}
	return base
}

// Flush writes everything recorded so far to the file.
func Flush() {
	if !on {
		return
	}
	mu.Lock()
	if !finished {
		if err := w.Flush(); err != nil {
			fail(err)
		}
	}
	mu.Unlock()
}

// Finish ends the trace: the pending block and the end block are written
// and the file is closed. Later events are dropped.
func Finish() {
	if !on {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	if finished {
		return
	}
	finished = true
	on = false
	err := w.Close()
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "racekit: finishing trace %s: %v\n", outPath, err)
	}
}

// Exit finishes the trace and exits; instrumented code calls it in place
// of os.Exit.
func Exit(code int) {
	Finish()
	os.Exit(code)
}

// MainExit is deferred at the top of an instrumented main function: the
// trace is finished when main returns or panics.
func MainExit() { Finish() }

// ptr is the address of p as an object ID.
func ptr(p unsafe.Pointer) uint64 { return uint64(uintptr(p)) }

// counter hands out distinct object IDs for objects that have no address
// (test tokens). They are odd and above 2^63, so no Go pointer is one.
var counter atomic.Uint64

// NewObject returns an object ID no address can equal.
func NewObject() uint64 { return 1<<63 | counter.Add(1)<<1 | 1 }
