// Package handoffok: no bug. Opposite lock orders in two goroutines, but
// the second starts only after the first hands it a token over a channel
// (ordered by happens-before: both requests cannot be pending at once).
//
// truth: none
package handoffok

import (
	"sync"
	"testing"
)

type account struct {
	mu  sync.Mutex
	bal int
}

func transfer(from, to *account, n int) {
	from.mu.Lock()
	defer from.mu.Unlock()
	to.mu.Lock()
	defer to.mu.Unlock()
	from.bal -= n
	to.bal += n
}

func TestTransfers(t *testing.T) {
	a, b := &account{bal: 10}, &account{bal: 10}
	token := make(chan bool)
	done := make(chan bool)
	go func() {
		<-token
		transfer(b, a, 1)
		done <- true
	}()
	transfer(a, b, 1)
	token <- true
	<-done
}
