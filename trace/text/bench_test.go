package text_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/racekit/racekit/gen"
	"github.com/racekit/racekit/trace"
	"github.com/racekit/racekit/trace/text"
)

const benchLines = 1 << 20

// synthetic builds an n-event trace shaped like RAPID's benchmarks: T0
// forks 15 threads that read and write vars variables, take and release
// 64 locks, at locs locations (integers, as RAPID's); T0 joins them. In
// racekit text (ext) half the accesses carry values, locations are
// file:line:col, and some locks are read locks and some events sync or
// atomic. Choices are uniformly random: no locality, the worst case for
// the readers' tables.
func synthetic(n, vars, locs int, ext bool) string {
	var sb strings.Builder
	sb.Grow(n * 24)
	seed := uint64(1)
	rnd := func(k int) int {
		seed = seed*6364136223846793005 + 1442695040888963407
		return int(seed>>33) % k
	}
	loc := func() {
		sb.WriteByte('|')
		l := rnd(locs)
		if ext {
			sb.WriteString("pkg/file")
			sb.WriteString(strconv.Itoa(l % 50))
			sb.WriteString(".go:")
			sb.WriteString(strconv.Itoa(1 + l/50))
			sb.WriteString(":")
			sb.WriteString(strconv.Itoa(1 + l%7))
		} else {
			sb.WriteString(strconv.Itoa(l))
		}
		sb.WriteByte('\n')
	}
	const threads = 16
	for t := 1; t < threads; t++ {
		sb.WriteString("T0|fork(T" + strconv.Itoa(t) + ")")
		loc()
	}
	body := n - 2*(threads-1)
	for i := 0; i < body; {
		t := "T" + strconv.Itoa(1+rnd(threads-1))
		switch k := rnd(20); {
		case k < 3 && i+3 <= body: // a critical section
			l := strconv.Itoa(rnd(64))
			acq, rel := "acq", "rel"
			if ext && k == 0 {
				acq, rel = "racq", "rrel"
			}
			sb.WriteString(t + "|" + acq + "(L" + l + ")")
			loc()
			sb.WriteString(t + "|r(V" + strconv.Itoa(rnd(vars)) + ")")
			loc()
			sb.WriteString(t + "|" + rel + "(L" + l + ")")
			loc()
			i += 3
		case k == 3 && ext:
			sb.WriteString(t + "|snd(ch" + strconv.Itoa(rnd(16)) + ")")
			loc()
			i++
		case k == 4 && ext:
			sb.WriteString(t + "|aload(A" + strconv.Itoa(rnd(16)) + "=" + strconv.Itoa(rnd(100)) + ")")
			loc()
			i++
		default:
			op := "r"
			if rnd(3) == 0 {
				op = "w"
			}
			sb.WriteString(t + "|" + op + "(V" + strconv.Itoa(rnd(vars)))
			if ext && rnd(2) == 0 {
				sb.WriteString("=" + strconv.Itoa(rnd(1000)))
			}
			sb.WriteString(")")
			loc()
			i++
		}
	}
	for t := 1; t < threads; t++ {
		sb.WriteString("T0|join(T" + strconv.Itoa(t) + ")")
		loc()
	}
	return sb.String()
}

var (
	benchOnce                    sync.Once
	benchSTD, benchLocal, benchX string
)

func benchInputs() (std, local, ext string) {
	benchOnce.Do(func() {
		benchSTD = synthetic(benchLines, 10000, 20000, false)
		benchLocal = synthetic(benchLines, 64, 64, false)
		benchX = synthetic(benchLines, 10000, 20000, true)
	})
	return benchSTD, benchLocal, benchX
}

func benchRead(b *testing.B, src string, open func(io.Reader) trace.Reader) {
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	var events int64
	cpu0 := cpuTime()
	for b.Loop() {
		r := open(strings.NewReader(src))
		var e trace.Event
		for {
			err := r.Next(&e)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			events++
		}
	}
	reportRate(b, events, cpu0)
}

// reportRate reports events per wall-clock second and per CPU-second.
func reportRate(b *testing.B, events int64, cpu0 time.Duration) {
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
	if cpu := cpuTime() - cpu0; cpu > 0 {
		b.ReportMetric(float64(events)/cpu.Seconds(), "events/cpu-s")
	}
}

// BenchmarkLineScan is the floor the readers stand on: splitting the
// same STD text into lines, and finding the first '|' of each.
func BenchmarkLineScan(b *testing.B) {
	src, _, _ := benchInputs()
	var lines int64
	cpu0 := cpuTime()
	for b.Loop() {
		br := bufio.NewReaderSize(strings.NewReader(src), 256<<10)
		for {
			l, err := br.ReadSlice('\n')
			if err != nil {
				break
			}
			if bytes.IndexByte(l, '|') > 0 {
				lines++
			}
		}
	}
	reportRate(b, lines, cpu0)
}

