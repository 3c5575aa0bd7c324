// Package sleepers starts many goroutines that each sleep a millisecond:
// under the controlled scheduler, the sleeps run on the virtual clock, and
// a run takes about as long as a plain one (issue 33.5).
package sleepers

import (
	"sync"
	"time"
)

// Sleep starts n goroutines that each sleep d, and waits for them.
func Sleep(n int, d time.Duration) {
	var wg sync.WaitGroup
	wg.Add(n)
	for i := 0; i < n; i++ {
		go func() {
			defer wg.Done()
			time.Sleep(d)
		}()
	}
	wg.Wait()
}
