package rt

import (
	"os"

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
// record, and the hook makes none; rt's own writes of the trace file are
// not the program's I/O (traceFD).

// setIOHook installs syscall's hook; nil without the patched package
// syscall.
var setIOHook func(h func(fd int, p []byte, n int, op uint8))

// traceFD is the descriptor of the trace file being written (-1: none),
// whose writes, by rt's writer on any goroutine, record nothing.
var traceFD OwnInt64

func init() { traceFD.Store(-1) }

// ioHooked tells whether the hook is installed: then the I/O calls whose
// writes are system calls they make record no release of their own
// (IOSysWrite).
var ioHooked bool

func installIOHook() {
	if setIOHook != nil {
		setIOHook(onIO)
		ioHooked = true
	}
}

// setTraceFD notes f's descriptor as the trace file's (start), without
// f.Fd, which would put the file in blocking mode.
func setTraceFD(f *os.File) {
	traceFD.Store(-1)
	if sc, err := f.SyscallConn(); err == nil {
		sc.Control(func(fd uintptr) { traceFD.Store(int64(fd)) })
	}
}

// The operations syscall's hook passes.
const (
	ioWrite = 0 // before a write system call
	ioRead  = 1 // after a read system call that succeeded
)

// onIO runs in package syscall on the goroutine of the system call.
func onIO(fd int, p []byte, n int, op uint8) {
	if int64(fd) == traceFD.Load() {
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
