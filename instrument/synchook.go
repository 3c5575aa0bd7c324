package instrument

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// The standard library's WaitGroups. Go's race detector instruments
// package sync: every wg.Done (Add with a negative delta) is ordered
// before the return of a wg.Wait, also when both are inside std or an
// untraced dependency (httptest.Server.Close waits for the connections
// its handlers ran on: held-out minio-go's TestComposeObjectParallelPartFailure
// read, after Close, a counter a handler had written under a lock the
// test did not take, a false race under racekit until this hook). rt sees
// the WaitGroups of traced code only. The sync package patched here calls
// a function rt installs where the race build has its annotations
// (ReleaseMerge in Add, Acquire when Wait returns), and rt records them as
// a release and an acquire of the WaitGroup, the objects traced code's
// WaitGroup hooks use (rt/synchook.go). Only when sync/waitgroup.go has
// the exact text below.

// wgEdits are the edits of sync/waitgroup.go: old text, new text, and
// how many times the old text occurs.
var wgEdits = []textEdit{
	{
		"func (wg *WaitGroup) Add(delta int) {\n\tif race.Enabled {\n",
		"func (wg *WaitGroup) Add(delta int) {\n\tif delta < 0 && racekitSyncHook != nil {\n\t\tracekitSyncHook(unsafe.Pointer(wg), 0)\n\t}\n" + wgSkip + "\tif race.Enabled {\n",
		1,
	},
	{
		"func (wg *WaitGroup) Wait() {\n\tif race.Enabled {\n",
		"func (wg *WaitGroup) Wait() {\n" + wgSkip + "\tif race.Enabled {\n",
		1,
	},
	{
		"\t\t\t\trace.Acquire(unsafe.Pointer(wg))\n\t\t\t}\n",
		"\t\t\t\trace.Acquire(unsafe.Pointer(wg))\n\t\t\t}\n\t\t\tif racekitSyncHook != nil {\n\t\t\t\tracekitSyncHook(unsafe.Pointer(wg), 1)\n\t\t\t}\n",
		2,
	},
}

// wgSkip brackets Add and Wait: their atomics, which the race build does
// not see (race.Disable), are skipped between ops 8 and 9
// (rt/atomichook.go).
const wgSkip = "\tif racekitSyncHook != nil {\n\t\tracekitSyncHook(nil, 8)\n\t\tdefer racekitSyncHook(nil, 9)\n\t}\n"

// wgFuncs is appended to sync/waitgroup.go.
const wgFuncs = `
// racekitSyncHook is set by racekit's runtime (racekit.dev/rt, the
// racekit_synchook.go file racekit adds to it): op 0 a WaitGroup's
// decrement, 1 the return of its Wait.
//
//go:linkname racekitSyncHook
var racekitSyncHook func(p unsafe.Pointer, op uint8)

// racekitMapHook is set by racekit's runtime too: a sync.Map's methods
// call it when map.go has racekit's wrappers (mapFuncs).
//
//go:linkname racekitMapHook
var racekitMapHook func(m unsafe.Pointer, op uint8) bool
`

// rtSyncHookFile is the file added to rt's copy with the WaitGroup hook.
const rtSyncHookFile = `package rt

import "unsafe"

//go:linkname racekitSyncHook sync.racekitSyncHook
var racekitSyncHook func(p unsafe.Pointer, op uint8)

//go:linkname racekitMapHook sync.racekitMapHook
var racekitMapHook func(m unsafe.Pointer, op uint8) bool

var _ = func() bool {
	setSyncHook = func(h func(p unsafe.Pointer, op uint8)) { racekitSyncHook = h }
	setMapHook = func(h func(m unsafe.Pointer, op uint8) bool) { racekitMapHook = h }
	return true
}()
`

// wgPatch returns sync/waitgroup.go with the hook's calls, or false when
// it lacks a text it edits (then rt sees traced code's WaitGroups only).
func wgPatch(src string) (string, bool) {
	src, ok := applyEdits(src, wgEdits)
	if !ok {
		return "", false
	}
	return src + wgFuncs, true
}

