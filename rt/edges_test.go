package rt

import (
	"slices"
	"sync"
	"testing"

	"github.com/racekit/racekit/filter/sample"
	"github.com/racekit/racekit/trace"
)

// edgeBody calls I/O, timer and context hooks in runs, as a loop over
// bufio or a poll of ctx.Done does, in frames of A (some sampled, some
// not) and between them, with a write and a lock now and then.
func edgeBody(base uint32, id int) {
	for i := 0; i < 200; i++ {
		a := Enter(base + smpFnA)
		for k := 0; k < 1+i%3; k++ {
			IOWrite(base + smpSiteA)
		}
		if i%5 == 0 {
			W(&smpArr[id*200+i], base+smpSiteA, a)
		}
		IORead(base + smpSiteA)
		IORead(base + smpSiteA)
		if i%7 == 0 {
			TimerStart(base + smpSiteB)
			MutexLock(&smpMu, base+smpSiteLock, true)
			MutexUnlock(&smpMu, base+smpSiteLock, true)
		}
		TimerFired(base + smpSiteB)
		CtxDone(base + smpSiteB)
		Leave(base + smpFnA)
		IOWrite(base + smpSiteRoot)
	}
}

// edgeWorkload runs edgeBody in the calling goroutine, then in a forked
// one, one after the other, so that which acquires find a new release is
// the same in every run.
func edgeWorkload(uint32) {
	base := RegisterFile("e.go", []string{"A", "B", "C"}, make([]uint32, 3*smpNSites))
	edgeBody(base, 0)
	inForked(base, func() { edgeBody(base, 1) })
}

// inForked runs body in a goroutine forked as instrumented code forks
// it, and waits for it to end.
func inForked(base uint32, body func()) { goForked(base, body)() }

// goForked runs body in a goroutine forked as instrumented code forks it,
// and returns a function that waits for it to end.
func goForked(base uint32, body func()) (wait func()) {
	f := Fork(base + smpSiteFork)
	var done sync.WaitGroup
	done.Add(1)
	go func() {
		defer done.Done()
		Begin(f)
		defer End(f)
		body()
		f.Ok()
	}()
	return done.Wait
}

// globalEdges counts the events of tr on the runtime's global objects.
func globalEdges(tr *trace.Trace) int {
	global := sample.GlobalObjects(tr.M)
	n := 0
	for i := range tr.Events {
		if global[tr.Events[i].Obj] {
			n++
		}
	}
	return n
}

// A sampled run drops the redundant edges on the global objects as it
// records, by sample.Edges's rule exactly: a full run keeps every one;
// the sampled run records, goroutine by goroutine, what the offline
// sampler and Edges keep of the full run (sample.Shown applies both), and
// Edges finds nothing more to drop in what it recorded. Under every
// sampler, and with accesses off (sync mode).
func TestEdgesSampled(t *testing.T) {
	full := record(t, false, edgeWorkload)
	// Per goroutine: 200 iterations of 2..4 IOWrite, 2 IORead, TimerFired,
	// CtxDone's two acquires, every 7th a TimerStart, and the enter/leave
	// edges of the untraced-born caller.
	const perG = 200*(2+2+1+2) + 200/3*3 + 200/3*2 + 1 + (200+6)/7
	if n := globalEdges(full); n < 2*perG-10 {
		t.Fatalf("full run: %d events on the global objects, want about %d: a full run must keep every edge", n, 2*perG)
	}
	for _, name := range []string{"tl-ad", "tl-fx", "ucp", "rnd25"} {
		for _, mode := range []string{"", "sync"} {
			got := recordSampled(t, false, name, 3, mode, edgeWorkload)
			keep := all
			if mode == "sync" {
				keep = notAccess
			}
			want, _ := offline(t, full, name, 3)
			comparePerG(t, name+" "+mode, perGShown(got, keep), perGShown(want, keep))
			if _, st := sample.EdgesKept(got); st.Dropped() > 0 {
				t.Fatalf("%s %s: the run recorded events that Edges drops: %+v", name, mode, st)
			}
			if n, m := globalEdges(got), globalEdges(full); n*2 > m {
				t.Fatalf("%s %s: %d of %d edges on the global objects recorded: too few dropped", name, mode, n, m)
			}
		}
	}
}

// edgeChan returns a buffered channel whose two sync objects (c and c+1)
// share no slot of edgeVer with each other, with the global objects, or
// with the channels it returned before, so that a sampled run drops
// exactly what sample.Edges drops.
func edgeChan(n int) chan int {
	var keep []chan int // not reused while the loop looks
	for {
		c := make(chan int, n)
		a := chanAddr(c)
		slots := map[uint64]bool{edgeSlot(a): true, edgeSlot(a + 1): true}
		for _, o := range globalObjs {
			slots[edgeSlot(o.Obj)] = true
		}
		for _, o := range edgeChans {
			slots[edgeSlot(o)] = true
		}
		if len(slots) == 2+len(globalObjs)+len(edgeChans) {
			edgeChans = append(edgeChans, a, a+1)
			return c
		}
		keep = append(keep, c)
	}
}

// edgeChans are the objects of the channels edgeChan returned.
var edgeChans []uint64

