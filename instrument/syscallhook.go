package instrument

import "strings"

// The system calls' I/O edges. Go's race detector sees every write system
// call (syscall.Write, Pwrite, Sendfile: ReleaseMerge of syscall's ioSync)
// ordered before every later read one (Read, Pread: Acquire of ioSync once
// the call succeeded, after the WriteRange of the bytes it read), whatever
// standard-library call they run inside. racekit's table of I/O calls
// (ioKind) orders a call by its name; a call that reads where its name
// says write (a tls.Conn's first Write runs the handshake: held-out
// wneessen/go-mail's smtp client reads the server's handshake inside
// textproto's PrintfLine) or writes where its name says nothing
// (textproto's Cmd) was ordered by neither edge. The syscall package
// patched here calls a function rt installs beside the race build's
// annotations (a write's hook before the call, a read's after it, when it
// succeeded), and rt records them on the object the table's hooks use
// (rt/iohook.go). Only when syscall/syscall_unix.go has the exact texts
// below.

// ioSyscallEdits are the edits of syscall/syscall_unix.go: old text, new
// text (each occurs once).
var ioSyscallEdits = []struct{ old, new string }{
	{
		"func Read(fd int, p []byte) (n int, err error) {\n\tn, err = read(fd, p)\n",
		"func Read(fd int, p []byte) (n int, err error) {\n\tn, err = read(fd, p)\n\tif err == nil && racekitIOHook != nil {\n\t\tracekitIOHook(fd, p, n, 1)\n\t}\n",
	},
	{
		"func Pread(fd int, p []byte, offset int64) (n int, err error) {\n\tn, err = pread(fd, p, offset)\n",
		"func Pread(fd int, p []byte, offset int64) (n int, err error) {\n\tn, err = pread(fd, p, offset)\n\tif err == nil && racekitIOHook != nil {\n\t\tracekitIOHook(fd, p, n, 1)\n\t}\n",
	},
	{
		"func Write(fd int, p []byte) (n int, err error) {\n",
		"func Write(fd int, p []byte) (n int, err error) {\n\tif racekitIOHook != nil {\n\t\tracekitIOHook(fd, nil, 0, 0)\n\t}\n",
	},
	{
		"func Pwrite(fd int, p []byte, offset int64) (n int, err error) {\n",
		"func Pwrite(fd int, p []byte, offset int64) (n int, err error) {\n\tif racekitIOHook != nil {\n\t\tracekitIOHook(fd, nil, 0, 0)\n\t}\n",
	},
	{
		"func Sendfile(outfd int, infd int, offset *int64, count int) (written int, err error) {\n",
		"func Sendfile(outfd int, infd int, offset *int64, count int) (written int, err error) {\n\tif racekitIOHook != nil {\n\t\tracekitIOHook(outfd, nil, 0, 0)\n\t}\n",
	},
}

// ioSyscallFuncs is appended to syscall/syscall_unix.go.
const ioSyscallFuncs = `
// racekitIOHook is set by racekit's runtime (racekit.dev/rt, the
// racekit_iohook.go file racekit adds to it): op 0 before a write system
// call, 1 after a read one that succeeded, with its buffer and count.
//
//go:linkname racekitIOHook
var racekitIOHook func(fd int, p []byte, n int, op uint8)
`

// rtIOHookFile is the file added to rt's copy with the system calls' hook.
const rtIOHookFile = `//go:build unix

package rt

import _ "unsafe"

//go:linkname racekitIOHook syscall.racekitIOHook
var racekitIOHook func(fd int, p []byte, n int, op uint8)

var _ = func() bool {
	setIOHook = func(h func(fd int, p []byte, n int, op uint8)) { racekitIOHook = h }
	return true
}()
`

// ioSyscallPatch returns syscall/syscall_unix.go with the hook's calls, or
// false when it lacks a text it edits (then rt orders I/O by its table of
// calls only).
func ioSyscallPatch(src string) (string, bool) {
	if !strings.Contains(src, "\"unsafe\"") {
		return "", false // go:linkname needs it imported
	}
	for _, e := range ioSyscallEdits {
		if strings.Count(src, e.old) != 1 {
			return "", false
		}
	}
	for _, e := range ioSyscallEdits {
		src = strings.Replace(src, e.old, e.new, 1)
	}
	return src + ioSyscallFuncs, true
}

