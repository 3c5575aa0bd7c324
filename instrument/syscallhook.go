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
