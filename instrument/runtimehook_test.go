package instrument

import (
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The installed toolchain's runtime takes the allocation hook's patch: each
// edit applies once, where racemalloc is called, and the g gets its guard.
func TestPatchRuntime(t *testing.T) {
	src := filepath.Join(runtime.GOROOT(), "src", "runtime")
	malloc, err := os.ReadFile(filepath.Join(src, "malloc.go"))
	if err != nil {
		t.Skip(err)
	}
	runtime2, err := os.ReadFile(filepath.Join(src, "runtime2.go"))
	if err != nil {
		t.Skip(err)
	}
	m, r, err := patchRuntime(string(malloc), string(runtime2))
	if err != nil {
		t.Fatalf("%s's runtime: %v", runtime.Version(), err)
	}
	if !strings.Contains(m, hookMarker+hookCall) || !strings.Contains(m, specializedMalloc+"false && ") || !strings.HasSuffix(m, hookFuncs) {
		t.Error("malloc.go: an edit is missing")
	}
	g := r[strings.Index(r, gStruct):]
	g = g[:strings.Index(g, "\n}\n")]
	if !strings.Contains(g, "racekitInHook bool") {
		t.Error("runtime2.go: g has no racekitInHook")
	}
	// A runtime of another shape is refused, saying which edit failed.
	if _, _, err := patchRuntime(strings.Replace(string(malloc), hookMarker, "", 1), string(runtime2)); err == nil || !strings.Contains(err.Error(), "racemalloc") {
		t.Errorf("without racemalloc's call: %v, want an error naming it", err)
	}
	if _, _, err := patchRuntime(string(malloc), strings.Replace(string(runtime2), gStruct, "type g2 struct {", 1)); err == nil || !strings.Contains(err.Error(), "type g struct") {
		t.Errorf("without type g: %v, want an error naming it", err)
	}
}

// The installed toolchain's runtime has the shape the stall check reads
// (e2e TestStall builds and runs it); a runtime without one of its marks
// is left alone, and a copy of it without one is refused.
func TestStallPatch(t *testing.T) {
	src := filepath.Join(runtime.GOROOT(), "src", "runtime")
	runtime2, err := os.ReadFile(filepath.Join(src, "runtime2.go"))
	if err != nil {
		t.Skip(err)
	}
	tb, ok := stallPatch(src, string(runtime2))
	if !ok || !strings.HasSuffix(tb, stallFuncs) || !strings.Contains(tb, "func isSystemGoroutine(") {
		t.Fatalf("%s's runtime: stall patch not applied", runtime.Version())
	}
	if strings.Count(tb, sysGoroutineCheck) != 1 || !strings.Contains(tb, sysGoroutineMark+sysGoroutineCheck) {
		t.Errorf("%s's runtime: isSystemGoroutine has no check for rt's goroutines", runtime.Version())
	}
	if _, ok := stallPatch(src, strings.Replace(string(runtime2), "waitReasonSyncWaitGroupWait", "waitReasonRenamed", -1)); ok {
		t.Error("runtime2.go without waitReasonSyncWaitGroupWait: patched, want left alone")
	}
	if _, ok := stallPatch(t.TempDir(), string(runtime2)); ok {
		t.Error("a runtime without proc.go: patched, want left alone")
	}
}

// The installed toolchain's proc.go takes the exit hook at racefini's two
// places (e2e TestExampleExitWait runs it); one without either is
// left alone.
func TestExitPatch(t *testing.T) {
	proc, err := os.ReadFile(filepath.Join(runtime.GOROOT(), "src", "runtime", "proc.go"))
	if err != nil {
		t.Skip(err)
	}
	p, ok := exitPatch(string(proc))
	if !ok {
		t.Fatalf("%s's runtime: exit patch not applied", runtime.Version())
	}
	if n := strings.Count(p, "racekitExitHook("); n != 2 {
		t.Errorf("%d calls of the hook, want 2", n)
	}
	for _, m := range exitMarks {
		if !strings.Contains(p, m[1]) {
			t.Errorf("edit missing: %q", m[1])
		}
	}
	if !strings.HasSuffix(p, exitFuncs) {
		t.Error("the hook's variable is missing")
	}
	for _, m := range exitMarks {
		if _, ok := exitPatch(strings.Replace(string(proc), m[0], "", 1)); ok {
			t.Errorf("proc.go without %q: patched, want left alone", m[0])
		}
	}
}

// The installed toolchain's runtime takes the channel hook's patch: each
// operation is renamed once and gets a wrapper of its old name (e2e's
// stdraces pipe tests build and run it); a runtime without one of the
// declarations is left alone.
func TestChanPatch(t *testing.T) {
	src := filepath.Join(runtime.GOROOT(), "src", "runtime")
	cg, err := os.ReadFile(filepath.Join(src, "chan.go"))
	if err != nil {
		t.Skip(err)
	}
	sg, err := os.ReadFile(filepath.Join(src, "select.go"))
	if err != nil {
		t.Skip(err)
	}
	mg, err := os.ReadFile(filepath.Join(src, "mgc.go"))
	if err != nil {
		t.Skip(err)
	}
	c, s, m, ok := chanPatch(string(cg), string(sg), string(mg))
	if !ok {
		t.Fatalf("%s's runtime: channel hook not applied", runtime.Version())
	}
	for _, f := range []struct{ name, text, suffix string }{{"chan.go", c, chanFuncs}, {"select.go", s, selectFuncs}} {
		if !strings.HasSuffix(f.text, f.suffix) {
			t.Errorf("%s: the wrappers are missing", f.name)
		}
		for _, r := range chanRenames[f.name] {
			// The old declaration is the wrapper's, in the suffix.
			if strings.Count(f.text, r[0]) != 1 || !strings.Contains(f.suffix, r[0]) || strings.Count(f.text, r[1]) != 1 {
				t.Errorf("%s: %q not renamed once, or without its wrapper", f.name, r[0])
			}
		}
	}
	if !strings.Contains(m, gcStartRecv[1]) {
		t.Error("mgc.go: gcStart's receive is not guarded")
	}
	if _, _, _, ok := chanPatch(strings.Replace(string(cg), "func closechan(c *hchan) {", "func closechan2(c *hchan) {", 1), string(sg), string(mg)); ok {
		t.Error("a chan.go without closechan was patched")
	}
	if _, _, _, ok := chanPatch(string(cg), string(sg), strings.Replace(string(mg), gcStartRecv[0], "", 1)); ok {
		t.Error("an mgc.go without gcStart's receive was patched")
	}
}

// The installed toolchain's sync/waitgroup.go takes the WaitGroup hook's
// patch: the decrement's call once, Wait's two returns, the variable; a
// copy without one of the texts is left alone.
func TestWGPatch(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(runtime.GOROOT(), "src", "sync", "waitgroup.go"))
	if err != nil {
		t.Skip(err)
	}
	w, ok := wgPatch(string(src))
	if !ok {
		t.Fatalf("%s's sync/waitgroup.go: WaitGroup hook not applied", runtime.Version())
	}
	if n := strings.Count(w, "racekitSyncHook(unsafe.Pointer(wg), 0)"); n != 1 {
		t.Errorf("the decrement's hook %d times, want 1", n)
	}
	if n := strings.Count(w, "racekitSyncHook(unsafe.Pointer(wg), 1)"); n != 2 {
		t.Errorf("Wait's hook %d times, want 2", n)
	}
	if n := strings.Count(w, wgSkip); n != 2 {
		t.Errorf("the atomics of Add and Wait skipped %d times, want 2", n)
	}
	if !strings.HasSuffix(w, wgFuncs) {
		t.Error("the hook's variable is missing")
	}
	if _, ok := wgPatch(strings.Replace(string(src), "race.Acquire(unsafe.Pointer(wg))", "", 1)); ok {
		t.Error("a waitgroup.go with one of Wait's acquires missing was patched")
	}
}

