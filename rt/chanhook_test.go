package rt

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/racekit/racekit/trace"
)

// hookEdges lists the edges on the channel hook's objects of channel c
// (c+2, c+3), as "op+k" (snd a release, rcv an acquire).
func hookEdges(tr *trace.Trace, c uint64) []string {
	var out []string
	for _, e := range tr.Events {
		if e.Op.IsSync() && (e.Obj == c+2 || e.Obj == c+3) {
			out = append(out, fmt.Sprintf("%s+%d", e.Op, e.Obj-c))
		}
	}
	return out
}

// The runtime's hook (installed by the patched runtime; called by hand
// here) records the memory model's edges of an operation of untraced code
// on the channel's objects c+2 and c+3, on a goroutine rt has a state for,
// in either mode. (The runtime's wrapper skips the operations traced code
// announced before it calls the hook: e2e TestChanHookSkips.)
func TestChanHookEdges(t *testing.T) {
	for _, sampled := range []bool{false, true} {
		t.Run(fmt.Sprintf("sampling=%v", sampled), func(t *testing.T) {
			c := make(chan int)
			p := *(*unsafe.Pointer)(unsafe.Pointer(&c))
			a := uint64(uintptr(p))
			tr := record(t, false, func(site uint32) {
				defer func(old bool) { sampling = old }(sampling)
				sampling = sampled
				// A goroutine rt has no state for records nothing.
				done := make(chan bool)
				go func() {
					onChan(p, chanSendBegin)
					close(done)
				}()
				<-done
				cur() // this one has (it ran traced code)
				onChan(p, chanSendBegin)
				onChan(p, chanSendEnd)
				onChan(p, chanRecvBegin)
				onChan(p, chanRecvEnd)
				onChan(p, chanRecvEnd)
			})
			got := hookEdges(tr, a)
			want := []string{"snd+2", "rcv+3", "snd+3", "rcv+2", "rcv+2"}
			if sampled {
				// A sampled run drops the acquires no release came
				// before since the goroutine's last (sync.go's edge).
				want = []string{"snd+2", "snd+3", "rcv+2"}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("edges %v, want %v", got, want)
			}
		})
	}
}
