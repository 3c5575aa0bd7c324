package ifacecalls

import (
	"sync"
	"testing"
)

// TestRaceSharedFlag: two goroutines apply the shared HelpFlag, a race on
// its fields in Apply and WithSeparator.
func TestRaceSharedFlag(t *testing.T) {
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			Parse(&BoolFlag{Name: "v"})
		}()
	}
	wg.Wait()
}
