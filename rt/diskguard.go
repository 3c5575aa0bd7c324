package rt

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// A trace on a file system that fills. A compute-bound test suite records
// billions of events (held-out corona10/goimagehash: 21 GB in under a
// minute), and a file system left with no space breaks more than the trace:
// the next package's build, the CI job, the machine. So the writer stops
// tracing when the trace's file system has less than RACEKIT_TRACE_MINFREE
// free (default 1 GiB; 0: never): the file keeps every block written
// before, which the analysis reads as a run that stopped there, and the
// program goes on untraced. Free space is read every guardEvery bytes
// written (statfs on the open file: a microsecond or two).

// defaultMinFree is RACEKIT_TRACE_MINFREE's default.
const defaultMinFree = 1 << 30

// traceMinFree is the free space the writer leaves (RACEKIT_TRACE_MINFREE).
var traceMinFree uint64 = defaultMinFree

// guardEvery is how many bytes the writer writes between two reads of the
// free space, the first after as many: a 64 KiB block at a time, 2 GB/s at
// most, so every 30 ms at worst; a trace smaller than that is never
// stopped. A variable for tests.
var guardEvery int64 = 64 << 20

// freeSpace returns the bytes free for an unprivileged writer on f's file
// system; ok is false where it cannot tell (diskguard_*.go). A variable
// for tests.
var freeSpace = fileSystemFree

// errDiskLow is the guard's error, which fail prints.
var errDiskLow = errors.New("the trace's file system is nearly full")

// guardedFile is the trace file as the writer sees it: writes go to f
// until the free space falls under minFree. It keeps the file's Seek
// (checkpoints rewrite the end block: rkt.Writer.SetCheckpoints).
type guardedFile struct {
	*os.File
	minFree   uint64 // 0: no guard
	written   int64
	nextCheck int64
}

func newGuardedFile(f *os.File, minFree uint64) *guardedFile {
	return &guardedFile{File: f, minFree: minFree, nextCheck: guardEvery}
}

func (f *guardedFile) Write(p []byte) (int, error) {
	if f.minFree > 0 && f.written >= f.nextCheck {
		f.nextCheck = f.written + guardEvery
		if free, ok := freeSpace(f.File); ok && free < f.minFree+uint64(len(p)) {
			return 0, fmt.Errorf("%w: %s free, under RACEKIT_TRACE_MINFREE's %s, after %s of trace; what was recorded before is analysed, the rest of the run is not traced",
				errDiskLow, byteSize(free), byteSize(f.minFree), byteSize(uint64(f.written)))
		}
	}
	n, err := f.File.Write(p)
	f.written += int64(n)
	return n, err
}

// minFreeOf parses RACEKIT_TRACE_MINFREE: bytes, with an optional K, M, G
// or T suffix (powers of 1024); empty is the default, and a value it
// cannot read is the default with a message.
func minFreeOf(s string) uint64 {
	if s == "" {
		return defaultMinFree
	}
	mult := uint64(1)
	num := strings.TrimSuffix(strings.ToUpper(strings.TrimSpace(s)), "B")
	if i := strings.IndexAny(num, "KMGT"); i >= 0 && i == len(num)-1 {
		mult = 1 << (10 * (strings.IndexByte("KMGT", num[i]) + 1))
		num = num[:i]
	}
	n, err := strconv.ParseUint(num, 10, 64)
	if err != nil || n > ^uint64(0)/mult {
		fmt.Fprintf(os.Stderr, "racekit: RACEKIT_TRACE_MINFREE=%q is not a size (bytes, or with K, M, G or T); keeping %s free\n", s, byteSize(defaultMinFree))
		return defaultMinFree
	}
	return n * mult
}

// byteSize formats n bytes for a message.
func byteSize(n uint64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}
