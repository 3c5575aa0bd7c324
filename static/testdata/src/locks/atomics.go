package locks

import "sync/atomic"

type hits struct {
	n int64
	m atomic.Int64
}

// bump uses sync/atomic only: not data accesses, no race.
func (h *hits) bump() {
	atomic.AddInt64(&h.n, 1)
	h.m.Add(1)
	_ = atomic.LoadInt64(&h.n)
}

func atomics(h *hits) {
	for i := 0; i < 3; i++ {
		go h.bump()
	}
}
