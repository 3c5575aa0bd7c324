// For loops whose condition reads shared memory: the condition moves into
// the loop region's iterations.
package p

import "sync"

var limit = 10

type box struct {
	mu sync.Mutex
	n  int
}

func condOnly(xs []int) (s int) {
	for i := 0; i < limit; i++ {
		s += i
	}
	return s
}

func condAndBody(b *box, p *int) {
	for j := 0; j < *p; j += 2 {
		b.n++
		if j > 4 {
			continue
		}
	}
}

func condWithSync(b *box) {
outer:
	for b.n < limit {
		b.mu.Lock()
		b.n++
		b.mu.Unlock()
		if b.n > 100 {
			break outer
		}
	}
}
