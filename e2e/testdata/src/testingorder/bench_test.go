package testingorder

import (
	"sync/atomic"
	"testing"
)

// BenchmarkNoRaceRunParallelJoin: RunParallel returns after its
// goroutines end.
func BenchmarkNoRaceRunParallelJoin(b *testing.B) {
	b.SetParallelism(2)
	slots := make([]int, 64)
	var next atomic.Int32
	b.RunParallel(func(pb *testing.PB) {
		i := next.Add(1) - 1
		for pb.Next() {
			slots[i%64]++
		}
	})
	sum := 0
	for _, s := range slots {
		sum += s
	}
	_ = sum
}

var parX int

// BenchmarkRaceRunParallel: RunParallel's goroutines run concurrently.
func BenchmarkRaceRunParallel(b *testing.B) {
	b.SetParallelism(2)
	b.RunParallel(func(pb *testing.PB) {
		parX++ // race: runparallel
		for pb.Next() {
		}
	})
}
