package rt

import (
	"reflect"
	"sync"
	"unsafe"

	"github.com/racekit/racekit/trace"
)

// sync.Maps of untraced code. racekit patches package sync so that each
// method of a sync.Map calls a hook before and after it
// (instrument/synchook.go, mapFuncs); setMapHook, set by the file racekit
// adds to rt's copy, installs onMap there. Go's race detector sees the
// atomic operations inside a sync.Map, so a Store in std (mime's
// AddExtensionType, encoding/json's type cache) is ordered before the
// Load on another goroutine that finds its value; rt saw only traced
// code's methods. Each untraced method is recorded as traced code's are
// (syncatomic.go, mapOp): one atomic operation on the map as a whole,
// under the map's stripe, a load when it only read an initialized map, a
// read-modify-write otherwise; Range's visits are loads. Traced code's
// methods pass through the wrappers with their stripe held, which skips
// them (ownmutex.go), and so do rt's own maps (OwnMap). As for the other
// hooks, only goroutines rt has a state for record.

// setMapHook installs sync's map hook; nil without the patched package
// sync.
var setMapHook func(h func(m unsafe.Pointer, op uint8) bool)

func installMapHook() {
	if setMapHook != nil {
		setMapHook(onMap)
	}
}

// The operations sync's map hook passes.
const (
	mapBegin      = 0 // a method begins: does rt record it?
	mapEndRead    = 1 // the method recorded ends, having only read
	mapEndWrite   = 2 // the method recorded ends, having written
	mapRangeBegin = 3 // a Range begins: does rt record its visits?
	mapVisit      = 4 // a Range recorded visits an entry
)

// onMap runs in package sync on the goroutine of the method.
func onMap(p unsafe.Pointer, op uint8) bool {
	a := ptr(p)
	switch op {
	case mapBegin:
		g := lockHookG()
		if g == nil {
			return false
		}
		stripeOf(a).Lock()
		g.mapInit = mapInited((*sync.Map)(p))
	case mapEndRead, mapEndWrite:
		// The stripe is held since the begin: released whatever happened
		// to the trace meanwhile.
		if g := known(); g != nil && on && live.Load() {
			g.sync(mapKind(op == mapEndRead, g.mapInit), trace.FlagValueUnknown, 0, a, 0, nil)
		}
		stripeOf(a).Unlock()
	case mapRangeBegin:
		g := lockHookG()
		if g == nil {
			return false
		}
		if !mapInited((*sync.Map)(p)) {
			l := stripeOf(a)
			l.Lock()
			g.sync(trace.OpAtomicRMW, trace.FlagValueUnknown, 0, a, 0, nil) // its first operation
			l.Unlock()
		}
	case mapVisit:
		g := lockHookG()
		if g == nil {
			return false
		}
		l := stripeOf(a)
		l.Lock()
		g.sync(mapVisitOp(), trace.FlagValueUnknown, 0, a, 0, nil)
		l.Unlock()
	}
	return true
}

// OwnMap is a sync.Map of rt's (and rttest's): its methods are not the
// program's, and sync's hook skips them.
type OwnMap struct{ m sync.Map }

// Load is sync.Map's Load.
func (m *OwnMap) Load(k any) (any, bool) {
	defer skipEnd(skipBegin())
	return m.m.Load(k)
}

// Store is sync.Map's Store.
func (m *OwnMap) Store(k, v any) {
	defer skipEnd(skipBegin())
	m.m.Store(k, v)
}

// LoadOrStore is sync.Map's LoadOrStore.
func (m *OwnMap) LoadOrStore(k, v any) (any, bool) {
	defer skipEnd(skipBegin())
	return m.m.LoadOrStore(k, v)
}

// Delete is sync.Map's Delete.
func (m *OwnMap) Delete(k any) {
	defer skipEnd(skipBegin())
	m.m.Delete(k)
}

// CompareAndDelete is sync.Map's CompareAndDelete.
func (m *OwnMap) CompareAndDelete(k, old any) bool {
	defer skipEnd(skipBegin())
	return m.m.CompareAndDelete(k, old)
}

// Range is sync.Map's Range; f is rt's too.
func (m *OwnMap) Range(f func(k, v any) bool) {
	defer skipEnd(skipBegin())
	m.m.Range(f)
}

// ownPointerTo is reflect.PointerTo(t), whose cache is a sync.Map: rt's
// look, not the program's.
func ownPointerTo(t reflect.Type) reflect.Type {
	defer skipEnd(skipBegin())
	return reflect.PointerTo(t)
}