// textEdit is an edit of a toolchain file: old, which must occur exactly
// n times, replaced by new.
type textEdit struct {
	old, new string
	n        int
}

// editsFit reports whether each of edits' old texts occurs in src exactly
// its n times.
func editsFit(src string, edits []textEdit) bool {
	for _, e := range edits {
		if strings.Count(src, e.old) != e.n {
			return false
		}
	}
	return true
}

// applyEdits returns src with edits made, or false when they do not fit
// (editsFit): then the file is left as it is.
func applyEdits(src string, edits []textEdit) (string, bool) {
	if !editsFit(src, edits) {
		return "", false
	}
	for _, e := range edits {
		src = strings.ReplaceAll(src, e.old, e.new)
	}
	return src, true
}

// The standard library's mutexes. Go's race detector sees every Mutex and
// RWMutex operation of std and untraced code: an Unlock is ordered before
// the next Lock, an RWMutex's Unlock before every later RLock and Lock,
// and an RUnlock before the next Lock. rt saw only traced code's: a
// program's write, then an expvar.Map's Set or an os.Setenv (which lock
// inside std), and another goroutine's read after the Do or Getenv that
// locked the same mutex were a false race (e2e stdraces
// TestNoRaceExpvarMapSet, TestNoRaceSetenvGetenv). The patch
// renames Mutex's and RWMutex's lock methods and wraps each in a call of
// racekitSyncHook (ops 2-7, rt/synchook.go names them) after the lock is
// taken and before it is given back. RWMutex's own writer Mutex, Once's
// and Pool's are taken through the inner lock, unhooked: the race build
// does not annotate them either (RWMutex's and Pool's run under
// race.Disable, and Once orders through its done word, which rt does not
// see in untraced code). rt skips the operations its hooks record for
// traced code and its own (rt/ownmutex.go). Only with the WaitGroup
// patch, which declares the hook, and only when every text below is there.

// lockRenames are the lock and sync.Map methods the patch renames, by
// file; each old name gets a wrapper (lockFuncs).
var lockRenames = map[string][]string{
	"mutex.go":   {"func (m *Mutex) Lock() {", "func (m *Mutex) TryLock() bool {", "func (m *Mutex) Unlock() {"},
	"map.go":     {"func (m *Map) Load(key any) (value any, ok bool) {", "func (m *Map) Store(key, value any) {", "func (m *Map) Clear() {", "func (m *Map) LoadOrStore(key, value any) (actual any, loaded bool) {", "func (m *Map) LoadAndDelete(key any) (value any, loaded bool) {", "func (m *Map) Delete(key any) {", "func (m *Map) Swap(key, value any) (previous any, loaded bool) {", "func (m *Map) CompareAndSwap(key, old, new any) (swapped bool) {", "func (m *Map) CompareAndDelete(key, old any) (deleted bool) {", "func (m *Map) Range(f func(key, value any) bool) {"},
	"rwmutex.go": {"func (rw *RWMutex) RLock() {", "func (rw *RWMutex) TryRLock() bool {", "func (rw *RWMutex) RUnlock() {", "func (rw *RWMutex) Lock() {", "func (rw *RWMutex) TryLock() bool {", "func (rw *RWMutex) Unlock() {"},
}

