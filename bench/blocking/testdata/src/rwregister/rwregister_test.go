// Package rwregister: atomicity, a check under a read lock and an act
// under the write lock. Register looks the name up with RLock and, if it
// is new, appends it with Lock: two registrations of one name that both
// look before either appends list it twice. The second comes late, so a
// plain run finds the name taken.
//
// truth: atomicity
package rwregister

import (
	"sync"
	"testing"
	"time"
)

type registry struct {
	mu    sync.RWMutex
	names []string
}

func (r *registry) has(name string) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, n := range r.names {
		if n == name {
			return true
		}
	}
	return false
}

func (r *registry) add(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.names = append(r.names, name)
}

func (r *registry) register(name string) {
	if !r.has(name) {
		r.add(name)
	}
}

func TestUnique(t *testing.T) {
	r := &registry{}
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func(late bool) {
			defer wg.Done()
			if late {
				time.Sleep(10 * time.Millisecond)
			}
			r.register("svc")
		}(i == 1)
	}
	wg.Wait()
	if len(r.names) != 1 {
		t.Errorf("registered %d times: %v", len(r.names), r.names)
	}
}
