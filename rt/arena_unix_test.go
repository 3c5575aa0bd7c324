//go:build unix

package rt

import (
	"runtime"
	"testing"
)

// Chunks' records are outside the Go heap (arena.go): 16 MiB of buffered
// records leave the heap runtime.ReadMemStats reports (and so the garbage
// collector's goal) where it was, as Go's race detector's shadow memory
// does. With the arrays on the heap the heap grows by the 16 MiB.
func TestChunksOutsideHeap(t *testing.T) {
	const n = 256 // big chunks, 64 KiB each
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	cs := make([]*chunk, n)
	for i := range cs {
		cs[i] = newChunk(bigChunk)
		for j := range cs[i].recs {
			cs[i].recs[j] = rec{obj: uint64(j), site: 1} // touched, as a goroutine fills it
		}
	}
	runtime.ReadMemStats(&after)
	for _, c := range cs {
		freeChunk(c)
	}
	const records = n * bigChunk * 16
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > records/8 {
		t.Errorf("the heap grew by %d bytes with %d bytes of records buffered, want the records outside it", grew, records)
	}
}

// A chunk the writer frees is the next one of its size handed out: the
// arrays are never returned to the OS, so none may be dropped.
func TestFreedChunkReused(t *testing.T) {
	for _, size := range chunkSizes {
		c := newChunk(size)
		if len(c.recs) != size || cap(c.recs) != size {
			t.Fatalf("newChunk(%d): %d records, capacity %d", size, len(c.recs), cap(c.recs))
		}
		freeChunk(c)
		if d := newChunk(size); d != c {
			t.Errorf("size %d: a new chunk after one was freed", size)
		} else {
			freeChunk(d)
		}
	}
}