// lockInner are the Mutex operations inside package sync that the patch
// sends to the unhooked inner lock, by file: old text, new text, count;
// and the brackets (ops 8 and 9) around the part of Pool's Put and Get
// between race.Disable and race.Enable, whose atomics the race build does
// not see (rt/atomichook.go).
var lockInner = map[string][]textEdit{
	"rwmutex.go": {{"rw.w.Lock()", "rw.w.mu.Lock()", 1}, {"rw.w.TryLock()", "rw.w.mu.TryLock()", 1}, {"rw.w.Unlock()", "rw.w.mu.Unlock()", 2}},
	"once.go":    {{"\to.m.Lock()\n", "\to.m.mu.Lock()\n", 1}, {"\tdefer o.m.Unlock()\n", "\tdefer o.m.mu.Unlock()\n", 1}},
	"pool.go": {
		{"\tallPoolsMu.Lock()\n", "\tallPoolsMu.mu.Lock()\n", 1}, {"\tdefer allPoolsMu.Unlock()\n", "\tdefer allPoolsMu.mu.Unlock()\n", 1},
		{"\t\trace.Disable()\n\t}\n\tl, _ := p.pin()\n", "\t\trace.Disable()\n\t}\n" + poolSkipEnter + "\tl, _ := p.pin()\n", 1},
		{"\t\trace.Disable()\n\t}\n\tl, pid := p.pin()\n", "\t\trace.Disable()\n\t}\n" + poolSkipEnter + "\tl, pid := p.pin()\n", 1},
		{"\truntime_procUnpin()\n\tif race.Enabled {\n\t\trace.Enable()\n", "\truntime_procUnpin()\n" + poolSkipExit + "\tif race.Enabled {\n\t\trace.Enable()\n", 2},
	},
}

const (
	poolSkipEnter = "\tif racekitSyncHook != nil {\n\t\tracekitSyncHook(nil, 8)\n\t}\n"
	poolSkipExit  = "\tif racekitSyncHook != nil {\n\t\tracekitSyncHook(nil, 9)\n\t}\n"
)

// lockRenamed is the new name of a renamed method: racekit before its name.
func lockRenamed(decl string) string {
	i := strings.Index(decl, ") ") + 2
	return decl[:i] + "racekit" + decl[i:]
}

// lockFuncs is appended to mutex.go, rwmutex.go and map.go (mapFuncs):
// the wrappers. A lock calls the hook after it took the lock, an unlock
// before it gives it back, so that the trace has the release before the
// acquire it orders.
var lockFuncs = map[string]string{
	"mutex.go": `
// racekit's wrappers (racekitSyncHook: waitgroup.go).

func (m *Mutex) Lock() {
	m.racekitLock()
	if racekitSyncHook != nil {
		racekitSyncHook(unsafe.Pointer(m), 2)
	}
}

func (m *Mutex) TryLock() bool {
	if !m.racekitTryLock() {
		return false
	}
	if racekitSyncHook != nil {
		racekitSyncHook(unsafe.Pointer(m), 2)
	}
	return true
}

func (m *Mutex) Unlock() {
	if racekitSyncHook != nil {
		racekitSyncHook(unsafe.Pointer(m), 3)
	}
	m.racekitUnlock()
}
`,
	"map.go": mapFuncs,
	"rwmutex.go": `
// racekit's wrappers (racekitSyncHook: waitgroup.go). The atomics of the
// real methods, which the race build does not see (race.Disable), are
// skipped between ops 8 and 9.

func (rw *RWMutex) RLock() {
	h := racekitSyncHook
	if h == nil {
		rw.racekitRLock()
		return
	}
	h(nil, 8)
	rw.racekitRLock()
	h(nil, 9)
	h(unsafe.Pointer(rw), 4)
}

func (rw *RWMutex) TryRLock() bool {
	h := racekitSyncHook
	if h == nil {
		return rw.racekitTryRLock()
	}
	h(nil, 8)
	ok := rw.racekitTryRLock()
	h(nil, 9)
	if ok {
		h(unsafe.Pointer(rw), 4)
	}
	return ok
}

func (rw *RWMutex) RUnlock() {
	h := racekitSyncHook
	if h == nil {
		rw.racekitRUnlock()
		return
	}
	h(unsafe.Pointer(rw), 5)
	h(nil, 8)
	rw.racekitRUnlock()
	h(nil, 9)
}

func (rw *RWMutex) Lock() {
	h := racekitSyncHook
	if h == nil {
		rw.racekitLock()
		return
	}
	h(nil, 8)
	rw.racekitLock()
	h(nil, 9)
	h(unsafe.Pointer(rw), 6)
}

func (rw *RWMutex) TryLock() bool {
	h := racekitSyncHook
	if h == nil {
		return rw.racekitTryLock()
	}
	h(nil, 8)
	ok := rw.racekitTryLock()
	h(nil, 9)
	if ok {
		h(unsafe.Pointer(rw), 6)
	}
	return ok
}

func (rw *RWMutex) Unlock() {
	h := racekitSyncHook
	if h == nil {
		rw.racekitUnlock()
		return
	}
	h(unsafe.Pointer(rw), 7)
	h(nil, 8)
	rw.racekitUnlock()
	h(nil, 9)
}
`,
}

