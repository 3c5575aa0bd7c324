package rt

import (
	"reflect"
	"unsafe"

	"github.com/racekit/racekit/trace"
)

// Hooks for package reflect. Reading or setting a variable through a
// reflect.Value happens inside package reflect, which is not traced; the Go
// race detector sees it because it instruments reflect. Instrumented code
// calls these hooks in place of the methods (v.SetInt(1) becomes
// rt.ReflectSetInt(v, 1, site, rec)): each records the access to the memory
// the Value refers to, when the Value is addressable (otherwise it holds a
// copy no other goroutine has), and performs the call.

// valueAccess records kind (hookRead, hookWrite) of the variable v refers
// to, if v is addressable.
func valueAccess(kind uint8, v reflect.Value, site uint32, rec bool) {
	if !(ctl || on && rec) || !v.IsValid() || !v.CanAddr() {
		return
	}
	accessHook(kind, unsafe.Pointer(v.UnsafeAddr()), v.Type().Size(), site, rec)
}

// valueMap records an access to the map v holds (see mapHook).
func valueMap(kind uint8, v reflect.Value, site uint32, rec bool) {
	if !(ctl || on && rec) || !v.IsValid() || v.Kind() != reflect.Map || v.IsNil() {
		return
	}
	mapHook(kind, v.UnsafePointer(), site, rec)
}

// valueElems records op of the first n elements of the slice or array v
// (an array only if addressable: otherwise a copy).
func valueElems(op trace.Op, v reflect.Value, n int, site uint32, rec bool) {
	if !(ctl || on && rec) || n <= 0 || !v.IsValid() {
		return
	}
	var p unsafe.Pointer
	switch v.Kind() {
	case reflect.Slice:
		p = v.UnsafePointer()
	case reflect.Array:
		if !v.CanAddr() {
			return
		}
		p = unsafe.Pointer(v.UnsafeAddr())
	default:
		return
	}
	elem := v.Type().Elem().Size()
	if ctl {
		if op == trace.OpWrite {
			ctlWrite(p, uintptr(n)*elem, site)
		} else {
			ctlRead(p, uintptr(n)*elem, site)
		}
	}
	if on && rec {
		rangeAccess(op, p, elem, n, site)
	}
}

// ReflectCopy is reflect.Copy(dst, src): it reads the elements of src it
// copies and writes those of dst.
func ReflectCopy(dst, src reflect.Value, site uint32, rec bool) int {
	if (ctl || on && rec) && dst.IsValid() && src.IsValid() {
		if k := src.Kind(); k == reflect.Slice || k == reflect.Array {
			if k := dst.Kind(); k == reflect.Slice || k == reflect.Array {
				n := min(dst.Len(), src.Len())
				valueElems(trace.OpRead, src, n, site, rec)
				valueElems(trace.OpWrite, dst, n, site, rec)
			}
		}
	}
	return reflect.Copy(dst, src)
}

// Reads of the variable.

func ReflectInt(v reflect.Value, site uint32, rec bool) int64 {
	valueAccess(hookRead, v, site, rec)
	return v.Int()
}

func ReflectUint(v reflect.Value, site uint32, rec bool) uint64 {
	valueAccess(hookRead, v, site, rec)
	return v.Uint()
}

func ReflectFloat(v reflect.Value, site uint32, rec bool) float64 {
	valueAccess(hookRead, v, site, rec)
	return v.Float()
}

func ReflectBool(v reflect.Value, site uint32, rec bool) bool {
	valueAccess(hookRead, v, site, rec)
	return v.Bool()
}

func ReflectComplex(v reflect.Value, site uint32, rec bool) complex128 {
	valueAccess(hookRead, v, site, rec)
	return v.Complex()
}

// ReflectString is v.String(), which reads v only when it holds a string.
func ReflectString(v reflect.Value, site uint32, rec bool) string {
	if v.IsValid() && v.Kind() == reflect.String {
		valueAccess(hookRead, v, site, rec)
	}
	return v.String()
}

func ReflectInterface(v reflect.Value, site uint32, rec bool) any {
	valueAccess(hookRead, v, site, rec)
	return v.Interface()
}

// Writes of the variable.

// ReflectSet is v.Set(x): a write of v, a read of x.
func ReflectSet(v, x reflect.Value, site uint32, rec bool) {
	valueAccess(hookRead, x, site, rec)
	valueAccess(hookWrite, v, site, rec)
	v.Set(x)
}

