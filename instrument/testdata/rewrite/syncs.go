// Package sync: mutexes, embedded locks, WaitGroup, Once, Cond, Locker,
// sync.Map and OnceValue.
package p

import "sync"

type guarded struct {
	sync.Mutex
	rw   sync.RWMutex
	data map[int]int
}

var (
	wg   sync.WaitGroup
	once sync.Once
	conf map[string]string
)

func locks(g *guarded, l sync.Locker, c *sync.Cond, m *sync.Map) {
	g.Lock()
	defer g.Unlock()
	g.rw.RLock()
	_ = g.data[1]
	g.rw.RUnlock()
	if g.rw.TryLock() {
		g.rw.Unlock()
	}
	l.Lock()
	l.Unlock()
	wg.Add(1)
	go func() {
		defer wg.Done()
		once.Do(func() { conf = map[string]string{} })
	}()
	wg.Wait()
	c.L.Lock()
	c.Wait()
	c.Broadcast()
	c.L.Unlock()
	m.Store("k", 1)
	if v, ok := m.Load("k"); ok {
		_ = v
	}
	wg.Go(func() {})
}

var tableOnce = sync.OnceValue(func() []int { return []int{1} })

type rwGuarded struct {
	sync.RWMutex
	n int
}

// Method values of hooked methods without parameters are their hooks,
// bound to the receiver (rt.Bind); called where they are, hooked calls.
func methodValues(wg *sync.WaitGroup, g *rwGuarded, run func(func())) {
	var mu sync.Mutex
	run(wg.Done)
	unlock := mu.Unlock
	mu.Lock()
	run(unlock)
	run(g.RUnlock)
	add := wg.Add // a parameter: not bound
	add(1)
	mu.Lock()
}