// lockPatch returns package sync's files by name (mutex.go, rwmutex.go,
// once.go, pool.go, map.go) with the mutex and map hooks, or false when
// one lacks a text it edits (then rt sees traced code's mutexes and maps
// only, as before). mutex.go and map.go get an import of unsafe.
func lockPatch(files map[string]string) (map[string]string, bool) {
	for name, decls := range lockRenames {
		for _, d := range decls {
			if strings.Count(files[name], d) != 1 {
				return nil, false
			}
		}
	}
	for name, es := range lockInner {
		if !editsFit(files[name], es) {
			return nil, false
		}
	}
	out := map[string]string{}
	for name, src := range files {
		for _, d := range lockRenames[name] {
			src = strings.Replace(src, d, lockRenamed(d), 1)
		}
		for _, e := range lockInner[name] {
			src = strings.ReplaceAll(src, e.old, e.new)
		}
		src += lockFuncs[name]
		out[name] = src
	}
	for _, name := range []string{"mutex.go", "map.go"} {
		m, ok := withUnsafe(out[name])
		if !ok {
			return nil, false
		}
		out[name] = m
	}
	return out, true
}

// withUnsafe returns src with "unsafe" imported.
func withUnsafe(src string) (string, bool) {
	if strings.Contains(src, "\t\"unsafe\"\n") || strings.Contains(src, "import \"unsafe\"\n") {
		return src, true
	}
	const open = "\nimport (\n"
	if strings.Count(src, open) != 1 {
		return "", false
	}
	return strings.Replace(src, open, open+"\t\"unsafe\"\n", 1), true
}

// addLockPatch adds to files the patched mutex.go, rwmutex.go, once.go,
// pool.go and map.go of package sync in dir, when all take lockPatch.
func addLockPatch(dir string, files map[string][]byte) bool {
	src := map[string]string{}
	for _, name := range []string{"mutex.go", "rwmutex.go", "once.go", "pool.go", "map.go"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return false
		}
		src[name] = string(b)
	}
	out, ok := lockPatch(src)
	if !ok {
		return false
	}
	for name, text := range out {
		files[filepath.Join(dir, name)] = []byte(text)
	}
	return true
}

