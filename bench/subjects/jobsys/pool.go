package jobsys

import (
	"sync"
)

// Pool is the resizable set of workers. Its target size is written under
// its lock by Resize; workers read it without the lock to decide whether
// they may be surplus (js-size). The race is benign: a stale value only
// delays a surplus worker's exit by a job, and exit rechecks under the
// lock that enough workers remain.
type Pool struct {
	mu      sync.Mutex
	size    int // target
	running int // workers started and not yet exited, under mu
	started int // workers ever started, under mu (worker IDs)
	retired int // workers that exited as surplus, under mu
	wg      sync.WaitGroup
	sys     *System
}

func newPool(sys *System) *Pool { return &Pool{sys: sys} }

// Resize sets the target number of workers, starting workers to grow;
// surplus workers notice the new size and exit.
func (p *Pool) Resize(n int) {
	if n < 0 {
		n = 0
	}
	p.mu.Lock()
	p.size = n // racekit:race id=js-size kind=race benign=true
	for p.running < n {
		p.startLocked()
	}
	p.mu.Unlock()
	p.sys.queue.wake()
}

func (p *Pool) startLocked() {
	id := p.started
	p.started++
	p.running++
	p.wg.Add(1)
	go p.worker(id)
}

// Size is the target size.
func (p *Pool) Size() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.size
}

// Running is the number of live workers.
func (p *Pool) Running() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.running
}

// exit retires worker id if it is surplus (rechecking under the lock that
// enough workers remain).
func (p *Pool) exit(id int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.running <= p.size {
		return false
	}
	p.running--
	p.retired++
	return true
}

// worker runs jobs until it is surplus or the queue is closed and empty.
func (p *Pool) worker(id int) {
	defer p.wg.Done()
	for {
		// Unlocked read of the target size, written by Resize under mu.
		if id >= p.size && p.exit(id) { // racekit:race id=js-size kind=race benign=true
			return
		}
		j, ok := p.sys.queue.Pop()
		if !ok {
			if p.sys.queue.Closed() {
				p.mu.Lock()
				p.running--
				p.mu.Unlock()
				return
			}
			continue
		}
		p.sys.run(j)
	}
}

// wait waits for every worker to exit.
func (p *Pool) wait() { p.wg.Wait() }
