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

// sendsOnly's loops record nothing but their sends, whose reads of the
// channel the sampling flag governs (syncFlag): they are loop regions too,
// whose iterations cannot run as written (a send's hooks are in both).
func sendsOnly(ch chan int, in chan int) {
	for i := 0; i < 100; i++ {
		ch <- i
	}
	for v := range in {
		ch <- v
	}
	close(ch)
}