// sync.Map's methods in untraced code. Go's race detector sees the atomic
// operations inside a sync.Map: a Store is ordered before the Load that
// finds its value (mime.AddExtensionType, then TypeByExtension on another
// goroutine, e2e stdraces TestNoRaceMimeAddExtensionType). rt records
// traced code's sync.Map methods as atomic operations on the map as a
// whole (rt/syncatomic.go); the wrappers below let rt record untraced
// code's the same way: op 0 before the method (rt reports whether it
// records it; then it holds the map's stripe until the end), 1 after one
// that only read, 2 after one that wrote, 3 before a Range (whether rt
// records its visits), 4 at each visit. A method that panics (a key that
// is not comparable) still ends.
const mapFuncs = `
// racekit's wrappers (racekitMapHook: waitgroup.go).

func (m *Map) Load(key any) (value any, ok bool) {
	if h := racekitMapHook; h != nil && h(unsafe.Pointer(m), 0) {
		defer h(unsafe.Pointer(m), 1)
	}
	return m.racekitLoad(key)
}

func (m *Map) Store(key, value any) {
	if h := racekitMapHook; h != nil && h(unsafe.Pointer(m), 0) {
		defer h(unsafe.Pointer(m), 2)
	}
	m.racekitStore(key, value)
}

func (m *Map) Clear() {
	if h := racekitMapHook; h != nil && h(unsafe.Pointer(m), 0) {
		defer h(unsafe.Pointer(m), 2)
	}
	m.racekitClear()
}

func (m *Map) LoadOrStore(key, value any) (actual any, loaded bool) {
	if h := racekitMapHook; h != nil && h(unsafe.Pointer(m), 0) {
		defer func() {
			if loaded {
				h(unsafe.Pointer(m), 1)
			} else {
				h(unsafe.Pointer(m), 2)
			}
		}()
	}
	return m.racekitLoadOrStore(key, value)
}

func (m *Map) LoadAndDelete(key any) (value any, loaded bool) {
	if h := racekitMapHook; h != nil && h(unsafe.Pointer(m), 0) {
		defer h(unsafe.Pointer(m), 2)
	}
	return m.racekitLoadAndDelete(key)
}

func (m *Map) Delete(key any) {
	if h := racekitMapHook; h != nil && h(unsafe.Pointer(m), 0) {
		defer h(unsafe.Pointer(m), 2)
	}
	m.racekitDelete(key)
}

func (m *Map) Swap(key, value any) (previous any, loaded bool) {
	if h := racekitMapHook; h != nil && h(unsafe.Pointer(m), 0) {
		defer h(unsafe.Pointer(m), 2)
	}
	return m.racekitSwap(key, value)
}

func (m *Map) CompareAndSwap(key, old, new any) (swapped bool) {
	if h := racekitMapHook; h != nil && h(unsafe.Pointer(m), 0) {
		defer h(unsafe.Pointer(m), 2)
	}
	return m.racekitCompareAndSwap(key, old, new)
}

func (m *Map) CompareAndDelete(key, old any) (deleted bool) {
	if h := racekitMapHook; h != nil && h(unsafe.Pointer(m), 0) {
		defer h(unsafe.Pointer(m), 2)
	}
	return m.racekitCompareAndDelete(key, old)
}

func (m *Map) Range(f func(key, value any) bool) {
	h := racekitMapHook
	if h == nil || !h(unsafe.Pointer(m), 3) {
		m.racekitRange(f)
		return
	}
	m.racekitRange(func(key, value any) bool {
		h(unsafe.Pointer(m), 4)
		return f(key, value)
	})
}
`

// atomic.Value's methods in untraced code (rt/valuehook.go): an
// expvar.String's Set, then another goroutine's read after the Value that
// saw it, is ordered under go test -race, which sees the atomic operations
// inside a Value. The patch renames Load, Store, Swap and CompareAndSwap in
// sync/atomic/value.go and wraps each with rt's hook: op 1 or 2 before a
// store or a read-modify-write, op 0 after a load (rt reports whether it
// records it; then it holds the Value's stripe until the end, and a load
// is done again under it: rt records a Load only when a store came since
// the goroutine's last), 3, 4, 5 at the end, 6 after a CompareAndSwap that
// failed. A method that panics (a nil or inconsistently typed value) still
// ends.
var valueRenames = []string{
	"func (v *Value) Load() (val any) {",
	"func (v *Value) Store(val any) {",
	"func (v *Value) Swap(new any) (old any) {",
	"func (v *Value) CompareAndSwap(old, new any) (swapped bool) {",
}

