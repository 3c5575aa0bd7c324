package instrument

import "strings"

// The Go runtime's channel hook. Go's race detector sees the channel
// operations of the standard library: an io.Pipe's Write returns after the
// reader's Read took its data, over the pipe's channels, so what the
// reader did before is ordered before what the writer does after, even
// when both calls are deep inside std (io.Copy into a gzip.Writer over a
// pipe: held-out influxdb-client-go's CompressWithGzip writes a captured
// error after the copy that the caller read before reading the pipe; a
// false race under racekit until this hook). rt sees only the channel
// operations of traced code. The runtime patched here calls a function rt
// installs around every channel operation (chansend, chanrecv, closechan,
// selectgo: renamed, and wrapped by functions of their old names), and rt
// records, for the operations that traced code did not announce, the Go
// memory model's edges on objects of their own beside the channel's
// (rt/chanhook.go). Only with the allocation hook's patch (its guard in
// the g), and only when the runtime has the exact text below.

// chanRenames are the declarations the patch renames, by file: each old
// name gets a wrapper (chanFuncs, selectFuncs).
var chanRenames = map[string][][2]string{
	"chan.go": {
		{"func chansend(c *hchan, ep unsafe.Pointer, block bool, callerpc uintptr) bool {", "func racekitChansend(c *hchan, ep unsafe.Pointer, block bool, callerpc uintptr) bool {"},
		{"func chanrecv(c *hchan, ep unsafe.Pointer, block bool) (selected, received bool) {", "func racekitChanrecv(c *hchan, ep unsafe.Pointer, block bool) (selected, received bool) {"},
		{"func closechan(c *hchan) {", "func racekitClosechan(c *hchan) {"},
	},
	"select.go": {
		{"func selectgo(cas0 *scase, order0 *uint16, pc0 *uintptr, nsends, nrecvs int, block bool) (int, bool) {", "func racekitSelectgo(cas0 *scase, order0 *uint16, pc0 *uintptr, nsends, nrecvs int, block bool) (int, bool) {"},
	},
}

// chanFuncs is appended to chan.go. The hook runs on the goroutine of the
// operation, only from ordinary goroutine context, never inside itself or
// the allocation hook (racekitInHook). A send's or close's begin comes
// before the operation can complete, so that the receiver's completion,
// recorded after it, follows it in the trace. The operations, as rt's
// chanhook.go names them: 0 a send or close begins, 1 a send to an
// unbuffered channel completed, 2 a receive from an unbuffered channel
// begins, 3 a receive completed.
const chanFuncs = `
// racekitChanHook is set by racekit's runtime (racekit.dev/rt, the
// racekit_chanhook.go file racekit adds to it).
//
//go:linkname racekitChanHook
var racekitChanHook func(c unsafe.Pointer, op uint8)

func racekitChan(c *hchan, op uint8) {
	gp := getg()
	mp := gp.m
	if mp.curg != gp || mp.locks != 0 || gp.racekitInHook {
		return
	}
	gp.racekitInHook = true
	racekitChanHook(unsafe.Pointer(c), op)
	gp.racekitInHook = false
}

// racekitGOffsets are the offsets in g of racekitChanSkip, racekitGoid
// and racekitSyncSkip, which rt sets.
//
//go:linkname racekitGOffsets
var racekitGOffsets = [3]uintptr{unsafe.Offsetof(g{}.racekitChanSkip), unsafe.Offsetof(g{}.racekitGoid), unsafe.Offsetof(g{}.racekitSyncSkip)}

// racekitChanOn reports whether the hook sees gp's channel operation that
// begins: not one traced code announced (rt records it; the mark is taken
// back), nor one of a goroutine rt has no state for, checked here so that
// neither costs a call into rt.
func racekitChanOn(gp *g) bool {
	if gp.racekitChanSkip {
		gp.racekitChanSkip = false
		return false
	}
	return racekitChanHook != nil && gp.racekitGoid == gp.goid
}

func chansend(c *hchan, ep unsafe.Pointer, block bool, callerpc uintptr) bool {
	if !racekitChanOn(getg()) || c == nil {
		return racekitChansend(c, ep, block, callerpc)
	}
	racekitChan(c, 0)
	ok := racekitChansend(c, ep, block, callerpc)
	if ok && c.dataqsiz == 0 {
		racekitChan(c, 1)
	}
	return ok
}

func chanrecv(c *hchan, ep unsafe.Pointer, block bool) (selected, received bool) {
	if !racekitChanOn(getg()) || c == nil {
		return racekitChanrecv(c, ep, block)
	}
	if c.dataqsiz == 0 {
		racekitChan(c, 2)
	}
	selected, received = racekitChanrecv(c, ep, block)
	if selected {
		racekitChan(c, 3)
	}
	return
}

func closechan(c *hchan) {
	if racekitChanOn(getg()) && c != nil {
		racekitChan(c, 0)
	}
	racekitClosechan(c)
}
`

