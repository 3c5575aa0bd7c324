package instrument

import (
	"encoding/binary"
	"go/build"
	"go/types"
	"strconv"
	"strings"
)

// The O effect: what a std function does to a struct, field by field, and
// the struct's own mutex it takes around that (modref's Fields and Locks).
// A struct with exported fields is read and written by user code at each
// field's address, so one event at its first word (R, W) cannot stand for
// it: crypto/tls's Config.Clone reads every field of a Config another
// goroutine may be filling in, under the Config's own RWMutex, which the
// Go race detector reports field by field and racekit, seeing a lock,
// recorded nothing for.
//
// An entry is "O=" and items: "r:Path" or "w:Path" (a field, by names from
// the struct, "in.y" for a field of a nested struct; "*" for the object at
// its first word, as R and W; "**" for every field, a shallow copy's
// read), "z:Path" (a field written on some paths
// only, as a lazy initializer writes it: a write while it is still zero, a
// read after), "r*:Path" or "w*:Path" (the object a pointer field points
// to, at its first word, or the map a map field holds), "lock:Path" or
// "rlock:Path" (the Mutex or RWMutex field the function takes,
// exclusively or shared). stdEffectsOf
// turns them into rt.Fields' layout for the operand's type: offsets from
// go/types' sizes for the target, so a field added in another Go release
// moves nothing by hand (a field the release lacks drops the entry).

// maxObjectEvents bounds the events one call records for its O effect.
const maxObjectEvents = 128

// objectSizes is the layout of the target's structs (GOARCH as the go
// command sees it).
var objectSizes = types.SizesFor("gc", build.Default.GOARCH)

// objectLayout returns rt.Fields' layout for the items of an O entry of
// fn's operand (-1: the receiver), and false when the operand is not a
// pointer to a named struct or an item names no field of it.
func objectLayout(fn *types.Func, operand int, items string) (string, bool) {
	p, st, ok := operandStruct(fn, operand)
	if !ok {
		return "", false
	}
	var lock, acc []byte
	events := 0
	for _, item := range strings.Split(items, ",") {
		kind, path, _ := strings.Cut(item, ":")
		if path == "*" {
			acc = appendAccess(acc, kind, 0, 8, 1)
			events++
			continue
		}
		if path == "**" && (kind == "r" || kind == "w" || kind == "z") {
			acc = appendLeaves(acc, kind, p.Elem(), 0, &events)
			continue
		}
		off, ft, ok := fieldAt(st, path)
		if !ok {
			return "", false
		}
		switch kind {
		case "lock", "rlock":
			if lock != nil {
				return "", false // one lock (objectEntry)
			}
			mode := byte('l')
			if kind == "rlock" {
				mode = 's'
			}
			lock = binary.AppendUvarint([]byte{mode}, uint64(off))
		case "r", "w", "z":
			acc = appendLeaves(acc, kind, ft, off, &events)
		case "r*", "w*":
			if !pointsToOne(ft) {
				return "", false
			}
			acc = appendAccess(acc, strings.ToUpper(kind[:1]), off, 8, 1)
			events++
		default:
			return "", false
		}
	}
	if len(acc) == 0 {
		return "", false
	}
	return strconv.Quote(string(lock) + string(acc)), true
}

// operandStruct returns the pointer type of fn's operand (-1: the
// receiver) and the named struct it points to; ok is false for any other
// operand.
func operandStruct(fn *types.Func, operand int) (p *types.Pointer, st *types.Struct, ok bool) {
	sig, ok := fn.Type().(*types.Signature)
	if !ok {
		return nil, nil, false
	}
	var t types.Type
	switch {
	case operand < 0 && sig.Recv() != nil:
		t = sig.Recv().Type()
	case operand >= 0 && operand < sig.Params().Len():
		t = sig.Params().At(operand).Type()
	default:
		return nil, nil, false
	}
	return pointerStruct(t)
}

// pointerStruct returns t as a pointer to a named struct, and the struct.
func pointerStruct(t types.Type) (p *types.Pointer, st *types.Struct, ok bool) {
	p, ok = types.Unalias(t).(*types.Pointer)
	if !ok {
		return nil, nil, false
	}
	if _, named := types.Unalias(p.Elem()).(*types.Named); !named {
		return nil, nil, false
	}
	st, ok = p.Elem().Underlying().(*types.Struct)
	if !ok || objectSizes == nil {
		return nil, nil, false
	}
	return p, st, true
}

