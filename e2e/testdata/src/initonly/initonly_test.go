package initonly

import (
	"fmt"
	"sync"
	"testing"
)

var sink int

func TestAllocsIdentity(t *testing.T) {
	fmt.Println("identity allocs:", testing.AllocsPerRun(100, func() {
		p := NewIdentityPoint()
		sink = p.y
	}))
}

// TestNoRaceTable: two goroutines read the table.
func TestNoRaceTable(t *testing.T) {
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = Sum([]byte("abcd"))
		}()
	}
	wg.Wait()
}
