// Package racytwice races on one address twice: go test -race reports a
// race whose accesses were made after an earlier report on that address
// (its race detector forgets only the accesses before a report), so both
// tests fail, TestTwice with two reports, but not one whose access is a
// copy of a struct, which it checks as a range, left unchecked there after
// a report: TestRangeSecond passes (e2e.TestReportsAfterReport).
package racytwice

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

var x int

func reader(done chan bool) {
	_ = x // race: x (twice in TestTwice)
	done <- true
}

// TestTwice races on x with two readers in turn: two reports.
func TestTwice(t *testing.T) {
	d := make(chan bool)
	go reader(d)
	time.Sleep(10 * time.Millisecond)
	x = 1
	<-d
	go reader(d)
	time.Sleep(10 * time.Millisecond)
	x = 2
	<-d
}

type counter struct {
	mu sync.Mutex
	n  int
}

var c = &counter{}

func (c *counter) inc() {
	c.mu.Lock()
	c.n++ // race: c.n
	c.mu.Unlock()
}

func later(d chan bool) {
	go func() {
		c.inc()
		time.Sleep(20 * time.Millisecond)
		d <- true
	}()
}

func readLater() int {
	d := make(chan bool)
	c.inc()
	later(d)
	time.Sleep(10 * time.Millisecond)
	n := c.n
	<-d
	return n
}

// TestFirst and TestSecond each race on c.n, the second with accesses
// made after the first's report: each fails.
func TestFirst(t *testing.T) { readLater() }

func TestSecond(t *testing.T) { readLater() }

type pair struct{ a, b int }

var (
	pmu sync.Mutex
	p   pair
)

func readPairLater() string {
	d := make(chan bool)
	go func() {
		pmu.Lock()
		p.a++ // race: p
		pmu.Unlock()
		time.Sleep(20 * time.Millisecond)
		d <- true
	}()
	time.Sleep(10 * time.Millisecond)
	s := fmt.Sprint(p) // a copy of p: a range access under go test -race
	<-d
	return s
}

// TestRangeFirst races on p through a copy of it; TestRangeSecond again,
// which go test -race does not see.
func TestRangeFirst(t *testing.T) { readPairLater() }

func TestRangeSecond(t *testing.T) { readPairLater() }