// The installed toolchain's syscall/syscall_unix.go takes the system
// calls' hook: after Read's and Pread's calls, before Write's, Pwrite's
// and Sendfile's, each once, and the variable; a copy without one of the
// texts is left alone. (e2e's stdraces syscallio_test.go runs it.)
func TestIOSyscallPatch(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(runtime.GOROOT(), "src", "syscall", "syscall_unix.go"))
	if err != nil {
		t.Skip(err)
	}
	p, ok := ioSyscallPatch(string(src))
	if !ok {
		t.Fatalf("%s's syscall/syscall_unix.go: I/O hook not applied", runtime.Version())
	}
	if n := strings.Count(p, "racekitIOHook(fd, p, n, 1)"); n != 2 {
		t.Errorf("the reads' hook %d times, want 2", n)
	}
	if n := strings.Count(p, "racekitIOHook(fd, nil, 0, 0)") + strings.Count(p, "racekitIOHook(outfd, nil, 0, 0)"); n != 3 {
		t.Errorf("the writes' hook %d times, want 3", n)
	}
	for _, f := range []string{"Read", "Pread"} {
		// The hook after the system call, before the race build's acquire.
		body := p[strings.Index(p, "\nfunc "+f+"("):]
		if h, a := strings.Index(body, "racekitIOHook("), strings.Index(body, "race.Acquire(unsafe.Pointer(&ioSync))"); h < 0 || a < 0 || h > a {
			t.Errorf("%s: the hook at %d, the race build's acquire at %d", f, h, a)
		}
	}
	if !strings.HasSuffix(p, ioSyscallFuncs) {
		t.Error("the hook's variable is missing")
	}
	if _, ok := ioSyscallPatch(strings.Replace(string(src), "n, err = pread(fd, p, offset)", "n, err = pread(fd, p, offset) ", 1)); ok {
		t.Error("a syscall_unix.go with Pread's call changed was patched")
	}
	// The patched file still parses.
	if _, err := parser.ParseFile(token.NewFileSet(), "syscall_unix.go", p, 0); err != nil {
		t.Error(err)
	}
}

