//go:build unix

package rt

import (
	"runtime"
	"testing"
)

// Chunks' records are outside the Go heap (arena.go): 16 MiB of buffered
// records leave the heap runtime.ReadMemStats reports (and so the garbage
// collector's goal) where it was, as Go's race detector's shadow memory
// does, and their headers are not heap objects. With the arrays on the
// heap the heap grows by the 16 MiB; with the headers, by 256 objects.
func TestChunksOutsideHeap(t *testing.T) {
	const n = 256 // new big chunks, 64 KiB each
	f := &freeChunks[sizeClass(bigChunk)]
	f.Lock()
	free := len(f.s) // earlier tests' chunks, which newChunk takes first
	f.Unlock()
	cs := make([]*chunk, free+n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
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
	if grew := int64(after.HeapObjects) - int64(before.HeapObjects); grew >= n {
		t.Errorf("%d more heap objects with %d chunks made, want their headers outside the heap", grew, n)
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
