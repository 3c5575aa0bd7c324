package instrument

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"go/types"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/racekit/racekit/instrument/modref"
)

var updateModref = flag.Bool("update-modref", false, "rewrite modref_table.go from the installed Go's standard library")

// stdModrefTable runs package modref over the standard library and returns
// the interceptor entries (stdcalls.go's vocabulary) of its exported
// functions and methods.
func stdModrefTable(t *testing.T) map[string]string {
	res := modref.Analyze(stdFunctions(t))
	table := map[string]string{}
	for fn, s := range res {
		obj, ok := fn.Object().(*types.Func)
		if !ok || fn.Synthetic != "" || fn.TypeParams().Len() > 0 || len(fn.TypeArgs()) > 0 || !userVisible(obj) {
			continue
		}
		switch obj.Pkg().Path() {
		case "reflect", "sync", "sync/atomic", "runtime", "unsafe", "testing", "iter":
			continue // hooks of their own, or synchronization itself
		}
		key := stdKey(obj)
		if key == "" || s.GlobalLock {
			continue
		}
		if e := modrefEntry(obj, s); e != "" {
			table[key] = e
		}
	}
	return table
}

// modrefEntry writes a summary as a stdTable entry: for each operand the
// rewriter can record at one place, the receiver's or an argument's object
// read or written, unless the function synchronizes on it. A pointer
// counts only to a struct with no exported field (one event at its first
// word stands for it: user code reaches its fields only through methods);
// a slice's elements (each: an encoder's dst, a checksum's data), a map. A variadic parameter is a slice the call
// makes: nothing.
func modrefEntry(fn *types.Func, s *modref.Summary) string {
	sig := fn.Type().(*types.Signature)
	var ops []string
	var typs []types.Type
	if sig.Recv() != nil {
		ops, typs = append(ops, "r"), append(typs, sig.Recv().Type())
	}
	for i := 0; i < sig.Params().Len(); i++ {
		if sig.Variadic() && i == sig.Params().Len()-1 {
			break
		}
		ops, typs = append(ops, fmt.Sprint(i)), append(typs, sig.Params().At(i).Type())
	}
	out := ""
	for i, op := range ops {
		if i >= len(s.Params) {
			break
		}
		e := s.Params[i]
		if e&modref.Sync != 0 || e&(modref.Read|modref.Write) == 0 {
			continue
		}
		w := e&modref.Write != 0
		kind := ""
		switch u := typs[i].Underlying().(type) {
		case *types.Pointer:
			kind = objectEntry(u.Elem(), e, s.Whole[i], s.Fields[i], s.Locks[i], s.Deref[i])
			if kind == "" {
				continue
			}
		case *types.Slice:
			// Every element, a byte's too (rt's word-sized EB would
			// miss a byte racing inside a word).
			kind = pick(w, "EW", "ER")
		case *types.Map:
			kind = pick(w, "MW", "MR")
		default:
			continue
		}
		if out != "" {
			out += " "
		}
		out += op + ":" + kind
	}
	return out
}

// objectEntry is the effect on the struct t a pointer operand points to:
// R or W at its first word for an opaque struct; O (rt.Fields) with a field
// list for one that has exported fields, if every access is through a
// field path, or for either when the function takes the struct's own lock
// (one: rt cannot order two the way std does) or reaches the objects its
// pointer fields point to (an opaque struct's, at its first word) or its
// map fields hold.
func objectEntry(t types.Type, e, whole modref.Effect, fields, locks, deref modref.Paths) string {
	st, ok := types.Unalias(t).Underlying().(*types.Struct)
	if _, named := types.Unalias(t).(*types.Named); !named || !ok || len(locks) > 1 {
		return ""
	}
	w := e&modref.Write != 0
	opaque := opaqueStruct(t)
	var derefs []string
	for path, de := range deref {
		if ft := fieldType(st, path); ft != nil && pointsToOne(ft) {
			derefs = append(derefs, pick(de&modref.Write != 0, "w*:", "r*:")+fieldNames(st, path))
		}
	}
	sort.Strings(derefs)
	if opaque && len(locks) == 0 && len(derefs) == 0 {
		return pick(w, "W", "R")
	}
	var items []string
	for path, mode := range locks {
		items = append(items, pick(mode&modref.Write != 0, "lock:", "rlock:")+fieldNames(st, path))
	}
	switch {
	case opaque:
		items = append(items, pick(w, "w:*", "r:*"))
	case whole != 0:
		return ""
	default:
		var fs []string
		for path, fe := range fields {
			kind := pick(fe&modref.Write != 0, "w:", pick(fe&modref.Lazy != 0, "z:", "r:"))
			fs = append(fs, kind+fieldNames(st, path))
		}
		sort.Strings(fs)
		items = append(items, fs...)
	}
	items = append(items, derefs...)
	if len(items) == len(locks) {
		return "" // nothing but the lock
	}
	return "O=" + strings.Join(items, ",")
}

// fieldType returns the type of the field at path (indices) in st.
func fieldType(st *types.Struct, path string) types.Type {
	var t types.Type
	for _, idx := range strings.Split(path, ".") {
		i, _ := strconv.Atoi(idx)
		if st == nil || i >= st.NumFields() {
			return nil
		}
		t = st.Field(i).Type()
		st, _ = t.Underlying().(*types.Struct)
	}
	return t
}

// fieldNames turns a path of field indices ("3.1") into field names
// ("in.y"); "" (the whole struct) into "**".
func fieldNames(st *types.Struct, path string) string {
	if path == "" {
		return "**"
	}
	var names []string
	for _, idx := range strings.Split(path, ".") {
		i, _ := strconv.Atoi(idx)
		f := st.Field(i)
		names = append(names, f.Name())
		st, _ = f.Type().Underlying().(*types.Struct)
	}
	return strings.Join(names, ".")
}

func pick(w bool, yes, no string) string {
	if w {
		return yes
	}
	return no
}

func renderModrefTable(table map[string]string) []byte {
	keys := make([]string, 0, len(table))
	for k := range table {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by go test ./instrument -run TestModrefTable -update-modref; DO NOT EDIT.\n\n")
	fmt.Fprintf(&b, "package instrument\n\n")
	fmt.Fprintf(&b, "// modrefGoVersion is the Go release whose standard library the table was computed from.\n")
	fmt.Fprintf(&b, "const modrefGoVersion = %q\n\n", goRelease())
	fmt.Fprintf(&b, "// modrefStd: the interceptor entries (stdTable's vocabulary) that package\n// modref derives from the standard library's SSA; stdTable's own entry wins.\n")
	fmt.Fprintf(&b, "var modrefStd = map[string]string{\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "\t%q: %q,\n", k, table[k])
	}
	fmt.Fprintf(&b, "}\n")
	out, err := format.Source(b.Bytes())
	if err != nil {
		panic(err)
	}
	return out
}

// TestModrefTable checks modref_table.go against the analysis of the
// installed Go's standard library, or rewrites it with -update-modref.
// Skipped with -short (it loads all of std).
func TestModrefTable(t *testing.T) {
	checkStdTable(t, "modref_table.go", "TestModrefTable -update-modref", *updateModref, modrefGoVersion,
		func() []byte { return renderModrefTable(stdModrefTable(t)) })
}
