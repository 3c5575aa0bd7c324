package p

import "time"

// The file's only use of package time becomes a hook: its import must
// stay used.
func nap() { _ = time.Now() }
