package p

import "runtime"

// A statement calling runtime.ReadMemStats is bracketed by rt's two halves
// (no frame of racekit's under the runtime's); a deferred one takes
// rt.ReadMemStats; one through a func value is not seen.
func Allocs(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	defer runtime.ReadMemStats(&after)
	read := runtime.ReadMemStats
	read(&after)
	return after.Mallocs - before.Mallocs
}
