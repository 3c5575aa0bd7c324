// Package safecheck: no bug. The check-then-act of checkthenact, but take
// checks again under its own holding of the lock: interleaved between its
// two sections, buy still never oversells.
//
// truth: none
package safecheck

import (
	"sync"
	"testing"
	"time"
)

type shop struct {
	mu    sync.Mutex
	stock int
}

func (s *shop) available() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stock > 0
}

func (s *shop) take() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stock == 0 {
		return false
	}
	s.stock--
	return true
}

func (s *shop) buy() bool {
	return s.available() && s.take()
}

func TestLastItem(t *testing.T) {
	s := &shop{stock: 1}
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func(late bool) {
			defer wg.Done()
			if late {
				time.Sleep(10 * time.Millisecond)
			}
			s.buy()
		}(i == 1)
	}
	wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stock < 0 {
		t.Errorf("oversold: %d", s.stock)
	}
}
