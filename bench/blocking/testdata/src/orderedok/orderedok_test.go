// Package orderedok: no bug. Transfers lock the two accounts in a global
// order (by id), whatever the direction.
//
// truth: none
package orderedok

import (
	"sync"
	"testing"
)

type account struct {
	id  int
	mu  sync.Mutex
	bal int
}

func transfer(from, to *account, n int) {
	a, b := from, to
	if b.id < a.id {
		a, b = b, a
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	b.mu.Lock()
	defer b.mu.Unlock()
	from.bal -= n
	to.bal += n
}

func TestTransfers(t *testing.T) {
	a, b := &account{id: 1, bal: 10}, &account{id: 2, bal: 10}
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(2)
		go func() { defer wg.Done(); transfer(a, b, 1) }()
		go func() { defer wg.Done(); transfer(b, a, 1) }()
	}
	wg.Wait()
	if a.bal+b.bal != 20 {
		t.Fatal("money lost")
	}
}
