package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	"github.com/racekit/racekit/trace"
	"github.com/racekit/racekit/trace/tracefile"
)

var cmdStats = register(&command{
	name:      "stats",
	usageLine: "stats [-progress=auto|on|off] FILE",
	short:     "summarize a trace: events by kind, goroutines, locks, variables, sites",
	long: `
Stats reads a trace in any format and prints how many events of each kind it
holds and how many distinct goroutines, locks, variables (addresses read or
written), sync objects, atomic words, functions and sites they use, and the
five sites with the most accesses. A range event (an access to many elements
at once: a copy, a std call's buffer, a loop's elements) is read whole and
counted once, with the accesses it stands for counted apart.
`,
})

// Set in init: run refers to the flags, which refer to the command.
func init() { cmdStats.run = runStats }

var statsProgress = cmdStats.flags.String("progress", "auto", "progress on stderr: auto, on, off")

func runStats(c *command, args []string) int {
	if len(args) != 1 {
		c.errorf("expected exactly one trace file")
		return exitUsage
	}
	f, err := tracefile.Open(args[0])
	if err != nil {
		c.errorf("%v", err)
		return exitError
	}
	defer f.Close()
	var (
		byOp     [trace.NumOps]int64
		gors     = map[trace.GID]bool{}
		objsByOp [trace.NumOps]map[uint64]struct{}
		sites    = map[trace.SiteID]bool{}
		e        trace.Event
		n        int64
		maxAddrs int
		// Range events are read whole (a range over a large buffer stands
		// for one access per element): each is counted once, its first
		// address a variable, its accesses added to its site's.
		ranges  = f.KeepRanges()
		covered int64 // accesses the range events stand for
		bySite  = map[trace.SiteID]int64{}
	)
	for i := range objsByOp {
		objsByOp[i] = map[uint64]struct{}{}
	}
	prog := newEventCounter(*statsProgress, "stats")
	start := time.Now()
	for {
		err := f.Next(&e)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			prog.done()
			printWarnings(c, f.Reader)
			c.errorf("%v", err)
			return exitError
		}
		n++
		byOp[e.Op]++
		gors[e.G] = true
		sites[e.Site] = true
		switch {
		case ranges && e.Op.IsRange():
			span := trace.Span(e.Value)
			k := int64(span.Count())
			if !span.Sparse() && span.Stride() > 1 {
				k = int64(span.Words())
			}
			covered += k
			bySite[e.Site] += k
			objsByOp[e.Op.WordOp()][e.Obj] = struct{}{}
		case e.Op.IsAccess():
			bySite[e.Site]++
			objsByOp[e.Op][e.Obj] = struct{}{}
		default:
			objsByOp[e.Op][e.Obj] = struct{}{}
		}
		maxAddrs = max(maxAddrs, len(e.Addrs))
		if n&(1<<18-1) == 0 {
			prog.update(n)
		}
	}
	prog.done()
	printWarnings(c, f.Reader)
	union := func(ops ...trace.Op) int {
		u := map[uint64]struct{}{}
		for _, op := range ops {
			for k := range objsByOp[op] {
				u[k] = struct{}{}
			}
		}
		return len(u)
	}
	w := os.Stdout
	fmt.Fprintf(w, "trace      %s (%s)\n", f.Name, f.Format)
	fmt.Fprintf(w, "events     %d (read in %v)\n", n, time.Since(start).Round(time.Millisecond))
	for op := trace.Op(1); int(op) < trace.NumOps; op++ {
		if byOp[op] > 0 {
			fmt.Fprintf(w, "  %-8s %d\n", op, byOp[op])
		}
	}
	if covered > 0 {
		fmt.Fprintf(w, "ranges     %d events standing for %d accesses (a word each, a byte each for byte ranges; each range's first address counted as a variable)\n",
			byOp[trace.OpReadRange]+byOp[trace.OpWriteRange], covered)
	}
	fmt.Fprintf(w, "goroutines %d\n", len(gors))
	fmt.Fprintf(w, "locks      %d\n", union(trace.OpAcquire, trace.OpRelease))
	fmt.Fprintf(w, "variables  %d\n", union(trace.OpRead, trace.OpWrite))
	fmt.Fprintf(w, "syncobjs   %d\n", union(trace.OpSyncRelease, trace.OpSyncAcquire))
	fmt.Fprintf(w, "atomics    %d\n", union(trace.OpAtomicLoad, trace.OpAtomicStore, trace.OpAtomicRMW))
	fmt.Fprintf(w, "functions  %d\n", union(trace.OpFuncEnter, trace.OpFuncExit))
	fmt.Fprintf(w, "untraced   %d callees (largest reachable set %d)\n", union(trace.OpMethodBegin), maxAddrs)
	fmt.Fprintf(w, "sites      %d used, %d defined\n", len(sites), len(f.Meta().Sites)-1)
	busiest(w, f.Meta(), bySite)
	return exitOK
}

// busiest prints the five sites with the most accesses (a range's
// elements counted), which is where a trace's size comes from.
func busiest(w io.Writer, m *trace.Meta, bySite map[trace.SiteID]int64) {
	ids := make([]trace.SiteID, 0, len(bySite))
	var total int64
	for id, k := range bySite {
		ids = append(ids, id)
		total += k
	}
	if total == 0 {
		return
	}
	sort.Slice(ids, func(i, j int) bool {
		if bySite[ids[i]] != bySite[ids[j]] {
			return bySite[ids[i]] > bySite[ids[j]]
		}
		return ids[i] < ids[j]
	})
	fmt.Fprintf(w, "busiest sites (accesses)\n")
	for _, id := range ids[:min(5, len(ids))] {
		name := fmt.Sprintf("site %d", id)
		if int(id) < len(m.Sites) {
			name = m.Sites[id].String()
		}
		fmt.Fprintf(w, "  %d (%.1f%%) %s\n", bySite[id], 100*float64(bySite[id])/float64(total), name)
	}
}
