// Package checkact is a check-then-act on a locked counter (issue 30,
// AtomFuzzer): Buy checks that an item is left and takes it, each under
// the lock, but not under one holding of it. Two buyers of the last item
// who both check before either takes sell it twice. No access races (each
// is locked), and in the usual run the second buyer comes late, sees the
// item gone and never takes: nothing for a race detector or for PECAN's
// prediction. racekit fuzz -atomicity pauses the first buyer between its
// two sections and the test fails: "oversold: -1".
package checkact

import "sync"

type Shop struct {
	mu    sync.Mutex
	stock int
}

func (s *Shop) Available() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stock > 0
}

func (s *Shop) Take() {
	s.mu.Lock()
	s.stock--
	s.mu.Unlock()
}

// Buy takes an item if one is left.
func (s *Shop) Buy() bool {
	if s.Available() {
		s.Take()
		return true
	}
	return false
}

func (s *Shop) Stock() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stock
}

// SafeShop's Take checks again under its lock: interleaved, Buy still
// never oversells (racekit fuzz -atomicity: "interleaved", not confirmed).
type SafeShop struct {
	mu    sync.Mutex
	stock int
}

func (s *SafeShop) Available() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stock > 0
}

func (s *SafeShop) Take() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stock == 0 {
		return false
	}
	s.stock--
	return true
}

func (s *SafeShop) Buy() bool {
	return s.Available() && s.Take()
}

func (s *SafeShop) Stock() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stock
}
