// Package spawncall: a function that starts a goroutine returns while the
// goroutine runs; its caller's accesses after the call run in parallel
// with the goroutine's.
package spawncall

import "sync"

type worker struct {
	mu sync.Mutex
	n  int
	m  int
}

func (w *worker) run() {
	w.n++ // want `potential race on new@spawncall.go:29:16.n: write at spawncall.go:15:4 in goroutine \(\*worker\).run started at spawncall.go:23:2 holding no lock, and read at spawncall.go:30:11 in use after the call to newWorker at spawncall.go:29:16 holding no lock`
	w.mu.Lock()
	w.m++
	w.mu.Unlock()
}

func newWorker() *worker {
	w := &worker{}
	go w.run()
	return w
}

// use reads what the worker writes, with no lock: a race.
func use() int {
	w := newWorker()
	return w.n
}

// useLocked reads m under the worker's lock: race-free.
func useLocked() int {
	w := newWorker()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.m
}

// start writes the caller's object in a goroutine (two calls of start
// race with each other as well).
func start(p *worker, wg *sync.WaitGroup) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		p.m = 1 // want `potential race on p.m: write at spawncall.go:47:5 in goroutine start\$1 started at spawncall.go:45:2 holding no lock, and read at spawncall.go:55:11 in startAndRead after the call to start at spawncall.go:54:7 holding no lock` `potential race on p.m: write at spawncall.go:47:5 in goroutine start\$1 started at spawncall.go:45:2 holding no lock, and write at spawncall.go:47:5 in another instance`
	}()
}

// startAndRead reads the field the goroutine writes: a race.
func startAndRead(p *worker) int {
	var wg sync.WaitGroup
	start(p, &wg)
	return p.m
}

// startAndWait joins its goroutine before returning: its caller's read is
// race-free (two calls of startAndWait on one p still race).
func startAndWait(p *worker) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		p.n = 2 // want `potential race on p.n: write at spawncall.go:65:5 in goroutine startAndWait\$1 started at spawncall.go:63:2 holding no lock, and write at spawncall.go:65:5 in another instance`
	}()
	wg.Wait()
}

func waitAndRead(p *worker) int {
	startAndWait(p)
	return p.n
}
