package instrument

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The Go runtime's allocation hook. Go's race detector starts fresh shadow
// state for every byte the allocator hands out (mallocgc calls racemalloc),
// so a dead object's accesses never meet a new object at its address. rt
// sees only the allocations of traced code; memory the standard library,
// the runtime or an untraced dependency allocates keeps the accesses of the
// dead object that was there, and meets them as a false race (issue 28,
// memory reuse). The overlay below gives the runtime, at racemalloc's
// place, a call to a function rt installs, and adds to rt's copy the file
// that reaches it. The patch is a few exact text edits: a toolchain whose
// runtime does not have that text builds without it (and rt falls back to
// the allocations it sees), with a note saying so.

// hookMarker is racemalloc's call in mallocgc, after which the hook's call
// goes.
const hookMarker = "\tif raceenabled {\n\t\tracemalloc(x, size-asanRZ)\n\t}\n"

const hookCall = "\tif racekitAllocHook != nil {\n\t\tracekitAlloc(x, size-asanRZ)\n\t}\n"

// hookFuncs is appended to malloc.go. The hook runs on the goroutine that
// allocated, only from ordinary goroutine context (not on the system stack,
// not holding a runtime lock), and never inside itself: what rt allocates
// while it notes an allocation is rt's own memory. Before that guard, the
// first allocation after a GC cycle's mark termination (memstats.numgc,
// counted in that stop-the-world, before any freed memory is handed out
// again) adds one to rt's dedup generation (rt/mallochook.go).
const hookFuncs = `
// racekitAllocHook is set by racekit's runtime (racekit.dev/rt, the
// racekit_mallochook.go file racekit adds to it).
//
//go:linkname racekitAllocHook
var racekitAllocHook func(p unsafe.Pointer, size uintptr)

// racekitGCGen is rt's dedup generation, set with racekitAllocHook;
// racekitSeenGC the GC cycle count it last moved at.
//
//go:linkname racekitGCGen
var racekitGCGen *uint32

var racekitSeenGC uint32

func racekitAlloc(x unsafe.Pointer, size uintptr) {
	if p := racekitGCGen; p != nil {
		if n := atomic.Load(&memstats.numgc); n != atomic.Load(&racekitSeenGC) {
			atomic.Xadd(p, 1)
			atomic.Store(&racekitSeenGC, n)
		}
	}
	gp := getg()
	mp := gp.m
	if mp.curg != gp || mp.locks != 0 || gp.racekitInHook {
		return
	}
	gp.racekitInHook = true
	racekitAllocHook(x, size)
	gp.racekitInHook = false
}
`

// specializedMalloc is the size-specialized allocators' switch: they
// return before racemalloc's place (the race build turns them off too).
const specializedMalloc = "const sizeSpecializedMallocEnabled = "

// gStruct opens the runtime's g, to which the hook's guard is added last
// (rt reads g's first fields by offset: goid.go).
const gStruct = "type g struct {"

// gFields are added last to the runtime's g: the hooks' guard, the
// channel hook's two marks (chanFuncs), which rt sets on the goroutine
// itself through their offsets: the next channel operation is traced
// code's, and the goid of the goroutine when rt has a state for it (a g
// is reused by later goroutines; goids never are); and the count rt keeps
// of the mutex operations sync's hook is to skip (lockPatch).
const gFields = "\n\n\tracekitInHook bool // inside racekitAllocHook (malloc.go, racekit's patch)" +
	"\n\tracekitChanSkip bool // the next channel operation is traced code's (chan.go, racekit's patch)" +
	"\n\tracekitGoid uint64 // goid when racekit's rt has a state for the goroutine (chan.go)" +
	"\n\tracekitSyncSkip uint32 // rt's hook skips this goroutine's mutex operations (rt/ownmutex.go)"

// rtHookFile is the file added to rt's copy: the runtime's variable, and
// the setter rt calls when it starts a trace (rt/mallochook.go).
const rtHookFile = `package rt

import "unsafe"

//go:linkname racekitAllocHook runtime.racekitAllocHook
var racekitAllocHook func(p unsafe.Pointer, size uintptr)

//go:linkname racekitGCGen runtime.racekitGCGen
var racekitGCGen *uint32

var _ = func() bool {
	setAllocHook = func(h func(p unsafe.Pointer, size uintptr)) {
		racekitGCGen = generationWord()
		racekitAllocHook = h
	}
	return true
}()
`

