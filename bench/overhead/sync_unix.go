//go:build unix

package main

import "syscall"

// flushDirty writes the page cache's dirty pages out before a timed run, so
// that the writeback of the trace an earlier run wrote (sor's full run
// writes about a gigabyte) does not slow the next one down.
func flushDirty() { syscall.Sync() }