// valueFuncs is appended to sync/atomic/value.go.
const valueFuncs = `
// racekitValueHook is set by racekit's runtime (racekit.dev/rt, the
// racekit_valuehook.go file racekit adds to it).
//
//go:linkname racekitValueHook
var racekitValueHook func(v unsafe.Pointer, op uint8) bool

func (v *Value) Load() (val any) {
	val = v.racekitLoad()
	if h := racekitValueHook; h != nil && h(unsafe.Pointer(v), 0) {
		val = v.racekitLoad()
		h(unsafe.Pointer(v), 3)
	}
	return val
}

func (v *Value) Store(val any) {
	if h := racekitValueHook; h != nil && h(unsafe.Pointer(v), 1) {
		defer h(unsafe.Pointer(v), 4)
	}
	v.racekitStore(val)
}

func (v *Value) Swap(new any) (old any) {
	if h := racekitValueHook; h != nil && h(unsafe.Pointer(v), 2) {
		defer h(unsafe.Pointer(v), 5)
	}
	return v.racekitSwap(new)
}

func (v *Value) CompareAndSwap(old, new any) (swapped bool) {
	if h := racekitValueHook; h != nil && h(unsafe.Pointer(v), 2) {
		defer func() {
			if swapped {
				h(unsafe.Pointer(v), 5)
			} else {
				h(unsafe.Pointer(v), 6)
			}
		}()
	}
	return v.racekitCompareAndSwap(old, new)
}
`

// rtValueHookFile is the file added to rt's copy with the Value hook.
const rtValueHookFile = `package rt

import "unsafe"

//go:linkname racekitValueHook sync/atomic.racekitValueHook
var racekitValueHook func(v unsafe.Pointer, op uint8) bool

var _ = func() bool {
	setValueHook = func(h func(v unsafe.Pointer, op uint8) bool) { racekitValueHook = h }
	return true
}()
`

// valuePatch returns sync/atomic/value.go with the Value hook, or false
// when it lacks a text it edits (then rt sees traced code's Values only).
func valuePatch(src string) (string, bool) {
	for _, d := range valueRenames {
		if strings.Count(src, d) != 1 {
			return "", false
		}
	}
	if !strings.Contains(src, "\t\"unsafe\"\n") {
		return "", false
	}
	for _, d := range valueRenames {
		src = strings.Replace(src, d, lockRenamed(d), 1)
	}
	return src + valueFuncs, true
}

// addValuePatch adds to files the patched sync/atomic/value.go of the
// toolchain at goroot and rt's file for its hook, when it takes
// valuePatch.
func addValuePatch(goroot, rtDir string, files map[string][]byte) {
	name := filepath.Join(goroot, "src", "sync", "atomic", "value.go")
	b, err := os.ReadFile(name)
	if err != nil {
		return
	}
	if p, ok := valuePatch(string(b)); ok {
		files[name] = []byte(p)
		files[filepath.Join(rtDir, "rt", "racekit_valuehook.go")] = []byte(rtValueHookFile)
	}
}

// The typed atomics of untraced code (rt/atomichook.go): an
// expvar.Int's Add, slog.SetDefault's Pointer, a sync.Once's done flag,
// each then read on another goroutine, are ordered under go test -race,
// which sees the atomic operations of std. The patch renames the Load,
// Store, Swap, CompareAndSwap, Add, And and Or methods of Bool, Int32,
// Int64, Uint32, Uint64, Uintptr and Pointer in sync/atomic/type.go and
// wraps each as the Value's (valueFuncs): op 1 or 2 before a store or a
// read-modify-write, op 0 after a load (rt reports whether it records
// it; then it holds the word's stripe until the end, and a load is done
// again under it), 3, 4, 5 at the end, 6 after a CompareAndSwap that
// failed. Only with the lock patch, whose RWMutex wrappers skip the
// reader counts the race build does not see (and the WaitGroup's, wgSkip).

// typedMethod matches a method of type.go the patch wraps: receiver type,
// method, parameters.
var typedMethod = regexp.MustCompile(`(?m)^func \(x \*(Bool|Int32|Int64|Uint32|Uint64|Uintptr|Pointer\[T\])\) (Load|Store|Swap|CompareAndSwap|Add|And|Or)\(([^)]*)\)[^{\n]*\{`)