func BenchmarkSTDRead(b *testing.B) {
	src, _, _ := benchInputs()
	benchRead(b, src, func(r io.Reader) trace.Reader { return text.NewSTDReader(r, "bench.std") })
}

var (
	genOnce sync.Once
	genSTD  string
	genErr  error
)

// genInput writes, as STD, 1M events of the workload of
// bench/std-throughput.sh (racekit gen with
// bench/configs/std-compatible.json): 8 goroutines, named variables and
// locks, file:line locations.
func genInput(b *testing.B) string {
	genOnce.Do(func() {
		js, err := os.ReadFile("../../bench/configs/std-compatible.json")
		if err != nil {
			genErr = err
			return
		}
		var cfg gen.Config
		if genErr = json.Unmarshal(js, &cfg); genErr != nil {
			return
		}
		cfg.Events = 1 << 20
		var sb strings.Builder
		w := text.NewSTDWriter(&sb)
		if _, genErr = gen.Generate(cfg, w); genErr == nil {
			genErr = w.Close()
		}
		genSTD = sb.String()
	})
	if genErr != nil {
		b.Fatal(genErr)
	}
	return genSTD
}

// BenchmarkSTDReadGen reads the trace that bench/std-throughput.sh
// measures racekit analyze on.
func BenchmarkSTDReadGen(b *testing.B) {
	src := genInput(b)
	benchRead(b, src, func(r io.Reader) trace.Reader { return text.NewSTDReader(r, "gen.std") })
}

// BenchmarkSTDReadLocal reads a trace with 64 variables and locations,
// whose tables stay in cache.
func BenchmarkSTDReadLocal(b *testing.B) {
	_, src, _ := benchInputs()
	benchRead(b, src, func(r io.Reader) trace.Reader { return text.NewSTDReader(r, "bench.std") })
}

func BenchmarkTextRead(b *testing.B) {
	_, _, src := benchInputs()
	benchRead(b, src, func(r io.Reader) trace.Reader { return text.NewTextReader(r, "bench.rktx") })
}

func BenchmarkTextWrite(b *testing.B) {
	_, _, src := benchInputs()
	tr, err := text.Parse("bench.rktx", src)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		w := text.NewTextWriter(io.Discard)
		if _, err := trace.Copy(w, tr.Iter()); err != nil {
			b.Fatal(err)
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
	reportRate(b, int64(len(tr.Events))*int64(b.N), cpu0)
}

// Once every name, thread and location has been seen, reading a line
// allocates nothing.
func TestReadSteadyStateAllocatesNothing(t *testing.T) {
	for _, c := range []struct {
		name string
		line string
		open func(io.Reader) trace.Reader
	}{
		{"std", "T1|r(V1)|12\nT2|acq(L0)|13\nT2|fork(T1)|3\n",
			func(r io.Reader) trace.Reader { return text.NewSTDReader(r, "a.std") }},
		{"text", "T1|r(V1=5)|a.go:12:3\nT2|racq(L0)\n\"T 2\"|call(m;V1,0xc000010000)|\"b c.go:1\"\nT2|w(0xc000010000=0x10000000)\n# comment\n",
			func(r io.Reader) trace.Reader { return text.NewTextReader(r, "a.rktx") }},
	} {
		r := c.open(strings.NewReader(strings.Repeat(c.line, 4000)))
		var e trace.Event
		for range 100 { // warm up: tables, Addrs buffer
			if err := r.Next(&e); err != nil {
				t.Fatal(err)
			}
		}
		allocs := testing.AllocsPerRun(1000, func() {
			if err := r.Next(&e); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per event, want 0", c.name, allocs)
		}
	}
}

// Once every goroutine, object and site has been written, writing an
// event allocates nothing.
func TestWriteSteadyStateAllocatesNothing(t *testing.T) {
	tr := parse(t, "T0|fork(T1)|a.go:1\nT1|w(x=5)|a.go:2\nT1|racq(mu)\nT1|call(m;x,0xc000010000)|a.go:3\nT0|join(T1)\n")
	for _, w := range []trace.Writer{text.NewTextWriter(io.Discard), text.NewSTDWriter(io.Discard)} {
		if sw, ok := w.(*text.STDWriter); ok {
			sw.Lossy = true
		}
		if _, err := trace.Copy(w, tr.Iter()); err != nil {
			t.Fatal(err)
		}
		i := 0
		var e trace.Event
		allocs := testing.AllocsPerRun(1000, func() {
			e = tr.Events[i%len(tr.Events)]
			e.Seq = uint64(len(tr.Events) + i)
			if err := w.WriteEvent(&e); err != nil {
				t.Fatal(err)
			}
			i++
		})
		if allocs != 0 {
			t.Errorf("%T: %v allocations per event, want 0", w, allocs)
		}
	}
}
