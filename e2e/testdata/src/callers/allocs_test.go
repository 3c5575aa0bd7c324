package callers

import (
	"container/heap"
	"fmt"
	"reflect"
	"runtime"
	"testing"
)

type item struct{ v int }

type itemHeap []*item

func (h itemHeap) Len() int           { return len(h) }
func (h itemHeap) Less(i, j int) bool { return h[i].v < h[j].v }
func (h itemHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *itemHeap) Push(x any)        { *h = append(*h, x.(*item)) }
func (h *itemHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// TestAllocs counts the allocations of calls into untraced code that reach
// objects whose contents change at every call (container/heap through an
// interface: racekit walks what the call can reach, and caching a walk
// allocates): racekit must add none, to testing.AllocsPerRun's count nor
// to a count of one call between two runtime.ReadMemStats (as
// jellydator/ttlcache's Test_Cache_Get makes).
func TestAllocs(t *testing.T) {
	newHeap := func() *itemHeap {
		q := &itemHeap{{5}, {3}, {8}, {1}, {9}, {2}}
		heap.Init(q)
		return q
	}
	fix := func(q *itemHeap) {
		(*q)[0].v += 10
		heap.Fix(q, 0)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var m runtime.MemStats
	for i := 0; i < 3; i++ {
		q := newHeap()
		runtime.ReadMemStats(&m)
		before := m.Mallocs
		fix(q)
		runtime.ReadMemStats(&m)
		fmt.Println("one call:", m.Mallocs-before)
	}
	for _, runs := range []int{1, 100} {
		q := newHeap()
		fmt.Println("AllocsPerRun:", testing.AllocsPerRun(runs, func() { fix(q) }))
	}
}

var sink uint64

// TestAllocsWrappers counts the allocations of a Digest made through two
// small wrappers (New, NewWithSeed: var d Digest; ...; return &d) and used
// at once: none under go test, whose compiler inlines the wrappers and
// keeps d on the stack (cespare/xxhash's TestAllocs asserts it), and none
// under racekit, whose instrumentation must leave them inlinable.
func TestAllocsWrappers(t *testing.T) {
	b := []byte("asdf")
	fmt.Println("wrappers:", testing.AllocsPerRun(100, func() {
		d := New()
		d.Write(b)
		sink = d.Sum64()
	}))
}

var options = []Option{WithSeed(1)}

// TestClosureNames prints the names runtime.FuncForPC gives closures an
// inlined constructor returned, in a package variable's initializer and
// in a test: go test names them after the function the constructor was
// inlined into (callers.init.WithSeed.func1), which subtests named by %v
// of an option show (oschwald/maxminddb-golang's TestNetworksWithin).
func TestClosureNames(t *testing.T) {
	for _, o := range append(options, WithSeed(2)) {
		fmt.Println("closure:", runtime.FuncForPC(reflect.ValueOf(o).Pointer()).Name())
		o(New())
	}
}

// TestAllocsConstructor counts the allocations of a Counter made by a
// constructor of a composite literal and used at once (none under go
// test), and prints whether a zero-sized signer it makes equals one the
// test makes (as aws/smithy-go's TestAnonymousScheme asserts).
func TestAllocsConstructor(t *testing.T) {
	fmt.Println("constructor:", testing.AllocsPerRun(100, func() {
		c := NewCounter("x")
		c.Add(2)
		sink = uint64(c.n)
	}))
	var want Signer = &nopSigner{}
	fmt.Println("same signer:", NewScheme().signer == want)
}

// TestLiteralFrames prints the functions runtime.Callers shows through two
// nested function literals called where they are written (as fx's
// TestDeepStack asserts): the compiler inlines both and names the inner
// one after the frames it was inlined into.
func TestLiteralFrames(t *testing.T) {
	t.Run("nest", func(t *testing.T) {
		names := func() []string {
			return func() []string {
				return callerNames(3)
			}()
		}()
		for _, n := range names {
			fmt.Println("frame:", n)
		}
	})
}

// callerNames returns the functions of its caller's stack, n of them.
func callerNames(n int) []string {
	pcs := make([]uintptr, n)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	var names []string
	for {
		f, more := frames.Next()
		names = append(names, f.Function)
		if !more {
			return names
		}
	}
}

// TestAllocsClosureConstructor counts the allocations of a closure that an
// inlined constructor makes and the test drops at once (none under go
// test, as a-h/templ's TestRawComponent asserts), and prints the name of
// one it keeps: go test names it after the function Raw was inlined into.
func TestAllocsClosureConstructor(t *testing.T) {
	fmt.Println("closure constructor:", testing.AllocsPerRun(100, func() {
		if Raw("<div>") == nil {
			t.Fatal("nil closure")
		}
	}))
	fmt.Println("closure:", runtime.FuncForPC(reflect.ValueOf(Raw("x")).Pointer()).Name())
}