// The installed toolchain's internal/poll takes the descriptors' hook:
// each of fdMutex's five CompareAndSwaps of its state word goes through
// racekitCAS, each of the three Loads that find it closed reports itself,
// and the file still parses; a copy with one CompareAndSwap changed, or
// an FD whose first field is not its fdMutex, is left alone. (e2e's
// stdraces fdmutex_test.go runs it.)
func TestFDMutexPatch(t *testing.T) {
	dir := filepath.Join(runtime.GOROOT(), "src", "internal", "poll")
	src, err1 := os.ReadFile(filepath.Join(dir, "fd_mutex.go"))
	fdUnix, err2 := os.ReadFile(filepath.Join(dir, "fd_unix.go"))
	if err1 != nil || err2 != nil {
		t.Skip(err1, err2)
	}
	p, ok := fdMutexPatch(string(src), string(fdUnix))
	if !ok {
		t.Fatalf("%s's internal/poll/fd_mutex.go: descriptors' hook not applied", runtime.Version())
	}
	if n := strings.Count(p, "racekitCAS(mu, old, new)"); n != 5 {
		t.Errorf("racekitCAS called %d times, want 5", n)
	}
	if n := strings.Count(p, "atomic.CompareAndSwapUint64(&mu.state, old, new)"); n != 2 {
		t.Errorf("%d CompareAndSwaps left, want racekitCAS's 2", n)
	}
	if n := strings.Count(p, "racekitClosed(mu)\n\t\t\treturn false"); n != 3 {
		t.Errorf("the closed Loads reported %d times, want 3", n)
	}
	if _, err := parser.ParseFile(token.NewFileSet(), "fd_mutex.go", p, 0); err != nil {
		t.Error(err)
	}
	changed := strings.Replace(string(src), "atomic.CompareAndSwapUint64(&mu.state, old, new)", "atomic.CompareAndSwapUint64(&mu.state, old, next)", 1)
	if _, ok := fdMutexPatch(changed, string(fdUnix)); ok {
		t.Error("an fd_mutex.go with a CompareAndSwap changed was patched")
	}
	moved := strings.Replace(string(fdUnix), "\tfdmu fdMutex\n", "\tpad  int\n\tfdmu fdMutex\n", 1)
	if _, ok := fdMutexPatch(string(src), moved); ok {
		t.Error("patched although the FD's fdMutex is not its first field")
	}
}

