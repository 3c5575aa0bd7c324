package rt

import (
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/racekit/racekit/trace"
)

// gstate is what rt knows of one goroutine.
type gstate struct {
	goid  uint64
	gid   trace.GID
	epoch uint32     // advanced by each synchronization event of the goroutine
	seen  *seenTable // accesses recorded in the current epoch (see dedup)
}

// goidOff is the offset of goid inside the runtime's g, or 0 when unknown
// (then goid parses runtime.Stack).
var goidOff uintptr

// The goroutine table: a direct-mapped cache indexed by goid, backed by a
// map under mu. Only a goroutine itself installs its entry in the cache, and
// an entry is used only after its goid is checked, so a collision costs a
// trip to the map, never a wrong identity.
const gtabSize = 1 << 12

var (
	gtab [gtabSize]atomic.Pointer[gstate]
	gmap = map[uint64]*gstate{}
)

// goid returns the current goroutine's runtime ID.
func goid() uint64 {
	if goidOff != 0 {
		return *(*uint64)(unsafe.Add(getg(), goidOff))
	}
	return goidSlow()
}

// goidSlow parses "goroutine N [" from the current goroutine's stack.
func goidSlow() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	const prefix = "goroutine "
	if len(b) < len(prefix) || string(b[:len(prefix)]) != prefix {
		return 0
	}
	var id uint64
	for _, c := range b[len(prefix):] {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
	}
	return id
}

// maxGoidOff bounds the search for goid inside g: it is at 152 in Go 1.26
// on 64-bit platforms, and the runtime's g is larger than the bound (a
// -race build's checkptr rejects pointers past the end of an allocation).
const maxGoidOff = 256

// probeGoid finds goidOff: the offsets of g at which every one of several
// goroutines holds its own goid. It leaves goidOff 0 unless exactly one
// offset qualifies.
func probeGoid() {
	if !haveGetg || unsafe.Sizeof(uintptr(0)) != 8 {
		return
	}
	cands := make([]bool, maxGoidOff/8)
	for i := range cands {
		cands[i] = true
	}
	check := func() {
		g := getg()
		id := goidSlow()
		if g == nil || id == 0 {
			clear(cands)
			return
		}
		for i := range cands {
			if *(*uint64)(unsafe.Add(g, uintptr(i)*8)) != id {
				cands[i] = false
			}
		}
	}
	check()
	// Goroutines with other goids rule out fields that held the main
	// goroutine's goid by chance.
	for i := 0; i < 4; i++ {
		done := make(chan struct{})
		go func() {
			check()
			close(done)
		}()
		<-done
	}
	found := -1
	for i, ok := range cands {
		if ok {
			if found >= 0 {
				return
			}
			found = i
		}
	}
	if found > 0 {
		goidOff = uintptr(found) * 8
	}
}

// cur returns the current goroutine's state, making one (a goroutine born
// in untraced code: Parent NoParent, a Begin event) on its first event.
func cur() *gstate {
	id := goid()
	slot := &gtab[id&(gtabSize-1)]
	if s := slot.Load(); s != nil && s.goid == id {
		return s
	}
	return curSlow(id, slot)
}

func curSlow(id uint64, slot *atomic.Pointer[gstate]) *gstate {
	mu.Lock()
	s := gmap[id]
	if s == nil {
		s = &gstate{goid: id, gid: trace.GID(ngors)}
		ngors++
		// Detectors order a goroutine born in untraced code after every
		// event so far, which starts a new epoch of every goroutine.
		generation.Add(1)
		gmap[id] = s
		if !finished {
			if err := w.DefineGoroutine(trace.Goroutine{ID: s.gid, Parent: trace.NoParent}); err != nil {
				fail(err)
			}
		}
		emitLocked(s, trace.OpBegin, 0, 0, 0)
	}
	mu.Unlock()
	slot.Store(s)
	return s
}

// claim makes the current goroutine gid (a goroutine started by an
// instrumented go statement).
func claim(gid trace.GID) *gstate {
	id := goid()
	s := &gstate{goid: id, gid: gid}
	mu.Lock()
	gmap[id] = s
	mu.Unlock()
	gtab[id&(gtabSize-1)].Store(s)
	return s
}

// forget forgets the current goroutine, which is ending.
func forget(s *gstate) {
	mu.Lock()
	delete(gmap, s.goid)
	mu.Unlock()
	gtab[s.goid&(gtabSize-1)].CompareAndSwap(s, nil)
}