func ReflectSetInt(v reflect.Value, x int64, site uint32, rec bool) {
	valueAccess(hookWrite, v, site, rec)
	v.SetInt(x)
}

func ReflectSetUint(v reflect.Value, x uint64, site uint32, rec bool) {
	valueAccess(hookWrite, v, site, rec)
	v.SetUint(x)
}

func ReflectSetFloat(v reflect.Value, x float64, site uint32, rec bool) {
	valueAccess(hookWrite, v, site, rec)
	v.SetFloat(x)
}

func ReflectSetBool(v reflect.Value, x bool, site uint32, rec bool) {
	valueAccess(hookWrite, v, site, rec)
	v.SetBool(x)
}

func ReflectSetComplex(v reflect.Value, x complex128, site uint32, rec bool) {
	valueAccess(hookWrite, v, site, rec)
	v.SetComplex(x)
}

func ReflectSetString(v reflect.Value, x string, site uint32, rec bool) {
	valueAccess(hookWrite, v, site, rec)
	v.SetString(x)
}

func ReflectSetBytes(v reflect.Value, x []byte, site uint32, rec bool) {
	valueAccess(hookWrite, v, site, rec)
	v.SetBytes(x)
}

func ReflectSetLen(v reflect.Value, n int, site uint32, rec bool) {
	valueAccess(hookWrite, v, site, rec)
	v.SetLen(n)
}

func ReflectSetCap(v reflect.Value, n int, site uint32, rec bool) {
	valueAccess(hookWrite, v, site, rec)
	v.SetCap(n)
}

// Maps held by the Value.

func ReflectMapIndex(v, key reflect.Value, site uint32, rec bool) reflect.Value {
	valueMap(hookRead, v, site, rec)
	return v.MapIndex(key)
}

// ReflectMapKeys reads the map and returns its keys in a slice reflect
// allocates: recorded new, as the fresh results of other std calls are.
func ReflectMapKeys(v reflect.Value, site uint32, rec bool) []reflect.Value {
	valueMap(hookRead, v, site, rec)
	return MakeSlice(v.MapKeys(), site)
}

func ReflectSetMapIndex(v, key, elem reflect.Value, site uint32, rec bool) {
	valueMap(hookWrite, v, site, rec)
	v.SetMapIndex(key, elem)
}

// Objects package reflect allocates: recorded as new (see Alloc) when the
// call returns, as new(T) and make are in traced code; a decoder's
// reflect.New and MakeMap otherwise inherit the accesses of a dead
// object at their address.

func ReflectNew(t reflect.Type, site uint32) reflect.Value {
	v := reflect.New(t)
	if on {
		allocEvent(v.UnsafePointer(), t.Size(), site)
	}
	return v
}

func ReflectMakeSlice(t reflect.Type, n, c int, site uint32) reflect.Value {
	v := reflect.MakeSlice(t, n, c)
	if on && c > 0 {
		allocEvent(v.UnsafePointer(), uintptr(c)*t.Elem().Size(), site)
	}
	return v
}

func ReflectMakeMap(t reflect.Type, site uint32) reflect.Value {
	return reflectMadeMap(reflect.MakeMap(t), site)
}

func ReflectMakeMapWithSize(t reflect.Type, n int, site uint32) reflect.Value {
	return reflectMadeMap(reflect.MakeMapWithSize(t, n), site)
}

func reflectMadeMap(v reflect.Value, site uint32) reflect.Value {
	if on {
		allocEvent(v.UnsafePointer(), 1, site) // the map's own pointer, as MakeMap
	}
	return v
}

// ReflectAppend(site, rec)(s, x...) is reflect.Append(s, x...): it writes
// the elements it appends, into s's array or into a new one it allocates.
// (Variadic: the site comes first, in a call of its own.)
func ReflectAppend(site uint32, rec bool) func(s reflect.Value, x ...reflect.Value) reflect.Value {
	return func(s reflect.Value, x ...reflect.Value) reflect.Value {
		r := reflect.Append(s, x...)
		reflectAppended(s, r, site, rec)
		return r
	}
}

// ReflectAppendSlice is reflect.AppendSlice(s, t): it reads t's elements
// and writes them after s's, as ReflectAppend.
func ReflectAppendSlice(s, t reflect.Value, site uint32, rec bool) reflect.Value {
	if t.IsValid() && t.Kind() == reflect.Slice {
		valueElems(trace.OpRead, t, t.Len(), site, rec)
	}
	r := reflect.AppendSlice(s, t)
	reflectAppended(s, r, site, rec)
	return r
}

