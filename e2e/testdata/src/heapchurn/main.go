// Race-free heap churn (issue 28, memory reuse): workers own disjoint
// ranges of a shared slice; each round, each copies its range into a
// private slice grown by append, sorts the copy with sort.Slice, writes its
// range back and adds to a locked total. The garbage collector frees the
// copies and hands their memory out again, to other workers' copies: a
// detector that does not see those arrays as new objects relates accesses
// of dead and live copies at one address. Each round also builds a map of
// slices whose literals have their type elided (go-sockaddr's KnownRFCs
// does so at each call) and a slice of pointers to elided array
// literals, and writes into them. No race.
package main

import (
	"fmt"
	"runtime"
	"sort"
	"sync"
)

const (
	workers = 4
	per     = 64
	rounds  = 200
)

var kept []*[4]int

func main() {
	shared := make([]int, workers*per)
	for i := range shared {
		shared[i] = (i * 7919) % 1000
	}
	var mu sync.Mutex
	total := 0
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				var cp []int
				for i := lo; i < hi; i++ {
					cp = append(cp, shared[i]+r)
				}
				sort.Slice(cp, func(a, b int) bool { return cp[a] < cp[b] })
				sum := 0
				for i, v := range cp {
					shared[lo+i] = v - r
					sum += v
				}
				table := map[int][]int{1: {r, lo}, 2: {hi, r, lo, hi}, 3: {r, r, r, r, r, r, r, r}}
				for _, row := range table {
					row[0] += sum
					sum += row[len(row)-1]
				}
				cells := []*[4]int{{r}, {lo, hi}} // &[4]int{...} each
				cells[1][3] = sum
				sum += cells[0][0] + cells[1][3]
				mu.Lock()
				kept = cells // on the heap
				total += sum
				mu.Unlock()
				if r%20 == 0 {
					runtime.GC()
				}
			}
		}(w*per, (w+1)*per)
	}
	wg.Wait()
	fmt.Println(total > 0)
}
