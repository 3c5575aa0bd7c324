// Package crossuse uses crossdep's summaries (facts) at its calls.
package crossuse

import "crossdep"

func worker(s *crossdep.Store) {
	s.Put("a", 1)     // no race: Put holds s.mu
	s.Touch()         // want `potential race on s.hits: write at crossdep.go:22:4 in goroutine worker started at crossuse.go:17:3 holding no lock, and read at crossdep.go:22:4 in another instance of the same goroutine holding no lock`
	crossdep.Lock(s)  // crossdep.Lock's summary says s.mu is held after it
	crossdep.Shared++ // want `potential race on crossdep.Shared: read at crossuse.go:10:11 in goroutine worker started at crossuse.go:17:3 holding \{s.mu\}, and write at crossuse.go:12:11 in another instance of the same goroutine holding no lock`
	crossdep.Unlock(s)
	crossdep.Shared = 0 // want `potential race on crossdep.Shared: write at crossuse.go:12:11 in goroutine worker started at crossuse.go:17:3 holding no lock, and write at crossuse.go:12:11 in another instance of the same goroutine holding no lock`
}

func start(s *crossdep.Store, n int) {
	for i := 0; i < n; i++ {
		go worker(s)
	}
}