// stallFuncs is appended to traceback.go when the runtime has the shape it
// reads (stallShape): a test whose goroutines are all blocked on each other
// is reported at once instead of at the -timeout alarm (issue 30, item 3).
// It is Go's checkdead for a test binary: the framework's goroutines wait
// for the tests, and the alarm (a timer) is always pending, so Go's own
// check never fires there. A goroutine that runs, may run, is in a system
// call (a signal's delivery, cgo) or waits on I/O or a sleep can still
// wake the others; so can a timer (an AfterFunc, a timer channel that a
// goroutine waits on, a sleep), except the alarm itself and racekit's
// own (skip: their callbacks' entry PCs), and a timer due after the alarm. Read
// with the world stopped, so the goroutines' states and the timers are one
// instant's; a racy pass first keeps a busy program from being stopped.
const stallFuncs = `
// racekitStalled reports whether every goroutine but the caller is
// blocked in a channel operation, a select or a sync primitive, and no
// timer can wake one before the testing framework's -timeout alarm.
//
//go:linkname racekitStalled
func racekitStalled(skip []uintptr) bool {
	if !racekitAllBlocked() {
		return false
	}
	stw := stopTheWorld(stwGoroutineProfile)
	ok := racekitAllBlocked() && !racekitTimerDue(skip)
	startTheWorld(stw)
	return ok
}

func racekitAllBlocked() bool {
	me := getg().m.curg
	all := true
	forEachGRace(func(gp *g) {
		if !all || gp == me || isSystemGoroutine(gp, false) && !racekitOwn(gp) {
			return
		}
		switch readgstatus(gp) &^ _Gscan {
		case _Gdead, _Gidle:
			return
		case _Gwaiting:
			switch gp.waitreason {
			case waitReasonChanReceiveNilChan, waitReasonChanSendNilChan, waitReasonSelectNoCases,
				waitReasonSelect, waitReasonChanReceive, waitReasonChanSend, waitReasonSyncCondWait,
				waitReasonSyncMutexLock, waitReasonSyncRWMutexRLock, waitReasonSyncRWMutexLock,
				waitReasonSyncWaitGroupWait, waitReasonSemacquire:
				return
			}
		}
		all = false
	})
	return all
}

// racekitOwn reports whether gp is one of rt's goroutines (the trace's
// writer), which count as system goroutines with sysGoroutineCheck but can
// still make progress that a goroutine of the program waits for.
func racekitOwn(gp *g) bool {
	f := findfunc(gp.startpc)
	return f.valid() && racekitOwnFunc(f)
}

// racekitOwnFunc reports whether f, valid, is one of rt's functions named
// rtsys... (or a go statement's wrapper in one).
func racekitOwnFunc(f funcInfo) bool {
	const p = "` + RTModule + `/rt.rtsys"
	name := funcname(f)
	return len(name) >= len(p) && name[:len(p)] == p
}

// racekitTimerDue reports whether a timer in some P's heap fires before
// the alarm and is not the alarm's or one whose AfterFunc callback is in
// skip. The world is stopped.
func racekitTimerDue(skip []uintptr) bool {
	alarm := int64(-1)
	for _, pp := range allp {
		for _, tw := range pp.timers.heap {
			if t := tw.timer; t.state&timerZombie == 0 && racekitTimerName(t, nil) == "testing.(*M).startAlarm.func1" {
				alarm = t.when
			}
		}
	}
	for _, pp := range allp {
		for _, tw := range pp.timers.heap {
			t := tw.timer
			if t.state&timerZombie != 0 || t.when == 0 || (alarm >= 0 && t.when >= alarm) {
				continue
			}
			if n := racekitTimerName(t, skip); n == "testing.(*M).startAlarm.func1" || n == "skip" {
				continue
			}
			return true
		}
	}
	return false
}

// racekitTimerName is the name of an AfterFunc timer's callback, "skip"
// if it is one of skip, or "".
func racekitTimerName(t *timer, skip []uintptr) string {
	if t.isChan {
		return ""
	}
	e := efaceOf(&t.arg)
	if e._type == nil || e._type.Kind() != abi.Func || e.data == nil {
		return ""
	}
	pc := (*funcval)(e.data).fn
	for _, s := range skip {
		if s == pc {
			return "skip"
		}
	}
	f := findfunc(pc)
	if !f.valid() {
		return ""
	}
	return funcname(f)
}
`

