// Package quiet checks that racekit's runtime leaves no goroutine of its
// own behind once the program's goroutines are done (issue 33): what
// runtime.NumGoroutine and runtime.Stack(all) see, and so goleak and tests
// that count goroutines, is what they see under go test -race.
package quiet

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// work starts n goroutines that count under a lock and send on a channel,
// and waits for them: they record events, so the trace's writer is busy.
func work(n int) int {
	var mu sync.Mutex
	var wg sync.WaitGroup
	total := 0
	ch := make(chan int, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 200; j++ {
				mu.Lock()
				total++
				mu.Unlock()
			}
			ch <- i
		}()
	}
	wg.Wait()
	close(ch)
	for range ch {
	}
	mu.Lock()
	defer mu.Unlock()
	return total
}

// retry calls ok until it holds, as goleak retries: 20 more tries, the
// sleeps between them doubling from 1µs up to 100ms (about 0.4s in all).
func retry(ok func() bool) bool {
	d := time.Microsecond
	for i := 0; i < 20; i++ {
		if ok() {
			return true
		}
		time.Sleep(d)
		d = min(2*d, 100*time.Millisecond)
	}
	return ok()
}

// rtFrames returns the lines of runtime.Stack(all) that name a function of
// racekit's runtime (module racekit.dev/rt: packages rt and rt/rttest).
func rtFrames() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, line := range strings.Split(string(buf), "\n") {
		if strings.Contains(line, "racekit.dev/rt/") {
			out = append(out, line)
		}
	}
	return out
}

// TestGoroutinesBack counts the goroutines at the start (at a moment when
// no runtime frame shows) and again once its own goroutines have ended,
// with goleak's retries: the counts must agree, and the e2e test compares
// both with go test -race's.
func TestGoroutinesBack(t *testing.T) {
	retry(func() bool { return len(rtFrames()) == 0 })
	start := runtime.NumGoroutine()
	if got := work(8); got != 8*200 {
		t.Fatalf("work: %d, want %d", got, 8*200)
	}
	end := 0
	retry(func() bool {
		end = runtime.NumGoroutine()
		return end == start
	})
	fmt.Printf("goroutines: start %d, end %d\n", start, end)
	if end != start {
		t.Errorf("goroutine leak: %d at the start, %d after the test's goroutines ended", start, end)
	}
}

// TestStackNoRuntime: once the test's goroutines have ended, no goroutine's
// stack holds a frame of racekit's runtime, after goleak's retries.
func TestStackNoRuntime(t *testing.T) {
	work(8)
	var frames []string
	if !retry(func() bool {
		frames = rtFrames()
		return len(frames) == 0
	}) {
		t.Errorf("racekit's runtime in runtime.Stack(all) after the test's goroutines ended:\n%s", strings.Join(frames, "\n"))
	}
}

var shared int

// TestRaceAfterQuiet records again after a quiet spell in which the runtime
// had no goroutine: the race of its two goroutines must reach the trace.
func TestRaceAfterQuiet(t *testing.T) {
	work(4)
	if !retry(func() bool { return len(rtFrames()) == 0 }) {
		t.Log("racekit's runtime still in runtime.Stack(all)")
	}
	done := make(chan bool)
	go func() {
		shared = 1 // race: Q
		done <- true
	}()
	shared = 2 // race: Q
	<-done
}

// rtGoroutines returns the goroutines of runtime.Stack(all) that racekit's
// runtime started: their outermost frame (the function the goroutine
// began with) is one of racekit.dev/rt's. A goroutine of the program that
// is inside a hook has rt's frames too, but not as its outermost one.
func rtGoroutines() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		lines := strings.Split(strings.TrimSpace(g), "\n")
		for i, l := range lines {
			if strings.HasPrefix(l, "created by ") && i >= 2 && strings.Contains(lines[i-2], "racekit.dev/rt/") {
				out = append(out, lines[0]+" "+lines[i-2])
			}
		}
	}
	return out
}

// TestStackNoRuntimeBusy: while the program records and the trace's writer
// writes, no goroutine of racekit's runtime shows in runtime.Stack(all) (the
// patched runtime counts the writer's as its own): a test that counts its
// goroutines at any moment counts what it counts under -race (r3labs/sse's
// TestSubscribeWithContextDone counted one more at its start than two
// seconds later).
func TestStackNoRuntimeBusy(t *testing.T) {
	done := make(chan bool)
	go func() {
		for i := 0; i < 40; i++ {
			work(16)
		}
		close(done)
	}()
	for samples := 0; ; samples++ {
		if gs := rtGoroutines(); len(gs) > 0 {
			t.Fatalf("sample %d: racekit's runtime's goroutines in runtime.Stack(all):\n%s", samples, strings.Join(gs, "\n"))
		}
		select {
		case <-done:
			return
		default:
			time.Sleep(100 * time.Microsecond)
		}
	}
}
