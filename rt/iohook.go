package rt

import (
	"os"
	"unsafe"

	"github.com/racekit/racekit/trace"
)

// System calls' I/O edges. racekit patches package syscall so that a write
// system call (Write, Pwrite, Sendfile) calls a hook before it and a read
// one (Read, Pread) after it succeeded (instrument/syscallhook.go), where
// the race build releases and acquires syscall's ioSync; setIOHook, set by
// the file racekit adds to rt's copy, installs onIO there. The edges go on
// ioObj, the object of the I/O calls instrumented code names (IOWrite,
// IORead), so that a write system call inside any call orders what came
// before it before what a later read system call's goroutine does after
// it, as under go test -race: a tls.Conn's first Write, which runs the
// handshake and reads, and textproto's Cmd, which writes, ordered nothing.
// As for channels (chanhook.go), only goroutines rt has a state for
// record, and the hook makes none; rt's own writes of the trace file and
// of the controlled scheduler's schedule are not the program's I/O
// (ownFDs).

// setIOHook installs syscall's hook; nil without the patched package
// syscall.
var setIOHook func(h func(fd int, p []byte, n int, op uint8))

// ownFDs are the descriptors of rt's own files (-1: none), whose
// operations, on whatever goroutine, record nothing: the trace file being
// written (ownTraceFD) and the controlled scheduler's schedule
// (ownScheduleFD), which its points write on the program's goroutines.
var ownFDs [2]OwnInt64

const (
	ownTraceFD = iota
	ownScheduleFD
)

func init() {
	for i := range ownFDs {
		ownFDs[i].Store(-1)
	}
}

// isOwnFD reports whether fd is one of rt's own files (a descriptor
// closed, -1 in its FD, is none).
func isOwnFD(fd int) bool {
	if fd < 0 {
		return false
	}
	for i := range ownFDs {
		if ownFDs[i].Load() == int64(fd) {
			return true
		}
	}
	return false
}

// noteOwnFD notes f's descriptor as rt's own file of that kind, without
// f.Fd, which would put the file in blocking mode; nil notes none.
func noteOwnFD(kind int, f *os.File) {
	ownFDs[kind].Store(-1)
	if f == nil {
		return
	}
	if sc, err := f.SyscallConn(); err == nil {
		sc.Control(func(fd uintptr) { ownFDs[kind].Store(int64(fd)) })
	}
}

// ioHooked tells whether the hook is installed: then the I/O calls whose
// writes are system calls they make record no release of their own
// (IOSysWrite).
var ioHooked bool

func installIOHook() {
	if setIOHook != nil {
		setIOHook(onIO)
		ioHooked = true
	}
	if setFDHook != nil {
		setFDHook(onFD)
		fdHooked = true
	}
}

// fdHooked tells whether internal/poll's hook is installed (onFD).
var fdHooked bool

// sysIOSeen reports whether rt records the edges of system calls and of
// the descriptors' locks: then the I/O calls whose writes, reads or Close
// are those record no edge of their own (IOSysWrite, IOSysRead).
func sysIOSeen() bool { return ioHooked && fdHooked }

// setFDHook installs internal/poll's hook on its descriptors' fdMutex
// (instrument/syscallhook.go, fdMutexPatch); nil without the patched
// package.
var setFDHook func(h func(x unsafe.Pointer, fd int, op uint8) bool)

// onFD runs in internal/poll on the goroutine of an operation on the
// descriptor fd, with its fdMutex's state word at p: op begins a
// CompareAndSwap (atomicBeginRMW) or the Load that found the descriptor
// closed (atomicLoaded), or ends one (atomicEndRMW when it swapped,
// atomicEndFailed when not, atomicEndLoad), as sync/atomic's typed hook
// (onTyped). The word's edges are recorded as the race build has them, an
// acquire, and a release after it when it swapped, under the word's
// stripe, so that the trace orders them as the word's operations went;
// not as an atomic operation, whose data access of the word no plain
// access may meet (an interceptor's summary of a File's method may read
// the struct the word begins: os's Name), and which a sampled run would
// record where the offline sampler drops it (e2e's
// TestSampledEqualsOfflineE2E failed with it: edges are never sampled).
// rt's own files (the trace file's writes and seeks, on whatever
// goroutine) order none of the program's goroutines.
func onFD(p unsafe.Pointer, fd int, op uint8) bool {
	a := ptr(p)
	if op <= atomicBeginRMW {
		if isOwnFD(fd) || lockHookG() == nil {
			return false
		}
		stripeOf(a).Lock()
		return true
	}
	if g := known(); g != nil && on && live.Load() {
		g.edge(trace.OpSyncAcquire, 0, a)
		if op == atomicEndRMW {
			g.edge(trace.OpSyncRelease, 0, a)
		}
	}
	stripeOf(a).Unlock()
	return true
}

// The operations syscall's hook passes.
const (
	ioWrite = 0 // before a write system call
	ioRead  = 1 // after a read system call that succeeded
)

// onIO runs in package syscall on the goroutine of the system call.
func onIO(fd int, p []byte, n int, op uint8) {
	if isOwnFD(fd) {
		return
	}
	g := hookG()
	if g == nil {
		return
	}
	switch op {
	case ioWrite:
		g.edge(trace.OpSyncRelease, 0, ioObj)
	case ioRead:
		if n > 0 && g.nfill > 0 {
			g.readInto(p[:n])
		}
		g.edge(trace.OpSyncAcquire, 0, ioObj)
	}
}

// readInto records the write of b, bytes a read system call returned, where
// they lie in the buffer of a Read call under way (FillW): -race's
// WriteRange, before the call's acquire, so that the bytes are not ordered
// after what the acquire takes (e2e stdraces
// TestRaceReadSyscallBufferBeforeAcquire). A buffer the call fills by a
// copy after its system calls (a bufio.Reader's, a TLS record's) is Filled's
// to record, after them, as -race sees the copy. Filled records the bytes
// again at the call's return: the same goroutine's second write.
func (g *gstate) readInto(b []byte) {
	a := uintptr(sliceData(b))
	for i := g.nfill - 1; i >= 0; i-- {
		f := g.fills[i]
		if f.p == nil || a < uintptr(f.p) || a >= uintptr(f.p)+uintptr(f.n) {
			continue
		}
		wordsRecord(trace.OpWrite, sliceData(b), 1, min(len(b), int(uintptr(f.p)+uintptr(f.n)-a)), f.site)
		return
	}
}
