package analyze

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"

	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/trace"
)

// The detectors keep a vector clock per goroutine and per sync object, as
// wide as the goroutines alive at once: a test with thousands of
// goroutines passing a million messages over channels of their own needs
// more memory than the machine has (watermill's pub/sub tests:
// bench/results/corpus/run-session34). Rather than take the machine down, an
// analysis stops reading its trace when the process's heap passes
// MemLimit, and says so: the races of the events read are reported, those
// of the rest are not checked.

// errMemLimit stops an analysis whose heap passed its limit.
var errMemLimit = errors.New("analysis memory limit reached")

// MemLimit is the heap, in bytes, past which an analysis stops:
// RACEKIT_ANALYSIS_MEM (bytes, or with a K, M or G suffix), else 40% of
// the machine's memory, else 8 GiB.
var MemLimit = sync.OnceValue(func() uint64 {
	if s := os.Getenv("RACEKIT_ANALYSIS_MEM"); s != "" {
		if n, err := parseBytes(s); err == nil && n > 0 {
			return n
		}
	}
	if n := totalMemory(); n > 0 {
		return n / 10 * 4 // the process heap runs past it between looks, and the test binary needs room too
	}
	return 8 << 30
})

// gcLimitOnce sets the process's GC memory limit below MemLimit, once. A
// large analysis holds a large live heap (a shadow cell per word the run
// touched); at GOGC's default the heap grows to twice that before a
// collection, so garbage alone stopped analyses whose live state fit. A
// limit the user set (GOMEMLIMIT) stays. Under that limit the GC runs
// at analysisGCPercent, unless the user set GOGC: most of an analysis's
// heap lives to its end, and each cycle marks all of it again
// (docs/benchmarks.md, "Atomic operations as one record").
var gcLimitOnce sync.Once

const analysisGCPercent = 200

func setGCLimit() {
	gcLimitOnce.Do(func() {
		if debug.SetMemoryLimit(-1) == math.MaxInt64 {
			debug.SetMemoryLimit(int64(MemLimit() / 10 * 9))
		}
		if os.Getenv("GOGC") == "" {
			debug.SetGCPercent(analysisGCPercent)
		}
	})
}

// parseBytes reads 123, 123K, 123M or 123G.
func parseBytes(s string) (uint64, error) {
	mult := uint64(1)
	switch strings.ToUpper(s[len(s)-1:]) {
	case "K":
		mult = 1 << 10
	case "M":
		mult = 1 << 20
	case "G":
		mult = 1 << 30
	}
	if mult > 1 {
		s = s[:len(s)-1]
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n * mult, err
}

// totalMemory is MemTotal of /proc/meminfo in bytes (0 where there is none).
func totalMemory() uint64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			fs := strings.Fields(v)
			if n, err := strconv.ParseUint(fs[0], 10, 64); err == nil {
				return n << 10
			}
		}
	}
	return 0
}

// heapBytes is the live and not yet swept heap of the process.
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// MemStop says whether a guarded run stopped at its memory limit, and at
// what heap.
type MemStop struct {
	Stopped     bool
	Heap, Limit uint64
}

// RunGuarded is detect.RunChecked under the memory guard: the run stops,
// its detectors finished, when the process's heap passes limit (0:
// MemLimit(), with the GC's limit set below it). The heap is looked at
// when progress is due (progress, nil for none, is called then): no cost
// per event. Every analysis of a whole trace goes through it, racekit
// analyze's too, which took 12 GB of a 24 GB machine on ants' 2.4 GB
// trace before the guard reached it.
func RunGuarded(src trace.Reader, limit uint64, progress func(n int64), dets ...detect.Detector) (int64, MemStop, error) {
	if limit == 0 {
		limit = MemLimit()
		setGCLimit()
	}
	stop := MemStop{Limit: limit}
	n, err := detect.RunChecked(src, func(n int64) error {
		if progress != nil {
			progress(n)
		}
		if stop.Heap = heapBytes(); stop.Heap > limit {
			return errMemLimit
		}
		return nil
	}, dets...)
	if errors.Is(err, errMemLimit) {
		stop.Stopped = true
		for _, d := range dets {
			d.Finish()
		}
		return n, stop, nil
	}
	return n, stop, err
}

// Warning is the warning of a run that stopped after n events, of a trace
// with the given goroutines (0: not counted).
func (s MemStop) Warning(n, goroutines int64) string {
	gs := ""
	if goroutines > 0 {
		gs = fmt.Sprintf("%d goroutines, ", goroutines)
	}
	return fmt.Sprintf("the analysis stopped after %d events: its clocks and shadow memory took %d MB (limit %d MB; %sa clock per goroutine and per sync object as wide as the goroutines alive at once, a cell per word accessed): races in the rest of the run are not checked; RACEKIT_ANALYSIS_MEM raises the limit",
		n, s.Heap>>20, s.Limit>>20, gs)
}