// The installed toolchain's runtime takes the cleanup batch hook: its call
// right after runCleanups dequeues a batch, before racefingo's (e2e's
// stdraces TestRaceBetweenCleanupsOfOneBatch and
// TestNoRaceCleanupsOfTwoBatches run it); a runtime without the dequeue's
// line is left alone.
func TestCleanupPatch(t *testing.T) {
	mc, err := os.ReadFile(filepath.Join(runtime.GOROOT(), "src", "runtime", "mcleanup.go"))
	if err != nil {
		t.Skip(err)
	}
	p, ok := cleanupPatch(string(mc))
	if !ok {
		t.Fatalf("%s's runtime: cleanup patch not applied", runtime.Version())
	}
	call, fingo := strings.Index(p, cleanupMark+cleanupCall), strings.Index(p, "racefingo()")
	if call < 0 || fingo < call || strings.Count(p, "racekitCleanupHook()") != 1 {
		t.Errorf("the hook's call is not once, right after the dequeue and before racefingo")
	}
	if !strings.HasSuffix(p, cleanupFuncs) {
		t.Error("the hook's variable is missing")
	}
	if _, ok := cleanupPatch(strings.Replace(string(mc), cleanupMark, "", 1)); ok {
		t.Error("mcleanup.go without the dequeue: patched, want left alone")
	}
}

// The installed toolchain's runtime takes the finalizer batch hook: its
// call right after racefingo's in runfinq, once (e2e's stdraces
// TestNoRaceFinalizersInTurn and TestRaceFinalizerInTurn run it); a
// runtime without racefingo's call there is left alone.
func TestFinalizerPatch(t *testing.T) {
	mf, err := os.ReadFile(filepath.Join(runtime.GOROOT(), "src", "runtime", "mfinal.go"))
	if err != nil {
		t.Skip(err)
	}
	p, ok := finalizerPatch(string(mf))
	if !ok {
		t.Fatalf("%s's runtime: finalizer patch not applied", runtime.Version())
	}
	call, loop := strings.Index(p, finalizerMark+finalizerCall), strings.Index(p, "for fb != nil {")
	if call < 0 || loop < call || strings.Count(p, "racekitFinalizerHook()") != 1 {
		t.Errorf("the hook's call is not once, right after racefingo and before the batch's loop")
	}
	if !strings.HasSuffix(p, finalizerFuncs) {
		t.Error("the hook's variable is missing")
	}
	if _, ok := finalizerPatch(strings.Replace(string(mf), finalizerMark, "", 1)); ok {
		t.Error("mfinal.go without racefingo's call: patched, want left alone")
	}
}

// The installed toolchain's package sync takes the mutex and map hooks'
// patch: each lock method and sync.Map method renamed once and wrapped,
// the inner locks of RWMutex, Once and Pool unhooked, unsafe imported
// where the wrappers need it; a copy without one of the texts is left
// alone.
func TestLockPatch(t *testing.T) {
	dir := filepath.Join(runtime.GOROOT(), "src", "sync")
	src := map[string]string{}
	for _, name := range []string{"mutex.go", "rwmutex.go", "once.go", "pool.go", "map.go"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Skip(err)
		}
		src[name] = string(b)
	}
	out, ok := lockPatch(src)
	if !ok {
		t.Fatalf("%s's package sync: mutex hook not applied", runtime.Version())
	}
	for name, decls := range lockRenames {
		for _, d := range decls {
			// The old declaration is the wrapper's, in the suffix.
			if strings.Count(out[name], d) != 1 || !strings.Contains(lockFuncs[name], d) || strings.Count(out[name], lockRenamed(d)) != 1 {
				t.Errorf("%s: %q not renamed once, or without its wrapper", name, d)
			}
		}
	}
	for _, want := range []struct {
		file, text string
		n          int
	}{
		{"mutex.go", "racekitSyncHook(unsafe.Pointer(m), 2)", 2},
		{"mutex.go", "racekitSyncHook(unsafe.Pointer(m), 3)", 1},
		{"mutex.go", "\t\"unsafe\"\n", 1},
		{"rwmutex.go", "h(unsafe.Pointer(rw), 4)", 2},
		{"rwmutex.go", "h(unsafe.Pointer(rw), 6)", 2},
		{"rwmutex.go", "h(nil, 8)", 6},
		{"rwmutex.go", "h(nil, 9)", 6},
		{"rwmutex.go", "rw.w.Lock()", 0},
		{"rwmutex.go", "rw.w.mu.Unlock()", 2},
		{"once.go", "o.m.mu.Lock()", 1},
		{"pool.go", "allPoolsMu.mu.Lock()", 1},
		{"pool.go", "racekitSyncHook(nil, 8)", 2},
		{"pool.go", "racekitSyncHook(nil, 9)", 2},
		{"map.go", "h(unsafe.Pointer(m), 0)", 9},
		{"map.go", "h(unsafe.Pointer(m), 3)", 1},
		{"map.go", "\t\"unsafe\"\n", 1},
	} {
		if n := strings.Count(out[want.file], want.text); n != want.n {
			t.Errorf("%s: %q %d times, want %d", want.file, want.text, n, want.n)
		}
	}
	bad := maps.Clone(src)
	bad["once.go"] = strings.Replace(bad["once.go"], "o.m.Lock()", "o.m.Lock(); ", 1)
	if _, ok := lockPatch(bad); ok {
		t.Error("a once.go without its Lock's text was patched")
	}
}

