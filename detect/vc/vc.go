// Package vc provides the vector clocks and epochs shared by racekit's
// happens-before detectors (DJIT+ style full clocks, FastTrack epochs).
//
// A VectorClock maps goroutine IDs (trace.GID, dense small integers) to
// logical clocks; missing entries are 0. An Epoch is one entry c@t packed in
// a word, the FastTrack representation of "the last access was at time c of
// goroutine t".
package vc

import (
	"strconv"
	"strings"

	"github.com/racekit/racekit/trace"
)

// VectorClock is a vector of logical clocks indexed by goroutine. The zero
// value is the bottom clock. Clocks grow on demand; indexes past the end
// read as 0.
type VectorClock []uint32

// Get returns the clock of g.
func (v VectorClock) Get(g trace.GID) uint32 {
	if int(g) < len(v) {
		return v[g]
	}
	return 0
}

// Set sets the clock of g, growing v if needed.
func (v *VectorClock) Set(g trace.GID, c uint32) {
	v.grow(int(g) + 1)
	(*v)[g] = c
}

// Inc increments the clock of g.
func (v *VectorClock) Inc(g trace.GID) {
	v.grow(int(g) + 1)
	(*v)[g]++
}

func (v *VectorClock) grow(n int) {
	if len(*v) >= n {
		return
	}
	if cap(*v) >= n {
		// Past the length is what a clock shortened to reuse its
		// storage held (an objVC's reset): ⊥ again.
		old := len(*v)
		*v = (*v)[:n]
		clear((*v)[old:])
		return
	}
	nv := make(VectorClock, n, max(n, 2*cap(*v)))
	copy(nv, *v)
	*v = nv
}

// Join sets v to the pointwise maximum of v and o (v ⊔ o).
func (v *VectorClock) Join(o VectorClock) {
	v.grow(len(o))
	w := *v
	for i, c := range o {
		if c > w[i] {
			w[i] = c
		}
	}
}

// JoinChanged is Join that reports whether v changed.
func (v *VectorClock) JoinChanged(o VectorClock) bool {
	v.grow(len(o))
	w := (*v)[:len(o)]
	changed := false
	for i, c := range o {
		if c > w[i] {
			w[i] = c
			changed = true
		}
	}
	return changed
}

// Copy sets v to o, reusing v's storage.
func (v *VectorClock) Copy(o VectorClock) {
	v.grow(len(o))
	n := copy(*v, o)
	clear((*v)[n:])
}

// Leq reports whether v ⊑ o pointwise.
func (v VectorClock) Leq(o VectorClock) bool {
	for i, c := range v {
		if c > o.Get(trace.GID(i)) {
			return false
		}
	}
	return true
}

// Clone returns an independent copy of v.
func (v VectorClock) Clone() VectorClock { return append(VectorClock(nil), v...) }

// String formats v as [c0 c1 ...].
func (v VectorClock) String() string {
	var b strings.Builder
	b.WriteByte('[')
	for i, c := range v {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.FormatUint(uint64(c), 10))
	}
	b.WriteByte(']')
	return b.String()
}

// Epoch is c@t: clock c of goroutine t, packed as c<<32 | t. The zero
// Epoch (0@0) is ⊥e: it happens before everything.
type Epoch uint64

// MakeEpoch packs c@t.
func MakeEpoch(c uint32, t trace.GID) Epoch { return Epoch(uint64(c)<<32 | uint64(t)) }

// Clock returns c of c@t.
func (e Epoch) Clock() uint32 { return uint32(e >> 32) }

// G returns t of c@t.
func (e Epoch) G() trace.GID { return trace.GID(uint32(e)) }

// Leq reports whether c@t ⪯ v, that is c <= v(t): the epoch's event
// happens before (or is) the point whose clock is v.
func (e Epoch) Leq(v VectorClock) bool { return e.Clock() <= v.Get(e.G()) }

// EpochOf returns g's current epoch in v: v(g)@g.
func EpochOf(v VectorClock, g trace.GID) Epoch { return MakeEpoch(v.Get(g), g) }

func (e Epoch) String() string {
	return strconv.FormatUint(uint64(e.Clock()), 10) + "@" + strconv.FormatUint(uint64(e.G()), 10)
}
