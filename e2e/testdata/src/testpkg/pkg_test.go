package testpkg

import (
	"sync"
	"testing"
)

func TestFirst(t *testing.T) {
	Reset()
	Inc("a")
}

func TestSecond(t *testing.T) {
	Inc("a")
	if Get("a") != 2 {
		t.Fatal(Get("a"))
	}
}

func TestSubtests(t *testing.T) {
	Reset()
	for _, k := range []string{"x", "y"} {
		t.Run(k, func(t *testing.T) {
			Inc(k)
		})
	}
	if Get("x") != 1 {
		t.Fatal("x")
	}
}

var slots [4]int

func TestParallel(t *testing.T) {
	slots[0] = 1
	t.Cleanup(func() {
		if slots[1]+slots[2] != 3 {
			t.Error("slots")
		}
	})
	for i := 1; i <= 2; i++ {
		t.Run("p", func(t *testing.T) {
			t.Parallel()
			slots[i] = i * slots[0]
		})
	}
}

var hits int

func TestRace(t *testing.T) {
	var wg sync.WaitGroup
	wg.Add(2)
	for i := 0; i < 2; i++ {
		go func() {
			defer wg.Done()
			hits++ // race: h
		}()
	}
	wg.Wait()
}