// The installed toolchain's sync/atomic/value.go takes the Value hook's
// patch: each method renamed once and wrapped; a copy without one of them
// is left alone.
func TestValuePatch(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(runtime.GOROOT(), "src", "sync", "atomic", "value.go"))
	if err != nil {
		t.Skip(err)
	}
	p, ok := valuePatch(string(src))
	if !ok {
		t.Fatalf("%s's sync/atomic/value.go: Value hook not applied", runtime.Version())
	}
	for _, d := range valueRenames {
		if strings.Count(p, d) != 1 || !strings.Contains(valueFuncs, d) || strings.Count(p, lockRenamed(d)) != 1 {
			t.Errorf("%q not renamed once, or without its wrapper", d)
		}
	}
	if !strings.HasSuffix(p, valueFuncs) {
		t.Error("the wrappers are missing")
	}
	if _, ok := valuePatch(strings.Replace(string(src), "func (v *Value) Swap(new any) (old any) {", "func (v *Value) Swap(nw any) (old any) {", 1)); ok {
		t.Error("a value.go without Swap's declaration was patched")
	}
}

// The installed toolchain's sync/atomic/type.go takes the typed hook's
// patch: every Load, Store, Swap, CompareAndSwap, Add, And and Or of the
// seven types renamed once and wrapped once, Loads recorded after a second
// load, stores and read-modify-writes bracketed; a copy without one of
// the methods every type has is left alone.
func TestTypedPatch(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(runtime.GOROOT(), "src", "sync", "atomic", "type.go"))
	if err != nil {
		t.Skip(err)
	}
	p, ok := typedPatch(string(src))
	if !ok {
		t.Fatalf("%s's sync/atomic/type.go: typed hook not applied", runtime.Version())
	}
	ms := typedMethod.FindAllStringSubmatch(string(src), -1)
	// 7 types × Load, Store, Swap, CompareAndSwap, and Add, And, Or for
	// the five integer types (Go 1.23 on).
	if len(ms) != 7*4+5*3 {
		t.Errorf("%d methods matched, want %d", len(ms), 7*4+5*3)
	}
	for _, m := range ms {
		if strings.Count(p, m[0]) != 1 || strings.Count(p, lockRenamed(m[0])) != 1 {
			t.Errorf("%q not renamed once, or without its wrapper", m[0])
		}
	}
	for _, want := range []struct {
		text string
		n    int
	}{
		{"h(unsafe.Pointer(x), 0)", 7},         // Loads
		{"h(unsafe.Pointer(x), 1)", 7},         // Stores
		{"h(unsafe.Pointer(x), 2)", 7*2 + 5*3}, // Swap, CompareAndSwap, Add, And, Or
		{"h(unsafe.Pointer(x), 6)", 7},         // failed CompareAndSwaps
		{"var racekitTypedHook func(x unsafe.Pointer, op uint8) bool", 1},
	} {
		if n := strings.Count(p, want.text); n != want.n {
			t.Errorf("%q %d times, want %d", want.text, n, want.n)
		}
	}
	if _, ok := typedPatch(strings.Replace(string(src), "func (x *Uintptr) Swap(", "func (x *Uintptr) swap(", 1)); ok {
		t.Error("a type.go without Uintptr's Swap was patched")
	}
}