// selectFuncs is appended to select.go: every send case begins (and every
// receive case of an unbuffered channel), since the chosen one is known
// only once it completed; the chosen case completes.
const selectFuncs = `
func selectgo(cas0 *scase, order0 *uint16, pc0 *uintptr, nsends, nrecvs int, block bool) (int, bool) {
	if !racekitChanOn(getg()) {
		return racekitSelectgo(cas0, order0, pc0, nsends, nrecvs, block)
	}
	n := nsends + nrecvs
	scases := (*[1 << 16]scase)(unsafe.Pointer(cas0))[:n:n]
	for i := range scases {
		if c := scases[i].c; c != nil {
			if i < nsends {
				racekitChan(c, 0)
			} else if c.dataqsiz == 0 {
				racekitChan(c, 2)
			}
		}
	}
	casi, recvOK := racekitSelectgo(cas0, order0, pc0, nsends, nrecvs, block)
	if casi >= 0 {
		if c := scases[casi].c; casi >= nsends {
			racekitChan(c, 3)
		} else if c.dataqsiz == 0 {
			racekitChan(c, 1)
		}
	}
	return casi, recvOK
}
`

// rtChanHookFile is the file added to rt's copy with the channel hook.
const rtChanHookFile = `package rt

import "unsafe"

//go:linkname racekitChanHook runtime.racekitChanHook
var racekitChanHook func(c unsafe.Pointer, op uint8)

//go:linkname racekitGOffsets runtime.racekitGOffsets
var racekitGOffsets [3]uintptr

var _ = func() bool {
	setChanHook = func(h func(c unsafe.Pointer, op uint8)) { racekitChanHook = h }
	chanGOffsets = racekitGOffsets
	return true
}()
`

// gcStartRecv is the one channel operation of the runtime itself after
// start-up made with no runtime lock held: gcStart waits for each new
// mark worker while it holds the GC's start semaphore, and a hook that
// allocated there (a new chunk of the goroutine's event buffer) would
// start a GC and wait for that semaphore for good. The patch marks the goroutine as inside a
// hook for the receive. (The worker's send holds its m: locks > 0.)
var gcStartRecv = [2]string{
	"\t\t<-ready\n",
	"\t\tracekitWasIn := getg().racekitInHook\n\t\tgetg().racekitInHook = true // racekit: no hook inside gcStart\n\t\t<-ready\n\t\tgetg().racekitInHook = racekitWasIn\n",
}

// chanPatch returns chan.go, select.go and mgc.go with the channel hook,
// or false when one lacks a text it edits (then rt sees the channel
// operations of traced code only, as before).
func chanPatch(chanGo, selectGo, mgcGo string) (string, string, string, bool) {
	if strings.Count(mgcGo, gcStartRecv[0]) != 1 {
		return "", "", "", false
	}
	files := map[string]*string{"chan.go": &chanGo, "select.go": &selectGo}
	for name, rs := range chanRenames {
		for _, r := range rs {
			if strings.Count(*files[name], r[0]) != 1 {
				return "", "", "", false
			}
		}
	}
	for name, rs := range chanRenames {
		for _, r := range rs {
			*files[name] = strings.Replace(*files[name], r[0], r[1], 1)
		}
	}
	mgcGo = strings.Replace(mgcGo, gcStartRecv[0], gcStartRecv[1], 1)
	return chanGo + chanFuncs, selectGo + selectFuncs, mgcGo, true
}
