package clock

// Clocks of locks, sync objects and atomic words (objVC), and the joins
// into and out of them that skip what cannot change a clock.

import (
	"unsafe"

	"github.com/racekit/racekit/detect/shadow"
	"github.com/racekit/racekit/detect/vc"
	"github.com/racekit/racekit/trace"
)

// objClock returns the clock of a sync object or atomic word, creating it
// (⊥) if new.
func objClock(m *shadow.Table[*objVC], obj uint64) *objVC {
	s := m.Get(obj)
	if *s == nil {
		*s = new(objVC)
	}
	return *s
}

// objVC is the clock of a sync object, an atomic word or a lock (W_L,
// R_L), versioned so that a join that cannot change its target is skipped:
// a goroutine that joined the clock and sees it unchanged since, or one
// releasing into the clock it last released into with nothing learnt
// since but its own ticks. Joins of clocks of up to 1024 entries were two
// thirds of the analysis of an atomics-heavy trace (maypok86/otter, corpus
// session 27); the result is the same clocks.
type objVC struct {
	c       vc.Shared
	ver     uint64  // changes whenever c does
	from    *Thread // the goroutine whose release made the latest change,
	fromVer uint64  // and its cver then: c ⊒ its clock then
	sub     bool    // and c ⊑ its clock then (a copy, or a join into a clock it had): ⊑ it ever after
}

// memoSlots is the size of a goroutine's memo of joined clocks.
const memoSlots = 16

type memoEntry struct {
	o   *objVC
	ver uint64
}

// bump returns a fresh version.
func (k *Tracker) bump() uint64 {
	k.vers++
	return k.vers
}

func (t *Thread) memoOf(o *objVC) *memoEntry {
	if t.memo == nil {
		t.memo = new([memoSlots]memoEntry)
	}
	h := uint64(uintptr(unsafe.Pointer(o))) * 0x9e3779b97f4a7c15
	return &t.memo[h>>60]
}

// knows reports whether C_t ⊒ o is known without a look at the clocks
// (m is t's memo slot of o): o is t's own release with nothing since (C_t
// only grows), or t joined o at its current version.
func (k *Tracker) knows(t *Thread, o *objVC, m *memoEntry) bool {
	if k.exact {
		return false
	}
	return o.from == t && o.sub || m.o == o && m.ver == o.ver
}

// acquireFrom is C_t ⊔= o (the caller refreshes t's epoch).
func (k *Tracker) acquireFrom(t *Thread, o *objVC) {
	m := t.memoOf(o)
	if k.knows(t, o, m) {
		return
	}
	if old := t.cver; t.c.JoinShared(o.c, &t.img) {
		t.cver = k.bump()
		t.img.Advance(old, t.cver) // the chunks it changed are noted
	}
	m.o, m.ver = o, o.ver
}

// releaseTo is o ⊔= C_t.
func (k *Tracker) releaseTo(t *Thread, o *objVC) {
	m := t.memoOf(o)
	had := k.knows(t, o, m)
	changed := false
	if o.from == t && o.fromVer == t.cver && !k.exact {
		// o ⊒ C_t but for t's own entry, ticked since.
		id := trace.GID(t.id)
		if c := t.c.Get(id); c > o.c.Get(id) {
			o.c.Set(id, c)
			changed = true
		}
	} else {
		changed = t.image().JoinTo(&o.c, t.c)
	}
	if changed {
		o.ver = k.bump()
	}
	o.sub = had || o.from == t && o.sub // o_old ⊑ C_t: so is o
	o.from, o.fromVer = t, t.cver
	if had {
		m.o, m.ver = o, o.ver // o_old ⊔ C_t = C_t's part: still ⊑ C_t
	}
}

// copyTo is o := C_t.
func (k *Tracker) copyTo(t *Thread, o *objVC) {
	m := t.memoOf(o)
	if k.knows(t, o, m) && o.from == t && o.fromVer == t.cver && !k.exact {
		// o is C_t but for t's own entry, ticked since (a lock t
		// releases again with nothing learnt between): releaseTo sets
		// that entry alone.
		k.releaseTo(t, o)
		return
	}
	// Else a copy, even where C_t ⊒ o (the lock's W_L unchanged since
	// t's acquire joined it), where it is also the join: copying shares
	// C_t's chunks, joining would compare each.
	t.image().CopyTo(&o.c, t.c)
	o.ver = k.bump()
	o.from, o.fromVer, o.sub = t, t.cver, true
	m.o, m.ver = o, o.ver
}

// reset is o := ⊥.
func (k *Tracker) reset(o *objVC) {
	if o.c.Len() > 0 {
		o.c.Reset()
		o.ver = k.bump()
	}
	o.from = nil
}

// learnt records that C_t changed other than by a tick, outside
// acquireFrom (a fork's, a join's, a message's edge).
func (k *Tracker) learnt(t *Thread) { t.cver = k.bump() }
