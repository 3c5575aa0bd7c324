//go:build !unix

package rt

// newRecs returns n zeroed records. Outside unix they are on the Go heap
// (see arena.go for why unix maps them from the OS).
func newRecs(n int) []rec { return make([]rec, n) }

// newChunks returns n zeroed chunk headers, as newRecs.
func newChunks(n int) []chunk { return make([]chunk, n) }
