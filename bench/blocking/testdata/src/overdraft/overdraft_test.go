// Package overdraft: atomicity, a balance check and a withdrawal in two
// critical sections. Withdraw reads the balance under the lock and, if it
// covers the amount, debits under the lock again: two withdrawals that
// both see the money overdraw the account. The second comes late, so a
// plain run sees the balance spent.
//
// truth: atomicity
package overdraft

import (
	"sync"
	"testing"
	"time"
)

type account struct {
	mu  sync.Mutex
	bal int
}

func (a *account) balance() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.bal
}

func (a *account) debit(n int) {
	a.mu.Lock()
	a.bal -= n
	a.mu.Unlock()
}

func (a *account) withdraw(n int) bool {
	if a.balance() < n {
		return false
	}
	a.debit(n)
	return true
}

func TestNoOverdraft(t *testing.T) {
	a := &account{bal: 100}
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func(late bool) {
			defer wg.Done()
			if late {
				time.Sleep(10 * time.Millisecond)
			}
			a.withdraw(80)
		}(i == 1)
	}
	wg.Wait()
	if b := a.balance(); b < 0 {
		t.Errorf("overdrawn: balance %d", b)
	}
}
