package rt

import (
	"sync"
	"unsafe"
)

// rt's own locks, and the real lock operations of traced code's hooks.
// The patched package sync reports every Mutex and RWMutex operation to
// rt's hook (synchook.go), which records an edge for the goroutine that
// makes it. rt's own locks are not the program's: an edge through defMu,
// which the first event of every goroutine takes, or through an atomic
// stripe, would order goroutines the program leaves unordered and hide
// its races. Nor are the lock operations traced code's hooks make for it
// (MutexLock...), which record the lock's own events. Both count, in the
// runtime's g (the patched runtime's racekitSyncSkip, at chanGOffsets[2]),
// the operations under way that the hook is to skip; the hook skips a
// goroutine whose count is not zero. An OwnMutex counts from Lock to
// Unlock, so that what std locks while rt holds one (an allocation's
// hook, a buffer's flush) is skipped too and the hook never waits on a
// lock its goroutine holds.

// OwnMutex is a sync.Mutex of rt's (and rttest's): its operations are not
// the program's. Unlock is called on the goroutine that locked.
type OwnMutex struct{ mu sync.Mutex }

// Lock locks m.
func (m *OwnMutex) Lock() {
	skipSync(1)
	m.mu.Lock()
}

// TryLock tries to lock m.
func (m *OwnMutex) TryLock() bool {
	skipSync(1)
	if m.mu.TryLock() {
		return true
	}
	skipSync(-1)
	return false
}

// Unlock unlocks m.
func (m *OwnMutex) Unlock() {
	m.mu.Unlock()
	skipSync(-1)
}

// lockHooked tells whether sync's hook reports mutex operations to rt
// (installSyncHook): only then are they counted.
var lockHooked bool

// skipSync adds d to the current goroutine's count of mutex operations the
// hook skips (never below zero).
func skipSync(d int32) {
	if !lockHooked {
		return
	}
	n := (*uint32)(unsafe.Add(getg(), chanGOffsets[2]))
	if d > 0 || *n > 0 {
		*n += uint32(d)
	}
}

// skipBegin adds one to the current goroutine's count and returns it for
// skipEnd (nil when nothing is counted): the bracket of one operation,
// which looks the goroutine up once.
func skipBegin() *uint32 {
	if !lockHooked {
		return nil
	}
	n := (*uint32)(unsafe.Add(getg(), chanGOffsets[2]))
	*n++
	return n
}

// skipEnd takes back skipBegin's one.
func skipEnd(n *uint32) {
	if n != nil && *n > 0 {
		*n--
	}
}

// syncSkipped reports whether the hook skips the current goroutine's
// mutex operation.
func syncSkipped() bool {
	return *(*uint32)(unsafe.Add(getg(), chanGOffsets[2])) != 0
}

// Own calls f, rt's (or rttest's) own call into code that may lock or use
// a sync.Map (a testing.T's Cleanup): sync's hook records none of it.
func Own(f func()) {
	n := skipBegin()
	defer skipEnd(n)
	f()
}
