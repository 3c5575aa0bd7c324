// Package timers: a time.AfterFunc callback runs on its own goroutine, in
// parallel with the code after the call (a thread root, section 3.4).
package timers

import (
	"sync"

	"timefake"
)

var fired int

func arm() int {
	timefake.AfterFunc(10, func() {
		fired = 1 // want `potential race on timers.fired: write at timers.go:15:3 in goroutine arm\$1 started at timers.go:14:20 holding no lock, and read at timers.go:17:9 in arm after the go statement at timers.go:14:20 holding no lock` `potential race on timers.fired: write at timers.go:15:3 in goroutine arm\$1 started at timers.go:14:20 holding no lock, and write at timers.go:15:3 in another instance`
	})
	return fired
}

var mu sync.Mutex
var guarded int

// armLocked: race-free, both sides hold mu.
func armLocked() int {
	timefake.AfterFunc(10, func() {
		mu.Lock()
		guarded = 1
		mu.Unlock()
	})
	mu.Lock()
	defer mu.Unlock()
	return guarded
}
