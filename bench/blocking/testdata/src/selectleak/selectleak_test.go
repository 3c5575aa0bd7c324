// Package selectleak: channel, a select no case of which can proceed. A
// watcher waits for an update or a stop signal; the owner returns without
// sending either.
//
// truth: leak
package selectleak

import (
	"testing"
	"time"
)

func watch(updates <-chan int, stop <-chan struct{}) {
	go func() {
		for {
			select {
			case <-updates:
			case <-stop:
				return
			}
		}
	}()
}

func TestWatch(t *testing.T) {
	updates, stop := make(chan int), make(chan struct{})
	watch(updates, stop)
	updates <- 1
	time.Sleep(10 * time.Millisecond)
	// close(stop) forgotten
}
