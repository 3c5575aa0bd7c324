// Command tree reproduces the evaluation of TREE (Rajagopalan 2016,
// section 5.1) on racekit: Table 5.1 over recorded traces, and the
// micro-benchmark sweeps of Figures 5.2 (the program of Figure 5.1, TREE at
// its best) and 5.3 (TREE's weakness).
//
//	go run ./bench/tree -traces /tmp/subj-traces -out bench/results/tree
//
// For each trace (every *.rkt in -traces) and each generated micro-benchmark
// it reports the events, the share TREE skips (with fasttrack's options,
// tree.OptionsFor("fasttrack"), and with the thesis' lockset model,
// Relation Hybrid), the live heap of fasttrack with and without TREE in
// front, the best of -n timings of each in the same process on the same
// in-memory trace, and whether fasttrack's first race per address (its
// guarantee) and hb's distinct pairs (with Relation HappensBefore) are
// unchanged. It writes table.md, fig5_2.svg and fig5_3.svg to -out.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/detect/hb"
	"github.com/racekit/racekit/filter/tree"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/trace"
	"github.com/racekit/racekit/trace/tracefile"
)

func main() {
	traces := flag.String("traces", "", "directory of recorded .rkt traces for Table 5.1 (none: skip the table)")
	out := flag.String("out", "bench/results/tree", "directory for table.md and the SVG charts")
	n := flag.Int("n", 5, "timings per measurement (the best is kept)")
	sweep := flag.Bool("sweep", true, "run the micro-benchmark sweeps of Figures 5.2 and 5.3")
	flag.Parse()
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fatal(err)
	}
	var md strings.Builder
	md.WriteString("# TREE on racekit (thesis section 5.1)\n\n")
	fmt.Fprintf(&md, "Best of %d timings per cell, same process, same in-memory trace; %s, %s/%s, %d CPUs.\n\n",
		*n, runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	if *traces != "" {
		files := tracefile.List(*traces)
		if len(files) == 0 {
			fatal(fmt.Errorf("no .rkt traces in %s", *traces))
		}
		md.WriteString("## Table 5.1: recorded subject traces\n\n")
		md.WriteString(header)
		for _, path := range files {
			tr, err := load(path)
			if err != nil {
				fmt.Fprintf(os.Stderr, "tree: %v (skipped)\n", err)
				continue
			}
			name := strings.TrimSuffix(filepath.Base(path), ".rkt")
			r := measure(tr, *n)
			md.WriteString(r.row(name))
			fmt.Fprint(os.Stderr, r.row(name))
		}
		md.WriteString(legend)
	}
	if *sweep {
		for _, fig := range figures {
			fmt.Fprintf(&md, "\n## Figure %s: %s\n\n", fig.name, fig.what)
			var panels []panel
			for _, p := range params {
				md.WriteString(strings.Replace(header, "trace", p.name, 1))
				var xs []float64
				var rs []result
				for _, v := range p.values {
					cfg := microDefault
					p.set(&cfg, v)
					r := measure(fig.gen(cfg), *n)
					label := fmt.Sprintf("%s=%d", p.name, v)
					md.WriteString(r.row(label))
					fmt.Fprint(os.Stderr, fig.name+" "+r.row(label))
					xs = append(xs, float64(v))
					rs = append(rs, r)
				}
				md.WriteString("\n")
				panels = append(panels, sweepPanels(p.name, xs, rs)...)
			}
			file := "fig" + strings.ReplaceAll(fig.name, ".", "_") + ".svg"
			title := fmt.Sprintf("Figure %s on racekit: %s (fasttrack vs TREE+fasttrack)", fig.name, fig.what)
			if err := os.WriteFile(filepath.Join(*out, file), []byte(svg(title, panels)), 0o644); err != nil {
				fatal(err)
			}
			fmt.Fprintf(&md, "Chart: [%s](%s). Defaults: threads=%d, iters=%d, locks=%d.\n",
				file, file, microDefault.threads, microDefault.iters, microDefault.locks)
		}
		md.WriteString(legend)
	}
	if err := os.WriteFile(filepath.Join(*out, "table.md"), []byte(md.String()), 0o644); err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "tree:", err)
	os.Exit(1)
}

// load reads a whole trace into memory.
func load(path string) (*trace.Trace, error) {
	f, err := tracefile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tr, err := trace.ReadAll(f)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return tr, nil
}

const header = "| trace | events | % skipped (ft) | % skipped (hybrid) | ft heap KiB | Δ heap KiB | ft ms | tree+ft ms | % speed-up | ft first races same | hb pairs same |\n" +
	"|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n"

