// Package lazyinit is racekit hatch's --record-preempt test
// (hatch_test.go): two workers may both see a nil table and both store
// one, but only if one is interrupted between its check and its store,
// which the controlled random scheduler never does when only
// synchronization is a scheduling point.
package lazyinit

import "sync"

type table struct{ hits [4]int }

// Program builds its table on first use.
type Program struct {
	mu    sync.Mutex
	cache *table
	n     int
}

func (p *Program) tbl() *table {
	if p.cache == nil {
		p.cache = &table{} // STORE: every worker that saw nil stores
	}
	return p.cache
}

// Work bumps a counter under the lock, then uses the table.
func (p *Program) Work(id int) {
	p.mu.Lock()
	p.n++
	p.mu.Unlock()
	p.tbl().hits[id%4]++
}