// sysGoroutineMark is where isSystemGoroutine has found its goroutine's
// start function; sysGoroutineCheck, inserted after it, counts rt's own
// goroutines (functions named rtsys..., and their go statements' wrappers)
// as the runtime's: runtime.NumGoroutine, runtime.Stack(all), goroutine
// profiles and goleak do not see them, as they do not see the Go race
// detector's (issue 33: r3labs/sse's TestSubscribeWithContextDone counts
// its goroutines across a second, and the writer's round was one of them
// at the start; corpus session 54).
const sysGoroutineMark = "\tf := findfunc(gp.startpc)\n\tif !f.valid() {\n\t\treturn false\n\t}\n"

const sysGoroutineCheck = "\tif racekitOwnFunc(f) {\n\t\treturn true\n\t}\n"

// stallShape is what stallFuncs needs of the runtime, by file.
var stallShape = map[string][]string{
	"proc.go":      {"func forEachGRace(fn func(gp *g)) {", "stwGoroutineProfile", "func stopTheWorld(reason stwReason) worldStop {", "func startTheWorld(w worldStop) {"},
	"traceback.go": {"func isSystemGoroutine(gp *g, fixed bool) bool {", "\t\"internal/abi\"\n"},
	"time.go":      {"heap []timerWhen", "timerZombie", "isChan bool", "arg    any"},
	"runtime2.go":  {"waitReasonSyncWaitGroupWait", "waitReasonSelectNoCases", "func efaceOf(ep *any) *eface {"},
}

// rtStallFile is the file added to rt's copy with stallFuncs.
const rtStallFile = `package rt

import _ "unsafe"

//go:linkname racekitStalled runtime.racekitStalled
func racekitStalled(skip []uintptr) bool

var _ = func() bool {
	allBlocked = racekitStalled
	return true
}()
`

// patchRuntime returns malloc.go and runtime2.go of the runtime at goroot
// with the allocation hook, or an error saying which edit did not apply.
func patchRuntime(malloc, runtime2 string) (string, string, error) {
	if strings.Count(malloc, hookMarker) != 1 {
		return "", "", fmt.Errorf("malloc.go: racemalloc's call in mallocgc not found")
	}
	if strings.Count(malloc, specializedMalloc) != 1 {
		return "", "", fmt.Errorf("malloc.go: %q not found", strings.TrimSpace(specializedMalloc))
	}
	malloc = strings.Replace(malloc, hookMarker, hookMarker+hookCall, 1)
	malloc = strings.Replace(malloc, specializedMalloc, specializedMalloc+"false && ", 1)
	malloc += hookFuncs
	i := strings.Index(runtime2, gStruct)
	if i < 0 || strings.Count(runtime2, gStruct) != 1 {
		return "", "", fmt.Errorf("runtime2.go: %q not found", gStruct)
	}
	j := strings.Index(runtime2[i:], "\n}\n")
	if j < 0 {
		return "", "", fmt.Errorf("runtime2.go: the end of %q not found", gStruct)
	}
	j += i
	runtime2 = runtime2[:j] + gFields + runtime2[j:]
	return malloc, runtime2, nil
}