const legend = `
Columns: % skipped (ft) is the share of all events TREE drops with
tree.OptionsFor("fasttrack") (Relation HappensBefore, Span); % skipped
(hybrid) with Relation Hybrid (the thesis' model: lock releases are not
edges), shown for comparison and not timed; ft heap is fasttrack's live heap
after the trace, Δ heap what TREE in front adds to it; % speed-up is
(ft − tree+ft)/ft; "ft first races same" compares fasttrack's first racing
access per address with and without TREE (its guarantee), "hb pairs same"
hb's distinct site pairs per address with and without Relation
HappensBefore.
`

// result is one row.
type result struct {
	events               int
	skipFT, skipHybrid   float64
	heapFT, heapTree     int64
	timeFT, timeTree     time.Duration
	sameFirst, samePairs bool
	pairsFull, pairsTree int
}

func (r result) row(name string) string {
	speed := 100 * float64(r.timeFT-r.timeTree) / float64(r.timeFT)
	return fmt.Sprintf("| %s | %d | %.2f | %.2f | %d | %+d | %.2f | %.2f | %.1f | %v | %v |\n",
		name, r.events, r.skipFT, r.skipHybrid, r.heapFT/1024, (r.heapTree-r.heapFT)/1024,
		ms(r.timeFT), ms(r.timeTree), speed, r.sameFirst, r.samePairs)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// measure runs fasttrack with and without TREE on tr.
func measure(tr *trace.Trace, n int) result {
	r := result{events: len(tr.Events)}
	ftOpts := tree.OptionsFor("fasttrack")
	r.skipFT = skipped(tr, ftOpts)
	r.skipHybrid = skipped(tr, tree.Options{Relation: tree.Hybrid})

	// Guarantees.
	full, filt := collect(tr, nil, hb.NewFastTrack), collect(tr, tree.New(ftOpts), hb.NewFastTrack)
	r.sameFirst = fmt.Sprint(firstRace(full)) == fmt.Sprint(firstRace(filt))
	hfull, hfilt := collect(tr, nil, hb.New), collect(tr, tree.New(tree.Options{Relation: tree.HappensBefore}), hb.New)
	r.samePairs = fmt.Sprint(pairsByAddr(hfull)) == fmt.Sprint(pairsByAddr(hfilt))

	// Memory: the live heap with the analysis' state still referenced.
	r.heapFT = liveHeap(tr, false)
	r.heapTree = liveHeap(tr, true)

	// Time: best of n, alternating so that both see the same machine.
	r.timeFT, r.timeTree = time.Duration(1<<62), time.Duration(1<<62)
	for range n {
		r.timeFT = min(r.timeFT, timed(tr, false))
		r.timeTree = min(r.timeTree, timed(tr, true))
	}
	return r
}

func skipped(tr *trace.Trace, o tree.Options) float64 {
	f := tree.New(o)
	for i := range tr.Events {
		f.Keep(&tr.Events[i])
	}
	return 100 * float64(f.Stats().Dropped) / float64(max(len(tr.Events), 1))
}

func collect[D detect.Detector](tr *trace.Trace, f *tree.Filter, mk func(finding.Sink) D) []finding.Race {
	var races []finding.Race
	d := mk(finding.SinkFunc(func(x *finding.Race) { races = append(races, *x) }))
	for i := range tr.Events {
		e := &tr.Events[i]
		if f == nil || f.Keep(e) {
			d.Handle(e)
		}
	}
	d.Finish()
	return races
}

func firstRace(rs []finding.Race) map[uint64]uint64 {
	m := map[uint64]uint64{}
	for _, x := range rs {
		if s, ok := m[x.Addr]; !ok || x.Cur.Seq < s {
			m[x.Addr] = x.Cur.Seq
		}
	}
	return m
}

func pairsByAddr(rs []finding.Race) map[uint64][]finding.Pair {
	m := map[uint64][]finding.Pair{}
	for _, x := range rs {
		if p := x.Pair(); !slices.Contains(m[x.Addr], p) {
			m[x.Addr] = append(m[x.Addr], p)
		}
	}
	for _, ps := range m {
		finding.SortPairs(ps)
	}
	return m
}

// run feeds tr to a fresh fasttrack, through TREE if filter.
func run(tr *trace.Trace, filter bool) (*hb.FastTrack, *tree.Filter) {
	d := hb.NewFastTrack(nil)
	var f *tree.Filter
	if filter {
		f = tree.New(tree.OptionsFor("fasttrack"))
	}
	for i := range tr.Events {
		e := &tr.Events[i]
		if f == nil || f.Keep(e) {
			d.Handle(e)
		}
	}
	return d, f
}

func timed(tr *trace.Trace, filter bool) time.Duration {
	runtime.GC()
	start := time.Now()
	run(tr, filter)
	return time.Since(start)
}

func liveHeap(tr *trace.Trace, filter bool) int64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	before := m.HeapAlloc
	d, f := run(tr, filter)
	runtime.GC()
	runtime.ReadMemStats(&m)
	runtime.KeepAlive(d)
	runtime.KeepAlive(f)
	return int64(m.HeapAlloc) - int64(before)
}
