// Package closures exercises goroutines started on closures (captured
// variables are the closure's parameters), method values and bound
// methods, and goroutines that run once versus many times.
package closures

import "sync"

// captured: x is shared by the goroutine and the spawner's continuation.
func captured() int {
	x := 0
	go func() {
		x++ // want `potential race on x: read at closures.go:12:3 in goroutine captured\$1 started at closures.go:11:2 holding no lock, and write at closures.go:14:2 in captured after the go statement at closures.go:11:2 holding no lock` `potential race on x: write at closures.go:12:3 in goroutine captured\$1 started at closures.go:11:2 holding no lock, and read at closures.go:15:9 in captured after the go statement at closures.go:11:2 holding no lock`
	}()
	x = 2
	return x
}

// capturedLocked: the same under a mutex captured too.
func capturedLocked() int {
	var mu sync.Mutex
	x := 0
	go func() {
		mu.Lock()
		x++
		mu.Unlock()
	}()
	mu.Lock()
	defer mu.Unlock()
	return x
}

type worker struct {
	mu    sync.Mutex
	count int
	seen  int
}

func (w *worker) run() {
	w.count++ // want `potential race on w.count: write at closures.go:39:4 in goroutine \(\*worker\).run\$bound started at closures.go:50:3 holding no lock, and read at closures.go:39:4 in another instance of the same goroutine holding no lock`
	w.mu.Lock()
	w.seen++ // want `potential race on w.seen: write at closures.go:41:4 in goroutine \(\*worker\).run started at closures.go:57:2 holding \{w.mu\}, and read at closures.go:58:11 in direct after the go statement at closures.go:57:2 holding no lock`
	w.mu.Unlock()
}

// methodValue starts w.run as a method value in a loop: each instance
// races with the others on count, not on seen.
func methodValue(w *worker, n int) {
	f := w.run
	for i := 0; i < n; i++ {
		go f()
	}
}

// direct starts the method directly, once: it races with the spawner's
// read after it, not with itself.
func direct(w *worker) int {
	go w.run()
	return w.seen
}

func init() {
	direct(&worker{})
}

// loopVar: each iteration has its own i (Go 1.22), so instances do not
// share it; they do share total.
func loopVar(n int) {
	total := 0
	for i := 0; i < n; i++ {
		go func() {
			total += i // want `potential race on total: write at closures.go:71:4 in goroutine loopVar\$1 started at closures.go:70:3 holding no lock, and read at closures.go:71:4 in another instance of the same goroutine holding no lock`
		}()
	}
}