// The descriptors' own lock. Go's race detector also sees internal/poll's
// fdMutex, whose state word every operation on a file or connection
// updates with sync/atomic's functions (intrinsics racekit's patched
// sync/atomic does not reach): a lock, an unlock, a close, each a
// CompareAndSwap that orders it after every earlier one on the descriptor,
// and a Load that finds it closed. So under go test -race two goroutines'
// writes to one descriptor (os.Stderr, a connection) are ordered, and so
// are a Close and the Read, Write or Accept that then fails; racekit's
// system call hook orders only a write before a later read, and two
// writers of os.Stderr, or a Close and the Write it made fail, raced
// (e2e stdraces TestNoRaceStderrWritersInTurn, TestNoRaceCloseThenWriteFails).
// The patched fd_mutex.go reports each CompareAndSwap of the state word
// that swapped as a read-modify-write, each that failed as a load, and the
// Load that finds the descriptor closed, through the typed atomics'
// protocol (rt's onTyped: ops 2 and 5 or 6, 0 and 3), with the descriptor's
// number, so that rt leaves out its trace file's (rt/iohook.go, onFD). A
// Load followed by a CompareAndSwap that swapped is not reported: the
// read-modify-write acquires all it would.

// fdMutexEdits are the edits of internal/poll/fd_mutex.go: old text, new
// text, and how many times the old text occurs.
var fdMutexEdits = []textEdit{
	{"import \"sync/atomic\"\n", "import (\n\t\"sync/atomic\"\n\t\"unsafe\"\n)\n", 1},
	{"atomic.CompareAndSwapUint64(&mu.state, old, new)", "racekitCAS(mu, old, new)", 5},
	{"\t\tif old&mutexClosed != 0 {\n\t\t\treturn false\n\t\t}\n", "\t\tif old&mutexClosed != 0 {\n\t\t\tracekitClosed(mu)\n\t\t\treturn false\n\t\t}\n", 3},
}

// fdMutexFuncs is appended to internal/poll/fd_mutex.go. An fdMutex is
// the first field of an FD (fdMutexPatch checks fd_unix.go), which gives
// its descriptor's number.
const fdMutexFuncs = `
// racekitFDHook is set by racekit's runtime (racekit.dev/rt, the
// racekit_fdhook.go file racekit adds to it).
//
//go:linkname racekitFDHook
var racekitFDHook func(x unsafe.Pointer, fd int, op uint8) bool

func racekitSysfd(mu *fdMutex) int { return int((*FD)(unsafe.Pointer(mu)).Sysfd) }

func racekitCAS(mu *fdMutex, old, new uint64) bool {
	if h := racekitFDHook; h != nil && h(unsafe.Pointer(&mu.state), racekitSysfd(mu), 2) {
		r := atomic.CompareAndSwapUint64(&mu.state, old, new)
		if r {
			h(unsafe.Pointer(&mu.state), 0, 5)
		} else {
			h(unsafe.Pointer(&mu.state), 0, 6)
		}
		return r
	}
	return atomic.CompareAndSwapUint64(&mu.state, old, new)
}

func racekitClosed(mu *fdMutex) {
	if h := racekitFDHook; h != nil && h(unsafe.Pointer(&mu.state), racekitSysfd(mu), 0) {
		atomic.LoadUint64(&mu.state)
		h(unsafe.Pointer(&mu.state), 0, 3)
	}
}
`

// rtFDHookFile is the file added to rt's copy with the descriptors' hook.
const rtFDHookFile = `//go:build unix

package rt

import "unsafe"

//go:linkname racekitFDHook internal/poll.racekitFDHook
var racekitFDHook func(x unsafe.Pointer, fd int, op uint8) bool

var _ = func() bool {
	setFDHook = func(h func(x unsafe.Pointer, fd int, op uint8) bool) { racekitFDHook = h }
	return true
}()
`

// fdFirstField is the start of internal/poll/fd_unix.go's FD: its fdMutex
// first, then the descriptor.
const fdFirstField = "type FD struct {\n\t// Lock sysfd and serialize access to Read and Write methods.\n\tfdmu fdMutex\n\n\t// System file descriptor. Immutable until Close.\n\tSysfd int\n"

// fdMutexPatch returns internal/poll/fd_mutex.go with the descriptors'
// hook, given it and fd_unix.go, or false when either lacks a text the
// patch needs (then a Close and the operation it made fail are ordered by
// the I/O calls' names only).
func fdMutexPatch(src, fdUnix string) (string, bool) {
	if !strings.Contains(fdUnix, fdFirstField) {
		return "", false
	}
	src, ok := applyEdits(src, fdMutexEdits)
	if !ok {
		return "", false
	}
	return src + fdMutexFuncs, true
}
