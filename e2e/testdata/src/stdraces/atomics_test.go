package stdraces

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Atomics order what they order in Go's memory model, as go test -race
// sees it: a load synchronizes with the store (or read-modify-write) whose
// value it reads, and with nothing else. What comes before a load is not
// ordered before what comes after another load of the same word, nor after
// a later store; a store overwritten before the load is not what the load
// reads.

func TestRaceAtomicLoadLoad(t *testing.T) {
	var f int32
	x := 0
	done := make(chan bool)
	go func() {
		x = 1 // race: loadload
		atomic.LoadInt32(&f)
		done <- true
	}()
	time.Sleep(20 * time.Millisecond)
	atomic.LoadInt32(&f)
	x = 2 // race: loadload
	<-done
	sink = x
}

func TestRaceAtomicLoadThenStore(t *testing.T) {
	var f atomic.Int64
	x := 0
	done := make(chan bool)
	go func() {
		x = 1 // race: loadstore
		f.Load()
		done <- true
	}()
	time.Sleep(20 * time.Millisecond)
	f.Store(1)
	x = 2 // race: loadstore
	<-done
	sink = x
}

func TestRaceAtomicOverwrittenStore(t *testing.T) {
	var f int32
	x := 0
	done := make(chan bool)
	go func() {
		x = 1 // race: overwritten
		atomic.StoreInt32(&f, 1)
		done <- true
	}()
	time.Sleep(20 * time.Millisecond)
	atomic.StoreInt32(&f, 2)
	if atomic.LoadInt32(&f) == 2 {
		x = 2 // race: overwritten
	}
	<-done
	sink = x
}

// A CompareAndSwap that succeeds reads what the earlier store wrote and
// publishes to the load after it: no race.
func TestNoRaceAtomicStoreCASLoad(t *testing.T) {
	var f int32
	x, y := 0, 0
	go func() {
		x = 1
		atomic.StoreInt32(&f, 1)
	}()
	for !atomic.CompareAndSwapInt32(&f, 1, 2) {
		time.Sleep(time.Millisecond)
	}
	y = x
	go func() {
		y = 3
		atomic.AddInt32(&f, 1)
	}()
	for atomic.LoadInt32(&f) != 3 {
		time.Sleep(time.Millisecond)
	}
	x = y
}

// A CompareAndSwap that fails only reads the word: what comes before it is
// not ordered before what comes after a later one that succeeds.
func TestRaceAtomicFailedCAS(t *testing.T) {
	var f uint32
	x := 0
	done := make(chan bool)
	go func() {
		x = 1 // race: failedcas
		atomic.CompareAndSwapUint32(&f, 5, 6)
		done <- true
	}()
	time.Sleep(20 * time.Millisecond)
	if atomic.CompareAndSwapUint32(&f, 0, 1) {
		x = 2 // race: failedcas
	}
	<-done
	sink = x
}

// sync.Map's Load, and Range, only load atomically (Go 1.24 on): two of
// them order nothing.
func TestRaceSyncMapLoadLoad(t *testing.T) {
	var m sync.Map
	m.Store("a", 1)
	x := 0
	done := make(chan bool)
	go func() {
		x = 1 // race: maploadload
		m.Load("a")
		done <- true
	}()
	time.Sleep(20 * time.Millisecond)
	m.Load("a")
	x = 2 // race: maploadload
	<-done
	sink = x
}

func TestRaceSyncMapRangeRange(t *testing.T) {
	var m sync.Map
	m.Store("a", 1)
	x := 0
	done := make(chan bool)
	go func() {
		x = 1 // race: maprange
		m.Range(func(k, v any) bool { return true })
		done <- true
	}()
	time.Sleep(20 * time.Millisecond)
	m.Range(func(k, v any) bool { return true })
	x = 2 // race: maprange
	<-done
	sink = x
}

// A map's first operation, a Load included, initializes it under a lock
// and publishes: a later operation is ordered after it.
func TestNoRaceSyncMapFirstLoadPublishes(t *testing.T) {
	var m sync.Map
	x := 0
	done := make(chan bool)
	go func() {
		x = 1
		m.Load("zz")
		done <- true
	}()
	time.Sleep(20 * time.Millisecond)
	m.Load("yy")
	x = 2
	<-done
	sink = x
}

// A Store publishes to the Load that finds what it stored.
func TestNoRaceSyncMapStoreLoad(t *testing.T) {
	var m sync.Map
	m.Load("init")
	x := 0
	go func() {
		x = 1
		m.Store("a", 1)
	}()
	for {
		if _, ok := m.Load("a"); ok {
			break
		}
		time.Sleep(time.Millisecond)
	}
	x = 2
	sink = x
}

// An atomic.Value's CompareAndSwap that fails only loads the Value's words.
func TestRaceAtomicValueFailedCAS(t *testing.T) {
	var v atomic.Value
	v.Store(1)
	x := 0
	done := make(chan bool)
	go func() {
		x = 1 // race: valuefailedcas
		v.CompareAndSwap(5, 6)
		done <- true
	}()
	time.Sleep(20 * time.Millisecond)
	if v.CompareAndSwap(1, 2) {
		x = 2 // race: valuefailedcas
	}
	<-done
	sink = x
}