// typedPatch returns sync/atomic/type.go with the typed atomics' hook, or
// false when it lacks a method the patch wraps.
func typedPatch(src string) (string, bool) {
	ms := typedMethod.FindAllStringSubmatch(src, -1)
	seen := map[string]bool{}
	for _, m := range ms {
		seen[m[1]+"."+m[2]] = true
	}
	for _, t := range []string{"Bool", "Int32", "Int64", "Uint32", "Uint64", "Uintptr", "Pointer[T]"} {
		for _, meth := range []string{"Load", "Store", "Swap", "CompareAndSwap"} {
			if !seen[t+"."+meth] {
				return "", false
			}
		}
	}
	if !strings.Contains(src, "import \"unsafe\"\n") {
		return "", false
	}
	var b strings.Builder
	b.WriteString(typedHookDecl)
	for _, m := range ms {
		decl, meth := m[0], m[2]
		if strings.Count(src, decl) != 1 {
			return "", false
		}
		src = strings.Replace(src, decl, lockRenamed(decl), 1)
		var args []string
		for _, p := range strings.Split(m[3], ",") {
			if f := strings.Fields(p); len(f) > 0 {
				args = append(args, f[0])
			}
		}
		call := "x.racekit" + meth + "(" + strings.Join(args, ", ") + ")"
		b.WriteString("\n" + decl + "\n")
		switch meth {
		case "Load":
			fmt.Fprintf(&b, "\tr := %s\n\tif h := racekitTypedHook; h != nil && h(unsafe.Pointer(x), 0) {\n\t\tr = %s\n\t\th(unsafe.Pointer(x), 3)\n\t}\n\treturn r\n", call, call)
		case "Store":
			fmt.Fprintf(&b, "\tif h := racekitTypedHook; h != nil && h(unsafe.Pointer(x), 1) {\n\t\t%s\n\t\th(unsafe.Pointer(x), 4)\n\t\treturn\n\t}\n\t%s\n", call, call)
		case "CompareAndSwap":
			fmt.Fprintf(&b, "\tif h := racekitTypedHook; h != nil && h(unsafe.Pointer(x), 2) {\n\t\tr := %s\n\t\tif r {\n\t\t\th(unsafe.Pointer(x), 5)\n\t\t} else {\n\t\t\th(unsafe.Pointer(x), 6)\n\t\t}\n\t\treturn r\n\t}\n\treturn %s\n", call, call)
		default: // Swap, Add, And, Or
			fmt.Fprintf(&b, "\tif h := racekitTypedHook; h != nil && h(unsafe.Pointer(x), 2) {\n\t\tr := %s\n\t\th(unsafe.Pointer(x), 5)\n\t\treturn r\n\t}\n\treturn %s\n", call, call)
		}
		b.WriteString("}\n")
	}
	return src + b.String(), true
}

// typedHookDecl starts what typedPatch appends to type.go.
const typedHookDecl = `
// racekitTypedHook is set by racekit's runtime (racekit.dev/rt, the
// racekit_typedhook.go file racekit adds to it).
//
//go:linkname racekitTypedHook
var racekitTypedHook func(x unsafe.Pointer, op uint8) bool
`

// rtTypedHookFile is the file added to rt's copy with the typed hook.
const rtTypedHookFile = `package rt

import "unsafe"

//go:linkname racekitTypedHook sync/atomic.racekitTypedHook
var racekitTypedHook func(x unsafe.Pointer, op uint8) bool

var _ = func() bool {
	setTypedHook = func(h func(x unsafe.Pointer, op uint8) bool) { racekitTypedHook = h }
	return true
}()
`

// addTypedPatch adds to files the patched sync/atomic/type.go of the
// toolchain at goroot and rt's file for its hook, when it takes
// typedPatch.
func addTypedPatch(goroot, rtDir string, files map[string][]byte) {
	name := filepath.Join(goroot, "src", "sync", "atomic", "type.go")
	b, err := os.ReadFile(name)
	if err != nil {
		return
	}
	if p, ok := typedPatch(string(b)); ok {
		files[name] = []byte(p)
		files[filepath.Join(rtDir, "rt", "racekit_typedhook.go")] = []byte(rtTypedHookFile)
	}
}
