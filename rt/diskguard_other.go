//go:build !(linux || darwin || freebsd || dragonfly)

package rt

import "os"

// fileSystemFree is freeSpace where rt has no statfs: unknown, no guard.
func fileSystemFree(*os.File) (uint64, bool) { return 0, false }
