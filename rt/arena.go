package rt

import (
	"unsafe"
)

// Record arrays live outside the Go heap, as the Go race detector's shadow
// memory does. On the heap, racekit's buffers (up to maxPending records
// while the writer lags, and the free chunks after) raised the heap the
// program sees (runtime.MemStats) and the garbage collector's goal, which
// is twice the live heap: held-out yuin/gopher-lua's TestLua saw 78 MB
// where go test -race saw 25, and its LState.SetMx(40) ends the binary
// past 40 MB (bench/results/corpus/run-session69/notes.md). A rec holds
// no pointer.
//
// Chunks' headers are outside the heap too (their pointers point only to
// records and headers there), so that a program counting its live heap
// objects (MemStats.HeapObjects) before and after some work does not count
// racekit's: a sync.Pool's chunks went away two collections after the
// work, free lists' chunks stay.

// chunkFree holds the chunks of one size that the writer is done with,
// oldest first. Chunks are never released: neither headers nor arrays are
// the collector's.
//
// A chunk is handed out again only once coolChunks others have been freed
// after it. The writer reads a chunk on its own core, most often right
// behind the goroutine that writes it; handed out again at once (a stack
// of free chunks), every cache line of it was still in the writer's core,
// and each of the goroutine's record stores waited for the line to come
// across (the compare-and-swap after the stores drew a fifth of perf's
// samples on yaml.v2's tests). Taken in order after 32 others, its lines have left the
// writer's cache (bench/results/overhead/session88-chunk-reuse.md).
type chunkFree struct {
	OwnMutex
	s    []*chunk // free chunks, oldest at s[head]
	head int
	slab []rec // the rest of the current slab, cut into arrays of this size
}

// coolChunks is how many chunks of a size freed after a chunk must be
// waiting before it is handed out again (see chunkFree): 2 MiB of big
// chunks, beyond a core's L2 cache.
const coolChunks = 32

// headers is the rest of the current slab of chunk headers.
var headers struct {
	OwnMutex
	s []chunk
}

// newHeader returns a zeroed chunk header outside the heap.
func newHeader() *chunk {
	headers.Lock()
	defer headers.Unlock()
	if len(headers.s) == 0 {
		headers.s = newChunks(headerSlabBytes / int(unsafe.Sizeof(chunk{})))
	}
	c := &headers.s[0]
	headers.s = headers.s[1:]
	return c
}

var freeChunks [3]chunkFree // by size class, as chunkSizes

// slabBytes is the size of a slab of records obtained from the OS at a
// time; headerSlabBytes of a slab of headers (some 1,300 of them).
const (
	slabBytes       = 1 << 20
	headerSlabBytes = 1 << 16
)

// getChunk returns a free chunk of size records, or a new one.
func getChunk(size int) *chunk {
	f := &freeChunks[sizeClass(size)]
	f.Lock()
	defer f.Unlock()
	if len(f.s)-f.head > coolChunks {
		c := f.s[f.head]
		f.s[f.head] = nil
		f.head++
		if f.head > len(f.s)/2 {
			n := copy(f.s, f.s[f.head:])
			clear(f.s[n:])
			f.s, f.head = f.s[:n], 0
		}
		return c
	}
	if len(f.slab) < size {
		f.slab = newRecs(slabBytes / int(unsafe.Sizeof(rec{})))
	}
	c := newHeader()
	c.recs = f.slab[:size:size]
	f.slab = f.slab[size:]
	return c
}

// putChunk keeps c for a later getChunk.
func putChunk(c *chunk) {
	f := &freeChunks[sizeClass(len(c.recs))]
	f.Lock()
	f.s = append(f.s, c)
	f.Unlock()
}