// allocHookOverlay adds to overlay the patched runtime files of the
// toolchain that builds in cfg.Dir, and rt's hook file in the runtime copy
// at rtDir. It returns a note for the user when the hook cannot be added
// (cfg.NoAllocHook or RACEKIT_ALLOC_HOOK=0 turn it off without one).
func allocHookOverlay(cfg *Config, rtDir string, overlay map[string]string) (note string, err error) {
	if cfg.NoAllocHook || os.Getenv("RACEKIT_ALLOC_HOOK") == "0" {
		return "", nil
	}
	cache := cfg.CacheDir
	goroot, err := goEnvVar(cfg.Dir, nil, "GOROOT")
	if err != nil {
		return "", err
	}
	src := filepath.Join(goroot, "src", "runtime")
	malloc, err := os.ReadFile(filepath.Join(src, "malloc.go"))
	if err != nil {
		return "", err
	}
	runtime2, err := os.ReadFile(filepath.Join(src, "runtime2.go"))
	if err != nil {
		return "", err
	}
	m, r, err := patchRuntime(string(malloc), string(runtime2))
	if err != nil {
		return fmt.Sprintf("racekit: the Go runtime at %s is not the shape racekit patches (%v): allocations by untraced code are not seen, and a dead object's accesses may meet a new one at its address", goroot, err), nil
	}
	files := map[string][]byte{
		filepath.Join(src, "malloc.go"):                     []byte(m),
		filepath.Join(src, "runtime2.go"):                   []byte(r),
		filepath.Join(rtDir, "rt", "racekit_mallochook.go"): []byte(rtHookFile),
	}
	if tb, ok := stallPatch(src, string(runtime2)); ok {
		files[filepath.Join(src, "traceback.go")] = []byte(tb)
		files[filepath.Join(rtDir, "rt", "racekit_stallhook.go")] = []byte(rtStallFile)
	}
	if cg, err := os.ReadFile(filepath.Join(src, "chan.go")); err == nil && os.Getenv("RACEKIT_CHAN_HOOK") != "0" {
		sg, err1 := os.ReadFile(filepath.Join(src, "select.go"))
		mg, err2 := os.ReadFile(filepath.Join(src, "mgc.go"))
		if err1 == nil && err2 == nil {
			if c, s, m, ok := chanPatch(string(cg), string(sg), string(mg)); ok {
				files[filepath.Join(src, "chan.go")] = []byte(c)
				files[filepath.Join(src, "select.go")] = []byte(s)
				files[filepath.Join(src, "mgc.go")] = []byte(m)
				files[filepath.Join(rtDir, "rt", "racekit_chanhook.go")] = []byte(rtChanHookFile)
			}
		}
	}
	if wg, err := os.ReadFile(filepath.Join(goroot, "src", "sync", "waitgroup.go")); err == nil && os.Getenv("RACEKIT_SYNC_HOOK") != "0" {
		if w, ok := wgPatch(string(wg)); ok {
			files[filepath.Join(goroot, "src", "sync", "waitgroup.go")] = []byte(w)
			files[filepath.Join(rtDir, "rt", "racekit_synchook.go")] = []byte(rtSyncHookFile)
			if os.Getenv("RACEKIT_LOCK_HOOK") != "0" {
				if addLockPatch(filepath.Join(goroot, "src", "sync"), files) {
					addTypedPatch(goroot, rtDir, files)
				}
				addValuePatch(goroot, rtDir, files)
			}
		}
	}
	if sc, err := os.ReadFile(filepath.Join(goroot, "src", "syscall", "syscall_unix.go")); err == nil && os.Getenv("RACEKIT_IO_HOOK") != "0" {
		if p, ok := ioSyscallPatch(string(sc)); ok {
			files[filepath.Join(goroot, "src", "syscall", "syscall_unix.go")] = []byte(p)
			files[filepath.Join(rtDir, "rt", "racekit_iohook.go")] = []byte(rtIOHookFile)
		}
		poll := filepath.Join(goroot, "src", "internal", "poll")
		fm, err1 := os.ReadFile(filepath.Join(poll, "fd_mutex.go"))
		fu, err2 := os.ReadFile(filepath.Join(poll, "fd_unix.go"))
		if err1 == nil && err2 == nil {
			if p, ok := fdMutexPatch(string(fm), string(fu)); ok {
				files[filepath.Join(poll, "fd_mutex.go")] = []byte(p)
				files[filepath.Join(rtDir, "rt", "racekit_fdhook.go")] = []byte(rtFDHookFile)
			}
		}
	}
	if mc, err := os.ReadFile(filepath.Join(src, "mcleanup.go")); err == nil {
		if p, ok := cleanupPatch(string(mc)); ok {
			files[filepath.Join(src, "mcleanup.go")] = []byte(p)
			files[filepath.Join(rtDir, "rt", "racekit_cleanuphook.go")] = []byte(rtCleanupFile)
		}
	}
	if mf, err := os.ReadFile(filepath.Join(src, "mfinal.go")); err == nil {
		if p, ok := finalizerPatch(string(mf)); ok {
			files[filepath.Join(src, "mfinal.go")] = []byte(p)
			files[filepath.Join(rtDir, "rt", "racekit_finalizerhook.go")] = []byte(rtFinalizerFile)
		}
	}
	if proc, err := os.ReadFile(filepath.Join(src, "proc.go")); err == nil {
		if p, ok := exitPatch(string(proc)); ok {
			files[filepath.Join(src, "proc.go")] = []byte(p)
			files[filepath.Join(rtDir, "rt", "racekit_exithook.go")] = []byte(rtExitFile)
		}
	}
	for name, data := range files {
		if overlay[name], err = writeCached(cache, "files", ".go", data); err != nil {
			return "", err
		}
	}
	return "", nil
}

