package checkact

import (
	"sync"
	"testing"
	"time"
)

func TestLastItem(t *testing.T) {
	s := &Shop{stock: 1}
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func(late bool) {
			defer wg.Done()
			if late {
				time.Sleep(5 * time.Millisecond)
			}
			s.Buy()
		}(i == 1)
	}
	wg.Wait()
	if n := s.Stock(); n < 0 {
		t.Errorf("oversold: %d", n)
	}
}

func TestLastItemSafe(t *testing.T) {
	s := &SafeShop{stock: 1}
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func(late bool) {
			defer wg.Done()
			if late {
				time.Sleep(5 * time.Millisecond)
			}
			s.Buy()
		}(i == 1)
	}
	wg.Wait()
	if n := s.Stock(); n < 0 {
		t.Errorf("oversold: %d", n)
	}
}