// lockLayout returns rt's layout of the mutex at path in the struct t
// points to, quoted: its 'l' item alone (rt.CallbackLock).
func lockLayout(t types.Type, path string) (string, bool) {
	_, st, ok := pointerStruct(t)
	if !ok {
		return "", false
	}
	off, _, ok := fieldAt(st, path)
	if !ok {
		return "", false
	}
	return strconv.Quote(string(binary.AppendUvarint([]byte{'l'}, uint64(off)))), true
}

// pointsToOne reports whether a field of type t holds a pointer that one
// event at its target stands for: a map's, or a struct's without exported
// fields (modref's Deref).
func pointsToOne(t types.Type) bool {
	switch u := t.Underlying().(type) {
	case *types.Map:
		return true
	case *types.Pointer:
		return opaqueStruct(u.Elem())
	}
	return false
}

// opaqueStruct reports whether t is a named struct without exported
// fields.
func opaqueStruct(t types.Type) bool {
	n, ok := types.Unalias(t).(*types.Named)
	if !ok {
		return false
	}
	st, ok := n.Underlying().(*types.Struct)
	if !ok || st.NumFields() == 0 {
		return false
	}
	for i := 0; i < st.NumFields(); i++ {
		if st.Field(i).Exported() {
			return false
		}
	}
	return true
}

// fieldAt returns the offset and type of the field at path (names joined
// by ".") in st.
func fieldAt(st *types.Struct, path string) (int64, types.Type, bool) {
	var off int64
	var t types.Type
	for _, name := range strings.Split(path, ".") {
		if st == nil {
			return 0, nil, false
		}
		fields := make([]*types.Var, st.NumFields())
		idx := -1
		for i := range fields {
			fields[i] = st.Field(i)
			if fields[i].Name() == name {
				idx = i
			}
		}
		if idx < 0 {
			return 0, nil, false
		}
		off += objectSizes.Offsetsof(fields)[idx]
		t = fields[idx].Type()
		st, _ = t.Underlying().(*types.Struct)
	}
	return off, t, true
}

// appendLeaves appends the accesses (kind "r", "w" or "z") of a field of type t
// at off: one event at each value user code reads or writes whole (a
// number, pointer, string, slice, interface...), each element of an array
// of them, the fields of a nested struct; none of a sync or sync/atomic
// value, which is synchronization, not data. At most maxObjectEvents in
// all.
func appendLeaves(acc []byte, kind string, t types.Type, off int64, events *int) []byte {
	if *events >= maxObjectEvents {
		return acc
	}
	if n, ok := types.Unalias(t).(*types.Named); ok && n.Obj().Pkg() != nil {
		switch n.Obj().Pkg().Path() {
		case "sync", "sync/atomic":
			return acc
		}
	}
	switch u := t.Underlying().(type) {
	case *types.Struct:
		fields := make([]*types.Var, u.NumFields())
		for i := range fields {
			fields[i] = u.Field(i)
		}
		offs := objectSizes.Offsetsof(fields)
		for i, f := range fields {
			if f.Name() != "_" {
				acc = appendLeaves(acc, kind, f.Type(), off+offs[i], events)
			}
		}
		return acc
	case *types.Array:
		switch u.Elem().Underlying().(type) {
		case *types.Struct, *types.Array:
			size := objectSizes.Sizeof(u.Elem())
			for i := int64(0); i < u.Len(); i++ {
				acc = appendLeaves(acc, kind, u.Elem(), off+i*size, events)
			}
			return acc
		}
		n := min(u.Len(), int64(maxObjectEvents-*events))
		if n <= 0 {
			return acc
		}
		*events += int(n)
		return appendAccess(acc, kind, off, objectSizes.Sizeof(u.Elem()), n)
	}
	*events++
	return appendAccess(acc, kind, off, min(objectSizes.Sizeof(t), 8), 1)
}

// appendAccess appends one access item of rt.Fields' layout: 'r', 'w' or
// 'z' (a field), 'R' or 'W' (what a field points to), then the offset,
// the element size and the count, as uvarints.
func appendAccess(acc []byte, kind string, off, elem, n int64) []byte {
	acc = append(acc, kind[0])
	acc = binary.AppendUvarint(acc, uint64(off))
	acc = binary.AppendUvarint(acc, uint64(max(elem, 1)))
	return binary.AppendUvarint(acc, uint64(n))
}
