// Package golocks: a lock that each instance of a goroutine allocates for
// itself protects nothing across instances (section 3.4: the lockset of a
// thread root is common to its instances only for the objects they share).
package golocks

import "sync"

var a, b, c, d, e int

// localVar: each instance locks its own mutex.
func localVar(n int) {
	for i := 0; i < n; i++ {
		go func() {
			var mu sync.Mutex
			mu.Lock()
			a++ // want `potential race on golocks.a: write at golocks.go:16:4 in goroutine localVar\$1 started at golocks.go:13:3 holding \{mu\}, and read at golocks.go:16:4 in another instance of the same goroutine holding \{mu\}`
			mu.Unlock()
		}()
	}
}

type guard struct{ mu sync.Mutex }

// perInstance: each instance allocates its own guard.
func perInstance(n int) {
	for i := 0; i < n; i++ {
		go func() {
			g := &guard{}
			g.mu.Lock()
			b++ // want `potential race on golocks.b: write at golocks.go:30:4 in goroutine perInstance\$1 started at golocks.go:27:3 holding \{.*\}, and read at golocks.go:30:4 in another instance of the same goroutine`
			g.mu.Unlock()
		}()
	}
}

// perIteration: the spawner allocates a mutex per iteration, one per
// goroutine instance.
func perIteration(n int) {
	for i := 0; i < n; i++ {
		mu := new(sync.Mutex)
		go func() {
			mu.Lock()
			c++ // want `potential race on golocks.c: write at golocks.go:43:4 in goroutine perIteration\$1 started at golocks.go:41:3 holding \{.*\}, and read at golocks.go:43:4 in another instance of the same goroutine`
			mu.Unlock()
		}()
	}
}

var gmu sync.Mutex

// shared: race-free, one package-level mutex for all instances.
func shared(n int) {
	for i := 0; i < n; i++ {
		go func() {
			gmu.Lock()
			d++
			gmu.Unlock()
		}()
	}
}

// sharedBySpawner: race-free, the spawner allocates one mutex before the
// loop and every instance locks it.
func sharedBySpawner(n int) {
	mu := new(sync.Mutex)
	for i := 0; i < n; i++ {
		go func() {
			mu.Lock()
			e++
			mu.Unlock()
		}()
	}
}
