package main

import (
	"fmt"

	"github.com/racekit/racekit/trace"
)

// micro is the micro-benchmarks' three parameters (Figure 5.2's axes).
type micro struct{ threads, iters, locks int }

// microDefault is the point each sweep varies one parameter from.
var microDefault = micro{threads: 4, iters: 2000, locks: 3}

// params are the sweeps of Figures 5.2 and 5.3: threads, iterations, locks.
var params = []struct {
	name   string
	values []int
	set    func(*micro, int)
}{
	{"threads", []int{1, 2, 4, 8, 16, 32}, func(m *micro, v int) { m.threads = v }},
	{"iters", []int{100, 500, 1000, 2000, 5000, 10000}, func(m *micro, v int) { m.iters = v }},
	{"locks", []int{1, 2, 4, 8, 16, 32}, func(m *micro, v int) { m.locks = v }},
}

// figures are the two micro-benchmarks.
var figures = []struct {
	name, what string
	gen        func(micro) *trace.Trace
}{
	{"5.2", "Figure 5.1's program, TREE at its best", figure51},
	{"5.3", "Figure 5.3's program, TREE's weakness", figure53},
}

// figure51 is the trace of Figure 5.1's program: T0 forks num_threads
// threads; each, num_iters times, acquires the shared locks L[1..k],
// does x = x + 1 (a read and a write of x at one line), and releases them.
// The threads take turns an iteration at a time (each iteration releases
// every lock, so any interleaving of whole iterations is feasible).
func figure51(m micro) *trace.Trace {
	return microTrace(m, false)
}

// figure53 is the trace of Figure 5.3's program: T0 increments x before
// forking each thread (the program's one race, with every thread's
// increments), and each thread takes its own private locks Li[1..k].
func figure53(m micro) *trace.Trace {
	return microTrace(m, true)
}

func microTrace(m micro, weak bool) *trace.Trace {
	b := trace.NewBuilder()
	b.Begin("T0")
	var ts []string
	for i := 1; i <= m.threads; i++ {
		t := fmt.Sprintf("T%d", i)
		if weak {
			b.Read("T0", "x", "fig.go:3")
			b.Write("T0", "x", "fig.go:3")
		}
		b.Fork("T0", t, "fig.go:4")
		b.Begin(t)
		ts = append(ts, t)
	}
	lock := func(t string, k int) string {
		if weak {
			return fmt.Sprintf("%s.L%d", t, k)
		}
		return fmt.Sprintf("L%d", k)
	}
	for range m.iters {
		for _, t := range ts {
			for k := range m.locks {
				b.Acq(t, lock(t, k))
			}
			b.Read(t, "x", "fig.go:10")
			b.Write(t, "x", "fig.go:10")
			for k := m.locks - 1; k >= 0; k-- {
				b.Rel(t, lock(t, k))
			}
		}
	}
	for _, t := range ts {
		b.End(t)
		b.Join("T0", t)
	}
	b.End("T0")
	return b.Trace()
}
