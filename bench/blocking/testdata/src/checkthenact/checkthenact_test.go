// Package checkthenact: atomicity, check-then-act on a locked counter.
// Buy checks that an item is left and takes it, each under the shop's
// lock but not under one holding of it: two buyers of the last item who
// both check before either takes sell it twice. The second buyer comes
// late, so a plain run sees it find the item gone.
//
// truth: atomicity
package checkthenact

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

func (s *shop) take() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stock--
}

func (s *shop) buy() {
	if s.available() {
		s.take()
	}
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