// stallPatch returns traceback.go of the runtime in src with stallFuncs,
// and isSystemGoroutine with sysGoroutineCheck where it has the mark, or
// false when the runtime is not the shape stallFuncs read (stallShape):
// then a stuck test waits for its -timeout, as under go test.
func stallPatch(src, runtime2 string) (string, bool) {
	var traceback string
	for name, marks := range stallShape {
		text := runtime2
		if name != "runtime2.go" {
			b, err := os.ReadFile(filepath.Join(src, name))
			if err != nil {
				return "", false
			}
			text = string(b)
		}
		for _, m := range marks {
			if !strings.Contains(text, m) {
				return "", false
			}
		}
		if name == "traceback.go" {
			traceback = text
		}
	}
	if strings.Count(traceback, sysGoroutineMark) == 1 {
		traceback = strings.Replace(traceback, sysGoroutineMark, sysGoroutineMark+sysGoroutineCheck, 1)
	}
	return traceback + stallFuncs, true
}

// The exit hook. A -race binary's runtime calls racefini at a normal exit
// (main's return, os.Exit(0)), which waits GORACE's atexit_sleep_ms while
// the other goroutines run on and are checked. rt does the same where it
// sees the exit (rt.Exit, rt.MainExit, its TestMain), but a test binary
// racekit gives no TestMain (its package has examples, or its TestMain
// hands m to untraced code) exits through the testing package's os.Exit,
// and untraced code may call os.Exit itself. The runtime patched here calls
// a function rt installs at racefini's two places, for every status; rt
// waits only at status 0, as racefini runs only then, and finishes the
// trace (rt/exit.go, exitHook).

// exitMarks are racefini's places in proc.go, each with its text after
// the edit, the hook's call just before racefini's: at the end of
// runtime.main, and in os.Exit's os_beforeExit after the exit hooks ran.
var exitMarks = [][2]string{
	{"\tif raceenabled {\n\t\tracefini() // does not return\n\t}\n", "\tif racekitExitHook != nil {\n\t\tracekitExitHook(0)\n\t}\n\tif raceenabled {\n\t\tracefini() // does not return\n\t}\n"},
	{"\trunExitHooks(exitCode)\n\tif exitCode == 0 && raceenabled {\n\t\tracefini()\n\t}\n", "\trunExitHooks(exitCode)\n\tif racekitExitHook != nil {\n\t\tracekitExitHook(exitCode)\n\t}\n\tif exitCode == 0 && raceenabled {\n\t\tracefini()\n\t}\n"},
}

// exitFuncs is appended to proc.go.
const exitFuncs = `
// racekitExitHook is set by racekit's runtime (racekit.dev/rt, the
// racekit_exithook.go file racekit adds to it).
//
//go:linkname racekitExitHook
var racekitExitHook func(code int)
`

// rtExitFile is the file added to rt's copy with the exit hook.
const rtExitFile = `package rt

import _ "unsafe"

//go:linkname racekitExitHook runtime.racekitExitHook
var racekitExitHook func(code int)

var _ = func() bool {
	setExitHook = func(h func(code int)) { racekitExitHook = h }
	return true
}()
`

// exitPatch returns proc.go with the exit hook, or false when proc.go does
// not have racefini's two places as exitMarks expects them (then a test
// binary without racekit's TestMain exits at once, as before).
func exitPatch(proc string) (string, bool) {
	for _, m := range exitMarks {
		if strings.Count(proc, m[0]) != 1 {
			return "", false
		}
	}
	for _, m := range exitMarks {
		proc = strings.Replace(proc, m[0], m[1], 1)
	}
	return proc + exitFuncs, true
}

