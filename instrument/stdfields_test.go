package instrument

import (
	"crypto/tls"
	"encoding/binary"
	"go/importer"
	"go/token"
	"go/types"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// layoutItem is one decoded item of rt.Fields' layout.
type layoutItem struct {
	kind           byte
	off, elem, cnt uint64
}

func decodeLayout(t *testing.T, quoted string) []layoutItem {
	t.Helper()
	s, err := strconv.Unquote(quoted)
	if err != nil {
		t.Fatal(err)
	}
	b := []byte(s)
	next := func() uint64 {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			t.Fatalf("bad uvarint in %q", s)
		}
		b = b[n:]
		return v
	}
	var out []layoutItem
	for len(b) > 0 {
		k := b[0]
		b = b[1:]
		it := layoutItem{kind: k, off: next()}
		if k != 'l' && k != 's' {
			it.elem, it.cnt = next(), next()
		}
		out = append(out, it)
	}
	return out
}

// methodOf returns the method name of the named type typ in package pkg.
func methodOf(t *testing.T, imp types.Importer, pkg, typ, name string) *types.Func {
	t.Helper()
	p, err := imp.Import(pkg)
	if err != nil {
		t.Fatal(err)
	}
	obj, _, _ := types.LookupFieldOrMethod(types.NewPointer(p.Scope().Lookup(typ).Type()), true, p, name)
	fn, ok := obj.(*types.Func)
	if !ok {
		t.Fatalf("%s.%s.%s: not a method", pkg, typ, name)
	}
	return fn
}

// The O effects' layouts name the fields' real offsets (reflect's, in this
// binary), the own mutex first, each access inside the struct.
func TestObjectLayouts(t *testing.T) {
	imp := importer.ForCompiler(token.NewFileSet(), "source", nil)
	cases := []struct {
		pkg, typ, method string
		rt               reflect.Type
		lock             string // the mutex field, "" for none
		reads, writes    []string
	}{
		{"crypto/tls", "Config", "Clone", reflect.TypeFor[tls.Config](), "mutex", []string{"MinVersion", "ServerName", "Certificates", "InsecureSkipVerify"}, nil},
		{"net/url", "URL", "String", reflect.TypeFor[url.URL](), "", []string{"Scheme", "Host", "Path", "RawQuery"}, nil},
		{"net/http", "Server", "RegisterOnShutdown", reflect.TypeFor[http.Server](), "mu", nil, []string{"onShutdown"}},
	}
	for _, c := range cases {
		fn := methodOf(t, imp, c.pkg, c.typ, c.method)
		var layout string
		for _, e := range stdEffectsOf(fn) {
			if e.kind == "O" && e.operand == -1 {
				layout = e.bound
			}
		}
		name := c.pkg + "." + c.typ + "." + c.method
		if layout == "" {
			t.Errorf("%s: no O effect on the receiver (entry %q)", name, modrefStd[stdKey(fn)])
			continue
		}
		items := decodeLayout(t, layout)
		off := func(f string) uint64 {
			sf, ok := c.rt.FieldByName(f)
			if !ok {
				t.Fatalf("%s: no field %s", c.typ, f)
			}
			return uint64(sf.Offset)
		}
		if c.lock != "" {
			if items[0].kind != 'l' && items[0].kind != 's' || items[0].off != off(c.lock) {
				t.Errorf("%s: first item %+v, want the lock at %d", name, items[0], off(c.lock))
			}
		}
		has := func(kind byte, at uint64) bool {
			for _, it := range items {
				if it.kind == kind && it.off == at {
					return true
				}
			}
			return false
		}
		for _, f := range c.reads {
			if !has('r', off(f)) {
				t.Errorf("%s: no read of %s at %d: %+v", name, f, off(f), items)
			}
		}
		for _, f := range c.writes {
			if !has('w', off(f)) {
				t.Errorf("%s: no write of %s at %d: %+v", name, f, off(f), items)
			}
		}
		for _, it := range items {
			if it.kind != 'l' && it.kind != 's' {
				if end := it.off + it.elem*it.cnt; end > uint64(c.rt.Size()) {
					t.Errorf("%s: %+v ends at %d, past the struct's %d bytes", name, it, end, c.rt.Size())
				}
			}
		}
	}
}

// Every O entry of the table (where stdTable has none) resolves against the standard library's
// types (a field renamed in a Go release would drop it silently).
func TestModrefObjectEntriesResolve(t *testing.T) {
	if testing.Short() {
		t.Skip("loads all of std")
	}
	want := 0
	for key, spec := range modrefStd {
		if _, hand := stdTable[key]; !hand && strings.Contains(spec, ":O=") {
			want++
		}
	}
	got := 0
	for _, fn := range stdFunctions(t) {
		obj, ok := fn.Object().(*types.Func)
		if !ok || fn.Synthetic != "" || !strings.Contains(modrefStd[stdKey(obj)], ":O=") {
			continue
		}
		if _, hand := stdTable[stdKey(obj)]; hand {
			continue // stdTable's entry wins
		}
		n := 0
		for _, e := range stdEffectsOf(obj) {
			if e.kind == "O" {
				n++
			}
		}
		if n != strings.Count(modrefStd[stdKey(obj)], ":O=") {
			t.Errorf("%s: %d of the O effects of %q resolve", stdKey(obj), n, modrefStd[stdKey(obj)])
		}
		got++
	}
	if got != want {
		t.Errorf("%d O entries checked, the table has %d", got, want)
	}
}