// reflectAppended records what appending to s, giving r, did: a new array
// if r's is not s's, and the writes of r's elements past s's length.
func reflectAppended(s, r reflect.Value, site uint32, rec bool) {
	n := r.Len() - s.Len()
	if n <= 0 {
		return
	}
	elem := r.Type().Elem().Size()
	p := r.UnsafePointer()
	if on && p != s.UnsafePointer() {
		allocEvent(p, uintptr(r.Cap())*elem, site)
	}
	q := unsafe.Add(p, uintptr(s.Len())*elem)
	if ctl {
		ctlWrite(q, uintptr(n)*elem, site)
	}
	if on && rec {
		rangeAccess(trace.OpWrite, q, elem, n, site)
	}
}

// ReflectMakeFunc is reflect.MakeFunc(typ, fn): each call of the function
// made gives fn a new slice of its arguments, which reflect allocates.
func ReflectMakeFunc(typ reflect.Type, fn func([]reflect.Value) []reflect.Value, site uint32) reflect.Value {
	return reflect.MakeFunc(typ, func(args []reflect.Value) []reflect.Value {
		if on && cap(args) > 0 {
			allocEvent(unsafe.Pointer(unsafe.SliceData(args)), uintptr(cap(args))*unsafe.Sizeof(reflect.Value{}), site)
		}
		return fn(args)
	})
}

// ReflectCall is v.Call(in): it reads in's elements and returns a new
// slice of results, which reflect allocates. A call of testing's Run goes
// to rttest's model of it (reflectRun).
func ReflectCall(v reflect.Value, in []reflect.Value, site uint32, rec bool) []reflect.Value {
	valueArgs(in, site, rec)
	if reflectRun != nil {
		if out, ok := reflectRun(v, in, site); ok {
			return out
		}
	}
	return reflectResults(v.Call(in), site)
}

// reflectRun makes v.Call(in) when v is package testing's T.Run or B.Run,
// through rttest's model of Run (ok true); nil in a program that does not
// link rttest (rt cannot import testing). Set once, by rttest's
// initialization. go-testdeep's td.T.Run calls the Run method it finds on
// its TB by reflection: without the model, the parent's code after it was
// not ordered after the subtest's (jarcoal/httpmock's tests, corpus
// session 54).
var reflectRun func(v reflect.Value, in []reflect.Value, site uint32) ([]reflect.Value, bool)

// SetReflectRun is called by rttest's initialization.
func SetReflectRun(f func(v reflect.Value, in []reflect.Value, site uint32) ([]reflect.Value, bool)) {
	reflectRun = f
}

// ReflectCallSlice is v.CallSlice(in), as ReflectCall.
func ReflectCallSlice(v reflect.Value, in []reflect.Value, site uint32, rec bool) []reflect.Value {
	valueArgs(in, site, rec)
	return reflectResults(v.CallSlice(in), site)
}

func valueArgs(in []reflect.Value, site uint32, rec bool) {
	if len(in) == 0 {
		return
	}
	size := unsafe.Sizeof(reflect.Value{})
	p := unsafe.Pointer(unsafe.SliceData(in))
	if ctl {
		ctlRead(p, uintptr(len(in))*size, site)
	}
	if on && rec {
		rangeAccess(trace.OpRead, p, size, len(in), site)
	}
}

func reflectResults(out []reflect.Value, site uint32) []reflect.Value {
	if on && cap(out) > 0 {
		allocEvent(unsafe.Pointer(unsafe.SliceData(out)), uintptr(cap(out))*unsafe.Sizeof(reflect.Value{}), site)
	}
	return out
}

// ReflectGrow is v.Grow(n): it writes the slice header v refers to and,
// when the array is too small, allocates a new one.
func ReflectGrow(v reflect.Value, n int, site uint32, rec bool) {
	valueAccess(hookWrite, v, site, rec)
	var old unsafe.Pointer
	if v.Kind() == reflect.Slice {
		old = v.UnsafePointer()
	}
	v.Grow(n)
	if on && v.Kind() == reflect.Slice && v.Cap() > 0 && v.UnsafePointer() != old {
		allocEvent(v.UnsafePointer(), uintptr(v.Cap())*v.Type().Elem().Size(), site)
	}
}