// The cleanup batch hook. Go's race detector orders each batch of
// cleanups after everything every goroutine did before it (racefingo, at
// the batch's start in runCleanups), and runs each cleanup of the batch in
// a race context of its own forked from there (raceEnterNewCtx): two
// cleanups of one batch race if nothing else orders them (its suite's
// TestRaceBetweenCleanups), and a cleanup of a later batch does not race
// with one of an earlier. rt sees a batch's start through a hook the
// runtime patched here calls where racefingo is (rt/gor.go, runCleanup).

// cleanupMark is the dequeue of a batch in runCleanups, after which the
// hook's call goes.
const cleanupMark = "\t\tb := gcCleanups.dequeue()\n"

const cleanupCall = "\t\tif racekitCleanupHook != nil {\n\t\t\tracekitCleanupHook()\n\t\t}\n"

// cleanupFuncs is appended to mcleanup.go.
const cleanupFuncs = `
// racekitCleanupHook is set by racekit's runtime (racekit.dev/rt, the
// racekit_cleanuphook.go file racekit adds to it).
//
//go:linkname racekitCleanupHook
var racekitCleanupHook func()
`

// rtCleanupFile is the file added to rt's copy with the cleanup hook.
const rtCleanupFile = `package rt

import _ "unsafe"

//go:linkname racekitCleanupHook runtime.racekitCleanupHook
var racekitCleanupHook func()

var _ = func() bool {
	setCleanupHook = func(h func()) { racekitCleanupHook = h }
	return true
}()
`

// The finalizer batch hook. Go's race detector orders each batch of
// finalizers after everything every goroutine did before it (racefingo,
// at the batch's start in runfinq) and runs the batch's finalizers one
// after the other in the finalizer goroutine's own race context: ordered
// with each other, not each after everything before it. rt sees a batch's
// start through a hook the runtime patched here calls after racefingo's
// place (rt/gor.go, finalizerBatch); without it rt runs each finalizer as
// a goroutine of its own, through reflect.MakeFunc, several times
// -race's cost per finalizer (pion/webrtc's
// TestSampleBuilderPacketUnreference waits 10 ms for 131072 of them).

// finalizerMark is racefingo's call in runfinq, after which the hook's
// call goes.
const finalizerMark = "\t\tif raceenabled {\n\t\t\tracefingo()\n\t\t}\n"

const finalizerCall = "\t\tif racekitFinalizerHook != nil {\n\t\t\tracekitFinalizerHook()\n\t\t}\n"

// finalizerFuncs is appended to mfinal.go.
const finalizerFuncs = `
// racekitFinalizerHook is set by racekit's runtime (racekit.dev/rt, the
// racekit_finalizerhook.go file racekit adds to it).
//
//go:linkname racekitFinalizerHook
var racekitFinalizerHook func()
`

// rtFinalizerFile is the file added to rt's copy with the finalizer hook.
const rtFinalizerFile = `package rt

import _ "unsafe"

//go:linkname racekitFinalizerHook runtime.racekitFinalizerHook
var racekitFinalizerHook func()

var _ = func() bool {
	setFinalizerHook = func(h func()) { racekitFinalizerHook = h }
	return true
}()
`

// finalizerPatch returns mfinal.go with the finalizer batch hook, or false
// when it does not have finalizerMark once (then each finalizer runs as a
// goroutine of its own, ordered after everything before it).
func finalizerPatch(mfinal string) (string, bool) {
	return batchHookPatch(mfinal, finalizerMark, finalizerCall, finalizerFuncs)
}

// cleanupPatch returns mcleanup.go with the cleanup batch hook, or false
// when it does not have cleanupMark once (then the cleanups of a batch run
// one after the other, each ordered after everything before it).
func cleanupPatch(mcleanup string) (string, bool) {
	return batchHookPatch(mcleanup, cleanupMark, cleanupCall, cleanupFuncs)
}

// batchHookPatch returns src with call inserted after mark and funcs
// appended, or false when src does not have mark exactly once.
func batchHookPatch(src, mark, call, funcs string) (string, bool) {
	if strings.Count(src, mark) != 1 {
		return "", false
	}
	return strings.Replace(src, mark, mark+call, 1) + funcs, true
}
