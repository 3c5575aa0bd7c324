//go:build linux || darwin || freebsd || dragonfly

package rt

import (
	"os"
	"syscall"
)

// fileSystemFree is freeSpace: the blocks statfs gives an unprivileged
// writer, times their size.
func fileSystemFree(f *os.File) (uint64, bool) {
	var st syscall.Statfs_t
	if err := syscall.Fstatfs(int(f.Fd()), &st); err != nil {
		return 0, false
	}
	return uint64(st.Bavail) * uint64(st.Bsize), true
}
