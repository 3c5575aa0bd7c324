package rt

import (
	"cmp"
	"reflect"
	"slices"
)

// Map iteration under control. Go starts each range over a map at a
// random place, from a source no seed reaches, so a program that ranges
// over a map (which entry a cache evicts on a tie, which job a loop picks
// first) ran differently each time a seed was replayed. The instrumenter
// turns `for k, v := range m` into `for k, v := range rt.MRange(m, site)`
// in files whose language version has range-over-func (go1.23), and in
// controlled mode MRange visits the entries in an order the run's seed
// decides: the keys sorted into a canonical order, then shuffled by the
// scheduler's own generator (so different seeds still see different
// orders, as Go intends, and one seed always the same). Outside controlled
// mode it is Go's own range.
//
// The spec's rules for a map changed during the loop hold: an entry
// deleted before it is reached is not produced (each key is looked up
// again when its turn comes, and its value then is the one produced), and
// an entry added during the loop is not produced, which the spec allows.

// MRange records a read of map m (as MR) and returns an iterator over its
// entries (see above).
func MRange[M ~map[K]V, K comparable, V any](m M, site uint32, rec bool) func(yield func(K, V) bool) {
	MR(m, site, rec)
	if !ctl {
		return func(yield func(K, V) bool) {
			for k, v := range m {
				if !yield(k, v) {
					return
				}
			}
		}
	}
	return func(yield func(K, V) bool) {
		keys := make([]K, 0, len(m))
		vals := make([]V, 0, len(m))
		for k, v := range m {
			keys = append(keys, k)
			vals = append(vals, v)
		}
		order := make([]int, len(keys))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int { return keyCompare(keys[a], keys[b]) })
		ctlMapShuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, i := range order {
			k := keys[i]
			v, ok := m[k]
			if !ok {
				if k == k {
					continue // deleted by the loop
				}
				v = vals[i] // a NaN key cannot be looked up
			}
			if !yield(k, v) {
				return
			}
		}
	}
}

// ctlMapShuffle permutes n keys with the scheduler's map generator when
// the calling goroutine is under control (its draws then come in the
// schedule's order); a goroutine outside control keeps the sorted order,
// which takes no draw.
func ctlMapShuffle(n int, swap func(i, j int)) {
	if n < 2 {
		return
	}
	schedLock()
	if ctl && sc.mapRng != nil && sc.byGoid[goid()] != nil {
		sc.mapRng.Shuffle(n, swap)
	}
	sc.mu.Unlock()
}

// keyCompare orders two map keys of one type the same way in every run:
// by value for numbers, strings, booleans and their arrays and structs;
// pointers and channels by address (stable only as far as the allocator
// is); interfaces by dynamic type name, then value. It is a total order on
// the keys one map can hold (NaNs first, equal to each other: a sort is
// then still deterministic up to NaN keys, whose values are equal keys of
// no lookup).
func keyCompare[K comparable](a, b K) int {
	var zero K // K's own type, not an interface key's dynamic one
	switch any(zero).(type) {
	case string:
		return cmp.Compare(any(a).(string), any(b).(string))
	case int:
		return cmp.Compare(any(a).(int), any(b).(int))
	case int64:
		return cmp.Compare(any(a).(int64), any(b).(int64))
	case uint64:
		return cmp.Compare(any(a).(uint64), any(b).(uint64))
	}
	return valueCompare(reflect.ValueOf(&a).Elem(), reflect.ValueOf(&b).Elem())
}

func valueCompare(a, b reflect.Value) int {
	switch a.Kind() {
	case reflect.Bool:
		return cmp.Compare(b2i(a.Bool()), b2i(b.Bool()))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return cmp.Compare(a.Int(), b.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return cmp.Compare(a.Uint(), b.Uint())
	case reflect.Float32, reflect.Float64:
		return cmp.Compare(a.Float(), b.Float()) // NaNs first, equal to each other
	case reflect.Complex64, reflect.Complex128:
		if c := cmp.Compare(real(a.Complex()), real(b.Complex())); c != 0 {
			return c
		}
		return cmp.Compare(imag(a.Complex()), imag(b.Complex()))
	case reflect.String:
		return cmp.Compare(a.String(), b.String())
	case reflect.Pointer, reflect.Chan, reflect.UnsafePointer:
		return cmp.Compare(a.Pointer(), b.Pointer())
	case reflect.Array:
		for i, n := 0, a.Len(); i < n; i++ {
			if c := valueCompare(a.Index(i), b.Index(i)); c != 0 {
				return c
			}
		}
		return 0
	case reflect.Struct:
		for i, n := 0, a.NumField(); i < n; i++ {
			if c := valueCompare(a.Field(i), b.Field(i)); c != 0 {
				return c
			}
		}
		return 0
	case reflect.Interface:
		switch {
		case a.IsNil() || b.IsNil():
			return cmp.Compare(b2i(!a.IsNil()), b2i(!b.IsNil()))
		case a.Elem().Type() != b.Elem().Type():
			return cmp.Compare(typeName(a.Elem().Type()), typeName(b.Elem().Type()))
		}
		return valueCompare(a.Elem(), b.Elem())
	}
	return 0 // not a comparable kind: a map key cannot hold it
}

// typeName names a type for ordering: its package path too, so that two
// types of one name in different packages do not tie.
func typeName(t reflect.Type) string {
	return t.PkgPath() + "." + t.String()
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
