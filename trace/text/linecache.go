package text

import (
	"encoding/binary"
	"math/bits"

	"github.com/racekit/racekit/trace"
)

// lineCache remembers the events that recent lines gave. Traces repeat
// whole lines a lot (a loop's thread, variable and location recur
// together: a 10M-event trace from racekit gen has about two thousand
// distinct lines), and the event of a line that fastLine accepts depends
// only on its bytes: its tokens, once in the tables, denote the same
// goroutine, object and site for the rest of the input (directives cannot
// rebind a token in use), and Seq is not kept. So a line found here needs
// neither parsing nor token lookups.
//
// A line of up to maxCachedLen bytes is probed before it is even split
// off: the 32 bytes at its start, loaded as four words, hold its newline,
// and with the bytes after the newline cleared they and the length are
// the line's key. The cache is direct-mapped, and only the slots that
// lines use count towards the working set. It is allocated once the input
// proves long, and switched off for a while when lines stop repeating (a
// trace of random variables and locations), where it would only cost time.
type lineCache struct {
	slots   []lineSlot // 1<<bits of them, once allocated
	bits    uint
	after   int // lines read before the cache is allocated
	window  int // lookups between hit-rate checks
	offFor  int // lines the cache stays off after a poor window
	tries   int // lookups in the current window
	hits    int
	offTill int // the cache is off until this line number
}

// lineKey is the bytes of a line, as four words. (A struct of four words,
// unlike an array, lives in registers: copying an array just built word by
// word stalls on store forwarding.)
type lineKey struct{ w0, w1, w2, w3 uint64 }

// lineSlot is 64 bytes: a cache line.
type lineSlot struct {
	k     lineKey
	n     uint32 // length + 1; 0 marks an empty slot
	g     trace.GID
	site  trace.SiteID
	op    trace.Op
	flags trace.Flags
	obj   uint64
	value uint64
}

const (
	lineSlotBits = 14
	// maxCachedLen is the longest cached line, without its newline: the
	// newline must be within the 32 bytes peekLine loads.
	maxCachedLen = 31
	// lineCacheAfter is the number of lines read before the cache is
	// allocated: a short input does not pay for it.
	lineCacheAfter = 1 << 16
	// Every lineWindow lookups, a hit rate below 1/lineMinHitRate turns the
	// cache off for lineOffLines lines.
	lineWindow     = 1 << 16
	lineMinHitRate = 4
	lineOffLines   = 1 << 20
)

func newLineCache() lineCache {
	return lineCache{bits: lineSlotBits, after: lineCacheAfter, window: lineWindow, offFor: lineOffLines}
}

// on reports whether the cache is to be used for the next line, allocating
// it when the input has proved long.
func (lc *lineCache) on(line int) bool {
	if lc.slots == nil {
		if line < lc.after {
			return false
		}
		lc.slots = make([]lineSlot, 1<<lc.bits)
	}
	return line >= lc.offTill
}

func (lc *lineCache) slot(k lineKey, n int) *lineSlot {
	a := (k.w0 ^ bits.RotateLeft64(k.w2, 32)) * 0x9e3779b97f4a7c15
	c := (k.w1 ^ bits.RotateLeft64(k.w3, 32) ^ uint64(n)) * 0xc2b2ae3d27d4eb4f
	return &lc.slots[(a^c)>>(64-lc.bits)]
}

// miss counts a lookup without a hit, and turns the cache off at the end
// of a window with too few hits.
func (lc *lineCache) miss(line int) {
	lc.tries++
	if lc.tries >= lc.window {
		if lc.hits*lineMinHitRate < lc.tries {
			lc.offTill = line + lc.offFor
		}
		lc.tries, lc.hits = 0, 0
	}
}

// peekLine returns the length (without its newline) and the key of the
// next line, if its newline is among the next 32 bytes of input. It reads
// 32 bytes at buf[start:]: the buffer's padding makes room for them, and a
// newline found beyond end, in stale bytes, does not count.
func (r *reader) peekLine() (int, lineKey, bool) {
	p := r.buf[r.start : r.start+32]
	k := lineKey{
		binary.LittleEndian.Uint64(p),
		binary.LittleEndian.Uint64(p[8:]),
		binary.LittleEndian.Uint64(p[16:]),
		binary.LittleEndian.Uint64(p[24:]),
	}
	const nl = 0x0a0a0a0a0a0a0a0a
	var n int
	if z := zeroBytes(k.w0 ^ nl); z != 0 {
		n = bits.TrailingZeros64(z) >> 3
		k = lineKey{w0: k.w0 & lowBytes(n)}
	} else if z := zeroBytes(k.w1 ^ nl); z != 0 {
		n = 8 + bits.TrailingZeros64(z)>>3
		k.w1, k.w2, k.w3 = k.w1&lowBytes(n-8), 0, 0
	} else if z := zeroBytes(k.w2 ^ nl); z != 0 {
		n = 16 + bits.TrailingZeros64(z)>>3
		k.w2, k.w3 = k.w2&lowBytes(n-16), 0
	} else if z := zeroBytes(k.w3 ^ nl); z != 0 {
		n = 24 + bits.TrailingZeros64(z)>>3
		k.w3 &= lowBytes(n - 24)
	} else {
		return 0, k, false
	}
	return n, k, n < r.end-r.start
}

// zeroBytes returns x with the high bit of exactly its zero bytes set.
func zeroBytes(x uint64) uint64 {
	const lo7 = 0x7f7f7f7f7f7f7f7f
	return ^((x&lo7 + lo7) | x | lo7)
}

// cachedLine serves the next line from the line cache if it is there. If
// not, it returns the slot where the line's event belongs once fastLine
// has parsed it, with the key and length to store, or a nil slot.
func (r *reader) cachedLine(e *trace.Event) (hit bool, s *lineSlot, k lineKey, n int) {
	lc := &r.lines
	n, k, ok := r.peekLine()
	if !ok {
		return false, nil, k, 0
	}
	s = lc.slot(k, n)
	if s.n != uint32(n+1) || s.k != k {
		lc.miss(r.line + 1)
		return false, s, k, n
	}
	lc.tries++
	lc.hits++
	r.start += n + 1
	r.line++
	r.lineOff = r.off
	r.off += int64(n + 1)
	e.Seq, e.G, e.Op, e.Flags, e.Site, e.Obj, e.Value = r.seq, s.g, s.op, s.flags, s.site, s.obj, s.value
	if e.Addrs != nil {
		e.Addrs = nil
	}
	return true, nil, k, n
}

// store keeps in s the event e of the line with key k and length n.
func (s *lineSlot) store(k lineKey, n int, e *trace.Event) {
	*s = lineSlot{k: k, n: uint32(n + 1), g: e.G, site: e.Site, op: e.Op, flags: e.Flags, obj: e.Obj, value: e.Value}
}
