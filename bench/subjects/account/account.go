// Package account is a Go version of ConTest's Account (PECAN Table 1:
// 148 lines, 3 threads, 4 shared variables). Each account guards its
// balance with its own mutex for deposits, withdrawals and reads; a
// transfer locks only the source account while it credits the target, so
// the credit races with every locked access of the target account.
package account

import "sync"

// Config sizes a run.
type Config struct {
	Accounts   int // number of accounts
	Goroutines int // teller goroutines
	Iterations int // operations per teller
	Audit      bool
}

// DefaultConfig is the size the test uses.
func DefaultConfig() Config {
	return Config{Accounts: 3, Goroutines: 3, Iterations: 20, Audit: true}
}

// Account is one bank account.
type Account struct {
	mu      sync.Mutex
	Name    string
	balance int64
}

// Deposit adds n under the account's lock.
func (a *Account) Deposit(n int64) {
	a.mu.Lock()
	// Locked by a.mu, but Transfer writes the same balance holding only
	// the source account's lock: no common lock, no order.
	a.balance += n // racekit:race id=acct-td kind=race benign=false racekit:norace id=acct-n1 why="see Total"
	a.mu.Unlock()
}

// Withdraw subtracts n under the account's lock.
func (a *Account) Withdraw(n int64) {
	a.mu.Lock()
	a.balance -= n // racekit:race id=acct-tw kind=race benign=false racekit:norace id=acct-n2 why="see Total"
	a.mu.Unlock()
}

// Transfer moves n from a to to. The bug of the original: it is
// "synchronized" on the source only.
func (a *Account) Transfer(to *Account, n int64) {
	a.mu.Lock()
	// The debit is locked by a.mu; it races with credits of transfers
	// into a, which do not hold a.mu.
	a.balance -= n // racekit:race id=acct-tx kind=race benign=false racekit:norace id=acct-n3 why="see Total"
	// The credit holds a.mu, not to.mu: it races with to's deposits,
	// withdrawals, debits and balance reads, and with other transfers
	// into the same account.
	to.balance += n // racekit:race id=acct-td,acct-tw,acct-tx,acct-tb kind=race benign=false racekit:race id=acct-tt kind=race benign=false self racekit:norace id=acct-n4 why="see Total"
	a.mu.Unlock()
}

// Balance reads the balance under the account's lock.
func (a *Account) Balance() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.balance // racekit:race id=acct-tb kind=race benign=false
}

// Bank holds the accounts.
type Bank struct {
	Accounts []*Account
}

// NewBank opens n accounts with 1000 each.
func NewBank(n int) *Bank {
	b := &Bank{}
	for i := 0; i < n; i++ {
		b.Accounts = append(b.Accounts, &Account{Name: string(rune('A' + i%26)), balance: 1000})
	}
	return b
}

// Total sums the balances without locking: it is only called once every
// teller is done.
func (b *Bank) Total() int64 {
	var t int64
	for _, a := range b.Accounts {
		// After wg.Wait: ordered after every teller's accesses, though no
		// lock is held (a lockset analysis flags it).
		t += a.balance // racekit:norace id=acct-n1,acct-n2,acct-n3,acct-n4 why="read after wg.Wait joined every teller"
	}
	return t
}

// Result is what a run computed.
type Result struct {
	Total    int64 // sum of balances at the end
	Expected int64 // what it must be: initial + deposits - withdrawals
	Audits   int   // balance reads by the auditor
}

// Run lets the tellers work on the bank and returns the final total. With
// one teller the total is exact; with more, lost credits may change it.
func Run(cfg Config) Result {
	if cfg.Accounts < 2 {
		cfg.Accounts = 2
	}
	b := NewBank(cfg.Accounts)
	expected := int64(1000 * cfg.Accounts)
	var wg sync.WaitGroup
	for g := 0; g < cfg.Goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			own := b.Accounts[g%cfg.Accounts]
			for i := 0; i < cfg.Iterations; i++ {
				to := b.Accounts[(g+1+i%(cfg.Accounts-1))%cfg.Accounts]
				if to == own {
					to = b.Accounts[(g+1)%cfg.Accounts]
				}
				switch i % 3 {
				case 0:
					own.Deposit(10)
				case 1:
					own.Withdraw(5)
				default:
					own.Transfer(to, 7)
				}
			}
		}(g)
		for i := 0; i < cfg.Iterations; i++ {
			switch i % 3 {
			case 0:
				expected += 10
			case 1:
				expected -= 5
			}
		}
	}
	audits := 0
	if cfg.Audit {
		// The auditor reads every balance while the tellers run; its own
		// count is joined below by the channel.
		done := make(chan int)
		go func() {
			n := 0
			for i := 0; i < cfg.Iterations; i++ {
				for _, a := range b.Accounts {
					a.Balance()
					n++
				}
			}
			done <- n
		}()
		audits = <-done
	}
	wg.Wait()
	return Result{Total: b.Total(), Expected: expected, Audits: audits}
}
