package anomaly

import (
	"fmt"
	"sort"

	"github.com/racekit/racekit/trace"
)

// validator checks a schedule against the trace's constraints directly,
// without the clock snapshots the scheduler uses, so that each checks the
// other:
//
//   - each goroutine runs a prefix of its own events, in program order;
//   - a goroutine first seen without a fork starts after every event
//     before it in the trace; a forked one after its fork;
//   - a rcv runs after every earlier snd on its object, an atomic load or
//     read-modify-write after every earlier store or read-modify-write of
//     its word, a join after the joined goroutine's events before it;
//   - a lock is held by one goroutine, or by readers only;
//   - the anomaly's events run in pattern order, back to back when
//     consecutive, and the schedule ends with the last one.
type validator struct {
	m       *Model
	forkOf  map[int32]int32    // child goroutine → its fork event
	relByO  map[uint64][]int32 // snd events per sync object
	relByA  map[uint64][]int32 // store and RMW events per atomic word
	ptrO    map[uint64]int
	ptrA    map[uint64]int
	emitted []bool
	low     int32 // every event below low has run
}

func newValidator(m *Model) *validator {
	v := &validator{m: m, forkOf: map[int32]int32{}, relByO: map[uint64][]int32{}, relByA: map[uint64][]int32{}}
	dense := map[trace.GID]int32{}
	for g := range m.gs {
		dense[m.gs[g].gid] = int32(g)
	}
	for i := range m.Events {
		e := &m.Events[i]
		switch e.Op {
		case trace.OpFork:
			if c, ok := dense[trace.GID(e.Obj)]; ok && e.Obj <= 0xFFFFFFFF {
				if _, dup := v.forkOf[c]; !dup && len(m.gs[c].ev) > 0 && m.gs[c].ev[0] > int32(i) {
					v.forkOf[c] = int32(i)
				}
			}
		case trace.OpSyncRelease:
			v.relByO[e.Obj] = append(v.relByO[e.Obj], int32(i))
		case trace.OpAtomicStore, trace.OpAtomicRMW:
			v.relByA[e.Obj] = append(v.relByA[e.Obj], int32(i))
		}
	}
	return v
}

// check validates schedule steps for anomaly events P.
func (v *validator) check(steps, P []int32, consecutive bool) error {
	m := v.m
	v.emitted = make([]bool, len(m.Events))
	v.ptrO, v.ptrA, v.low = map[uint64]int{}, map[uint64]int{}, 0
	cnt := make([]int32, len(m.gs))
	type lk struct{ writer, readers int32 }
	locks := map[uint64]*lk{}
	done := 0
	for i, s := range steps {
		if s < 0 || int(s) >= len(m.Events) || v.emitted[s] {
			return fmt.Errorf("step %d: event %d is not a new event of the trace", i, s)
		}
		g := m.g[s]
		if m.pos[s] != cnt[g] {
			return fmt.Errorf("step %d: %s runs its event %d before its event %d", i, m.gs[g].name, m.pos[s], cnt[g])
		}
		e := &m.Events[s]
		if m.pos[s] == 0 {
			if f, ok := v.forkOf[g]; ok {
				if !v.emitted[f] {
					return fmt.Errorf("step %d: %s starts before its fork", i, m.gs[g].name)
				}
			} else if v.lowest() < s {
				return fmt.Errorf("step %d: %s (never forked) starts before event %d that precedes it", i, m.gs[g].name, v.lowest())
			}
		}
		switch e.Op {
		case trace.OpSyncAcquire:
			if !v.allRun(v.relByO[e.Obj], v.ptrO, e.Obj, s) {
				return fmt.Errorf("step %d: rcv before an earlier snd on its object", i)
			}
		case trace.OpAtomicLoad, trace.OpAtomicRMW:
			if !v.allRun(v.relByA[e.Obj], v.ptrA, e.Obj, s) {
				return fmt.Errorf("step %d: atomic load before an earlier store", i)
			}
		case trace.OpJoin:
			var c int32 = -1
			for u := range m.gs {
				if m.gs[u].gid == trace.GID(e.Obj) {
					c = int32(u)
				}
			}
			if c >= 0 {
				ev := m.gs[c].ev
				before := int32(sort.Search(len(ev), func(j int) bool { return ev[j] > s }))
				if cnt[c] < before {
					return fmt.Errorf("step %d: join before the joined goroutine's events", i)
				}
			}
		case trace.OpAcquire:
			l := locks[e.Obj]
			if l == nil {
				l = &lk{writer: -1}
				locks[e.Obj] = l
			}
			if l.writer >= 0 || (!e.ReadLock() && l.readers > 0) {
				return fmt.Errorf("step %d: acquires a lock held by another goroutine", i)
			}
			if e.ReadLock() {
				l.readers++
			} else {
				l.writer = g
			}
		case trace.OpRelease:
			if l := locks[e.Obj]; l != nil {
				switch {
				case e.ReadLock() && l.readers > 0:
					l.readers--
				case l.writer == g:
					l.writer = -1
				case l.readers > 0:
					l.readers--
				}
			}
		}
		if done < len(P) && s == P[done] {
			if consecutive && done > 0 && steps[i-1] != P[done-1] {
				return fmt.Errorf("step %d: anomaly event %d does not follow event %d immediately", i, done+1, done)
			}
			done++
		} else {
			for _, p := range P[done:] {
				if p == s {
					return fmt.Errorf("step %d: anomaly event out of pattern order", i)
				}
			}
		}
		v.emitted[s] = true
		cnt[g]++
	}
	if done != len(P) {
		return fmt.Errorf("the schedule runs %d of the %d anomaly events", done, len(P))
	}
	if len(steps) == 0 || steps[len(steps)-1] != P[len(P)-1] {
		return fmt.Errorf("the schedule does not end at the anomaly")
	}
	return nil
}

func (v *validator) lowest() int32 {
	for int(v.low) < len(v.emitted) && v.emitted[v.low] {
		v.low++
	}
	return v.low
}

// allRun reports whether every event of list (sorted) below s has run.
func (v *validator) allRun(list []int32, ptr map[uint64]int, obj uint64, s int32) bool {
	p := ptr[obj]
	for p < len(list) && v.emitted[list[p]] {
		p++
	}
	ptr[obj] = p
	return p >= len(list) || list[p] >= s
}