// A pipeline of three stages that run one after the other (a producer
// fills c, a relay moves its messages to d, a consumer drains d): each
// message costs four events per channel in a full run, and adds a
// happens-before edge only the first time. A sampled run records the
// producer's first release, the relay's first acquire and a release of
// each channel (then it only releases, c+1 and d in turn), and the
// consumer's first release, acquire and release: exactly what
// sample.Edges keeps of the full run, goroutine by goroutine.
func TestEdgesChannels(t *testing.T) {
	const n = 200
	c, d := edgeChan(n), edgeChan(n)
	work := func(uint32) {
		base := RegisterFile("c.go", []string{"A", "B", "C"}, make([]uint32, 3*smpNSites))
		for i := 0; i < n; i++ {
			g := SendPreG(c, base+smpSiteA, false, nil)
			c <- i
			SendPost(c, base+smpSiteA, g)
		}
		inForked(base, func() {
			for i := 0; i < n; i++ {
				v := Recv(c, base+smpSiteB)
				g := SendPreG(d, base+smpSiteB, false, nil)
				d <- v
				SendPost(d, base+smpSiteB, g)
			}
		})
		inForked(base, func() {
			for i := 0; i < n; i++ {
				if v := Recv(d, base+smpSiteRoot); v != i {
					panic("out of order")
				}
			}
		})
	}
	objs := map[uint64]bool{}
	for _, ch := range []chan int{c, d} {
		objs[chanAddr(ch)], objs[chanAddr(ch)+1] = true, true
	}
	onChans := func(tr *trace.Trace) (k int) {
		for _, e := range tr.Events {
			if objs[e.Obj] {
				k++
			}
		}
		return k
	}
	full := record(t, false, work)
	// The full run records each channel's allocation at its first hook
	// (chanCounts); a sampled run, only before a recorded access of the
	// channel, and these sends record none.
	full.Events = slices.DeleteFunc(full.Events, func(e trace.Event) bool { return e.Op == trace.OpAlloc && objs[e.Obj] })
	for i := range full.Events {
		// A sampled run's channel events carry no message (chanmsg.go's
		// msgIDs): compare with the full run's events without theirs.
		if e := &full.Events[i]; e.Flags&trace.FlagMessage != 0 {
			e.Flags &^= trace.FlagMessage
			e.Value = 0
		}
	}
	if k := onChans(full); k != 8*n {
		t.Fatalf("full run: %d events on the channels, want %d", k, 8*n)
	}
	kept, _ := sample.EdgesKept(full)
	want := onChans(kept)
	if want > 10 {
		t.Fatalf("Edges keeps %d of the full run's %d channel events, want at most 10", want, 8*n)
	}
	for _, name := range []string{"tl-ad", "rnd25"} {
		for _, mode := range []string{"", "sync"} {
			got := recordSampled(t, false, name, 3, mode, work)
			comparePerG(t, name+" "+mode, perG(got, all), perGShown(full, all))
			if k := onChans(got); k != want {
				t.Errorf("%s %s: %d events on the channels, want %d", name, mode, k, want)
			}
		}
	}
}

// BenchmarkPipeline is a message through a three-stage channel pipeline
// (buffers of 64) and a Lock/Unlock of a mutex four goroutines share, the
// shape of e2e's syncheavy, per message: the program alone (plain), fully
// recorded, and sampled with no access recorded (sync: every sync object's
// redundant edges dropped, sample.Edges), all in the same run.
func BenchmarkPipeline(b *testing.B) {
	for _, mode := range []string{"plain", "full", "sync"} {
		b.Run(mode, func(b *testing.B) {
			if mode == "sync" {
				if err := setSampler("tl-ad", 1, "sync"); err != nil {
					b.Fatal(err)
				}
				defer resetSampling()
			}
			if mode != "plain" {
				benchStart(b, true)
			} else {
				saved := on
				on = false
				defer func() { on = saved }()
			}
			in, out := make(chan int, 64), make(chan int, 64)
			var mu sync.Mutex
			var wg sync.WaitGroup
			b.ResetTimer()
			wg.Add(5)
			go func() {
				defer wg.Done()
				for i := 0; i < b.N; i++ {
					g := SendPreG(in, 1, false, nil)
					in <- i
					SendPost(in, 1, g)
				}
				close(in)
			}()
			// A range over c, as instrument rewrites it.
			drain := func(c chan int, site uint32, f func(int)) {
				defer wg.Done()
				for g := RecvRangeG(c, site, nil); ; g = RecvRangeG(c, site, nil) {
					v, ok := <-c
					RecvPost(c, site, g)
					if !ok {
						break
					}
					f(v)
				}
			}
			go func() {
				drain(in, 2, func(v int) {
					g := SendPreG(out, 3, false, nil)
					out <- v
					SendPost(out, 3, g)
				})
				close(out)
			}()
			go drain(out, 4, func(int) {})
			for k := 0; k < 2; k++ {
				go func() {
					defer wg.Done()
					for i := 0; i < b.N/2; i++ {
						MutexLock(&mu, 5, false)
						MutexUnlock(&mu, 5, false)
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}
