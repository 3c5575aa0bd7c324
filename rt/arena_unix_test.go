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
	free := len(f.s) - f.head // earlier tests' chunks, which newChunk may take first
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

// A chunk the writer frees is handed out again once coolChunks chunks of
// its size freed after it wait too (chunkFree), oldest first, and none is
// dropped: the arrays are never returned to the OS.
func TestFreedChunkReused(t *testing.T) {
	for _, size := range chunkSizes {
		f := &freeChunks[sizeClass(size)]
		f.Lock()
		saved := f.s[f.head:] // earlier tests' chunks: set aside, given back after
		f.s, f.head = nil, 0
		f.Unlock()
		c := newChunk(size)
		if len(c.recs) != size || cap(c.recs) != size {
			t.Fatalf("newChunk(%d): %d records, capacity %d", size, len(c.recs), cap(c.recs))
		}
		freeChunk(c)
		later := make([]*chunk, coolChunks)
		for i := range later {
			if later[i] = newChunk(size); later[i] == c {
				t.Fatalf("size %d: a freed chunk handed out again with %d freed after it, want %d", size, i, coolChunks)
			}
		}
		for _, d := range later {
			freeChunk(d)
		}
		if d := newChunk(size); d != c {
			t.Errorf("size %d: a new chunk with %d freed after the oldest, want the oldest", size, coolChunks)
		} else {
			freeChunk(d)
		}
		f.Lock()
		if n := len(f.s) - f.head; n != coolChunks+1 {
			t.Errorf("size %d: %d chunks free, want %d", size, n, coolChunks+1)
		}
		f.s = append(f.s, saved...)
		f.Unlock()
	}
}
