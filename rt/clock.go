package rt

import _ "unsafe" // go:linkname

// nanotime is the runtime's monotonic clock, in nanoseconds. The writer
// times its steals and flushes on it, not on time.Now: in a synctest
// bubble time.Now is the bubble's fake clock, which stands still while
// the bubble's goroutines run, so a round run there (a throttled
// goroutine's helpWrite) never saw a blocked goroutine hold the frontier
// for stealAfter, never stole it, and wrote nothing; every later event
// throttled and ran another such round (x/net's http2 priority tests took
// 42-101 s each, corpus session 64). runtime.nanotime is kept for
// linkname (go.dev/issue/67401).
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64
