// Package pecanatomic is a check-then-act on a stock counter (the
// subjects' shop in small): Buy looks at the stock without the lock and
// takes an item under it, so two buyers that both saw the last item both
// take it. Buy is marked //racekit:atomic, the programmer's intent that
// the look and the take happen together: PECAN's atomicity violation
// r(1)-w(2)-w(2), another buyer's take between this buyer's look and take.
// Peek makes the same accesses without the mark, so it has no region and
// no atomicity violation.
package pecanatomic

import "sync"

// Shop holds a stock of items.
type Shop struct {
	mu    sync.Mutex
	stock int
}

// Buy takes one item if it sees one.
//
//racekit:atomic
func (s *Shop) Buy() bool {
	if s.stock <= 0 { // 1
		return false
	}
	s.mu.Lock()
	s.stock-- // 2
	s.mu.Unlock()
	return true
}

// Peek returns the stock, then counts a look under the lock.
func (s *Shop) Peek(looks *int) int {
	n := s.stock // 3
	s.mu.Lock()
	*looks++ // 4
	s.mu.Unlock()
	return n
}

// Run lets two buyers buy from a stock of two (both take an item, so the
// recorded run has both takes), and two lookers look.
func Run() (stock, looks int) {
	s := &Shop{stock: 2}
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.Buy()
		}()
	}
	wg.Wait()
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.Peek(&looks)
		}()
	}
	wg.Wait()
	return s.stock, looks
}
