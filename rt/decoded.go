package rt

import (
	"reflect"
	"unsafe"
)

// Objects a decoder allocates. json.Unmarshal(data, &v), a json, xml or gob
// Decoder's Decode(&v) fill v with maps, slices and pointers that the
// standard library allocates unseen (see Alloc for why an allocation must
// be recorded). When v is zero before the call, every object reachable
// from it afterwards is one the decoder made; the instrumenter writes
//
//	rt.Decoded(rt.DecodeTarget(&v), json.Unmarshal(data, &v), site)
//
// and Decoded records those objects new. A target that already held
// something (a struct with defaults, a map the decoder adds to) is left
// alone: its objects may be old ones other goroutines used, whose history
// must stay.

// decodedMaxObjects bounds the walk of one decoded value.
const decodedMaxObjects = 1 << 14

// DecodeTarget returns p, a pointer to a decoder's target, if the value
// it points to is zero, else nil.
func DecodeTarget(p any) any {
	if !on || p == nil {
		return nil
	}
	v := reflect.ValueOf(p)
	if v.Kind() != reflect.Pointer || v.IsNil() || !v.Elem().IsZero() {
		return nil
	}
	return p
}

// Decoded records the allocation of the objects reachable from target,
// DecodeTarget's result, and returns v, the decoding call's result.
func Decoded[T any](target any, v T, site uint32) T {
	if on && target != nil {
		w := decodedWalk{seen: map[uintptr]bool{}, site: site}
		w.value(reflect.ValueOf(target).Elem())
	}
	return v
}

type decodedWalk struct {
	seen map[uintptr]bool
	site uint32
}

// object records the object of size bytes at p, once; it reports whether
// the walk goes on into it.
func (w *decodedWalk) object(p unsafe.Pointer, size uintptr) bool {
	if p == nil || w.seen[uintptr(p)] || len(w.seen) >= decodedMaxObjects {
		return false
	}
	w.seen[uintptr(p)] = true
	if size > 0 {
		allocEvent(p, size, w.site)
	}
	return true
}

func (w *decodedWalk) value(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() && w.object(v.UnsafePointer(), v.Type().Elem().Size()) {
			w.value(v.Elem())
		}
	case reflect.Interface:
		if !v.IsNil() {
			w.value(v.Elem())
		}
	case reflect.Map:
		if v.IsNil() || !w.object(v.UnsafePointer(), 1) { // the map's own pointer, as MakeMap
			return
		}
		if pointerFree(v.Type().Key()) && pointerFree(v.Type().Elem()) {
			return
		}
		for it := v.MapRange(); it.Next(); {
			w.value(it.Key())
			w.value(it.Value())
		}
	case reflect.Slice:
		if v.Cap() == 0 || !w.object(v.UnsafePointer(), uintptr(v.Cap())*v.Type().Elem().Size()) {
			return
		}
		w.elems(v)
	case reflect.Array:
		w.elems(v)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			w.value(v.Field(i))
		}
	}
}

func (w *decodedWalk) elems(v reflect.Value) {
	if pointerFree(v.Type().Elem()) {
		return
	}
	for i := 0; i < v.Len() && len(w.seen) < decodedMaxObjects; i++ {
		w.value(v.Index(i))
	}
}

// pointerFree reports whether a value of t leads to no other object.
func pointerFree(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Slice:
		return false
	case reflect.Array:
		return pointerFree(t.Elem())
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if !pointerFree(t.Field(i).Type) {
				return false
			}
		}
	}
	return true // strings too: immutable
}
