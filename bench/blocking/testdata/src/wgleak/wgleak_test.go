// Package wgleak: WaitGroup, a Wait whose Done never comes. A collector
// waits for all workers and closes the results; a worker that fails returns
// without Done, so the collector waits forever.
//
// truth: leak
package wgleak

import (
	"errors"
	"sync"
	"testing"
	"time"
)

func work(i int) error {
	if i == 2 {
		return errors.New("failed")
	}
	return nil
}

func TestWorkers(t *testing.T) {
	var wg sync.WaitGroup
	results := make(chan error, 4)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			if err := work(i); err != nil {
				results <- err
				return // Done forgotten on the error path
			}
			results <- nil
			wg.Done()
		}()
	}
	go func() {
		wg.Wait()
		close(results)
	}()
	for i := 0; i < 4; i++ {
		<-results
	}
	time.Sleep(10 * time.Millisecond)
}
