// Package guardedok: no bug. Opposite lock orders, but every transfer runs
// under one bank-wide lock (a guard lock: the cycle cannot close).
//
// truth: none
package guardedok

import (
	"sync"
	"testing"
)

type account struct {
	mu  sync.Mutex
	bal int
}

var bank sync.Mutex

func transfer(from, to *account, n int) {
	bank.Lock()
	defer bank.Unlock()
	from.mu.Lock()
	defer from.mu.Unlock()
	to.mu.Lock()
	defer to.mu.Unlock()
	from.bal -= n
	to.bal += n
}

func TestTransfers(t *testing.T) {
	a, b := &account{bal: 10}, &account{bal: 10}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); transfer(a, b, 1) }()
	go func() { defer wg.Done(); transfer(b, a, 1) }()
	wg.Wait()
}
