// Package locks exercises the relative lockset analysis: defer, RWMutex
// read locks, TryLock, locks in structs reached through parameters, and
// locks taken and released in other functions (lockUpdate over summaries).
package locks

import "sync"

type Counter struct {
	mu sync.Mutex
	n  int
}

// Inc holds c.mu through a deferred unlock: at exit c.mu is released.
func (c *Counter) Inc() { // want Inc:`lock \(\{\}, \{c.mu\}\), 2 accesses\n  read c.n \(\{c.mu\}, \{\}\) at .*locks.go:17:4\n  write c.n \(\{c.mu\}, \{\}\)`
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++ // want `potential race on c.n: write at locks.go:17:4 in goroutine \(\*Counter\).Inc started at locks.go:41:3 holding \{c.mu\}, and read at locks.go:24:11 in deferAndHelpers after the go statement at locks.go:41:3 holding no lock`
}

// Get reads c.n after releasing the lock.
func (c *Counter) Get() int { // want Get:`lock \(\{\}, \{c.mu\}\), 1 accesses\n  read c.n \(\{\}, \{c.mu\}\)`
	c.mu.Lock()
	c.mu.Unlock()
	return c.n // want `potential race on c.n: read at locks.go:24:11 in deferAndHelpers after the go statement at locks.go:42:3 holding no lock, and write at locks.go:35:4 in goroutine AddVia started at locks.go:42:3 holding \{c.mu\}`
}

// Acquire and Release take and drop the lock in separate functions: their
// summaries are ({c.mu}, {}) and ({}, {c.mu}).
func Acquire(c *Counter) { c.mu.Lock() }   // want Acquire:`lock \(\{c.mu\}, \{\}\), 0 accesses`
func Release(c *Counter) { c.mu.Unlock() } // want Release:`lock \(\{\}, \{c.mu\}\), 0 accesses`

// AddVia is protected by the lock Acquire took: lockUpdate carries it.
func AddVia(c *Counter) { // want AddVia:`lock \(\{\}, \{c.mu\}\), 2 accesses\n  read c.n \(\{c.mu\}, \{\}\)`
	Acquire(c)
	c.n += 2
	Release(c)
}

func deferAndHelpers(c *Counter) {
	for i := 0; i < 4; i++ {
		go c.Inc()
		go AddVia(c)
	}
	_ = c.Get()
}

type Table struct {
	rw sync.RWMutex
	m  map[string]int
	v  int
}

func (t *Table) lookup(k string) int {
	t.rw.RLock()
	defer t.rw.RUnlock()
	return t.m[k]
}

func (t *Table) store(k string, v int) {
	t.rw.Lock()
	t.m[k] = v
	t.rw.Unlock()
}

// badStore writes under the read lock: two writers can hold it together.
func (t *Table) badStore(v int) {
	t.rw.RLock()
	t.v = v // want `potential race on t.v: write at locks.go:68:4 in goroutine \(\*Table\).badStore started at locks.go:76:3 holding \{t.rw \(read\)\}, and write at locks.go:68:4 in another instance of the same goroutine holding \{t.rw \(read\)\}`
	t.rw.RUnlock()
}

func readWrite(t *Table) {
	for i := 0; i < 4; i++ {
		go t.lookup("a")
		go t.store("a", i)
		go t.badStore(i)
	}
}

type Gauge struct {
	mu sync.Mutex
	v  int
}

// tryAdd touches g.v only where TryLock succeeded.
func (g *Gauge) tryAdd() {
	if g.mu.TryLock() {
		g.v++ // want `potential race on g.v: read at locks.go:88:5 in goroutine \(\*Gauge\).tryAdd started at locks.go:108:3 holding \{g.mu\}, and write at locks.go:96:4 in goroutine \(\*Gauge\).tryIgnored started at locks.go:111:2 holding no lock`
		g.mu.Unlock()
	}
}

// tryIgnored ignores TryLock's result: the lock may not be held.
func (g *Gauge) tryIgnored() {
	g.mu.TryLock()
	g.v = 0 // want `potential race on g.v: write at locks.go:96:4 in goroutine \(\*Gauge\).tryIgnored started at locks.go:111:2 holding no lock, and write at locks.go:96:4 in another instance of the same goroutine` `potential race on g.v: write at locks.go:96:4 in goroutine \(\*Gauge\).tryIgnored started at locks.go:111:2 holding no lock, and read at locks.go:102:4 in goroutine \(\*Gauge\).add started at locks.go:109:3 holding \{g.mu\}`
	g.mu.Unlock()
}

func (g *Gauge) add() {
	g.mu.Lock()
	g.v++
	g.mu.Unlock()
}

func tryLocks(g *Gauge) {
	for i := 0; i < 2; i++ {
		go g.tryAdd()
		go g.add()
	}
	go g.tryIgnored()
}

// CondDefer defers the unlock on one branch only: at exit the deferred
// call may or may not run, so c.mu is maybe released, and c.n is accessed
// with no lock surely held.
func CondDefer(c *Counter, b bool) { // want CondDefer:`lock \(\{\}, \{c.mu\}\), 1 accesses\n  write c.n \(\{\}, \{\}\)`
	if b {
		c.mu.Lock()
		defer c.mu.Unlock()
	}
	c.n = 1
}

// DeferClosure unlocks in a deferred closure that also touches c.n: the
// closure's accesses run at exit, under the lock.
func DeferClosure(c *Counter) { // want DeferClosure:`lock \(\{\}, \{c.mu\}\), 2 accesses\n  read c.n \(\{c.mu\}, \{\}\).*\n  write c.n \(\{c.mu\}, \{\}\)`
	c.mu.Lock()
	defer func() {
		c.n++
		c.mu.Unlock()
	}()
}
