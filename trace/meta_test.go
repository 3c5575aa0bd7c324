package trace

import (
	"io"
	"reflect"
	"testing"
)

func TestParseSiteLabel(t *testing.T) {
	for _, c := range []struct {
		label string
		want  Site
	}{
		{"main.go:12", Site{File: "main.go", Line: 12}},
		{"main.go:12:5", Site{File: "main.go", Line: 12, Col: 5}},
		{"/a/b c/x.go:3:1", Site{File: "/a/b c/x.go", Line: 3, Col: 1}},
		{"C:/x.go:3", Site{File: "C:/x.go", Line: 3}},
		{"17", Site{File: "17"}},           // RAPID's integer locations stay labels
		{":12", Site{File: ":12"}},         // no file
		{"x.go:0", Site{File: "x.go:0"}},   // lines are 1-based
		{"x.go:-1", Site{File: "x.go:-1"}}, // not a line
		{"x.go:a:3", Site{File: "x.go:a", Line: 3}},
		{"", Site{}},
	} {
		if got := ParseSiteLabel(c.label); got != c.want {
			t.Errorf("ParseSiteLabel(%q) = %+v, want %+v", c.label, got, c.want)
		}
	}
	if s := (Site{File: "a.go", Line: 3, Col: 4}).String(); s != "a.go:3:4" {
		t.Errorf("String = %q", s)
	}
	if s := (Site{}).String(); s != "?" {
		t.Errorf("unknown site String = %q", s)
	}
}

func TestMetaTablesOnlyGrow(t *testing.T) {
	m := NewMeta()
	a := m.InternSite(Site{File: "a.go", Line: 1})
	if a != 1 || m.InternSite(Site{File: "a.go", Line: 1}) != a {
		t.Fatalf("InternSite is not idempotent: %d", a)
	}
	if err := m.DefineSite(5, Site{}); err == nil {
		t.Error("DefineSite out of order accepted")
	}
	if err := m.DefineGoroutine(Goroutine{ID: 3, Parent: 0, Name: "w"}); err != nil {
		t.Fatal(err)
	}
	if err := m.DefineGoroutine(Goroutine{ID: 3}); err == nil {
		t.Error("goroutine redefined")
	}
	if m.GoroutineDefined(1) || !m.GoroutineDefined(3) {
		t.Error("GoroutineDefined wrong")
	}
	if g := m.Goroutine(1); g.Parent != NoParent || g.Label() != "G1" {
		t.Errorf("undefined goroutine = %+v (label %q)", g, g.Label())
	}
	if err := m.DefineGoroutine(Goroutine{ID: NoParent}); err == nil {
		t.Error("reserved goroutine ID accepted")
	}
	m.SetName(0x10, "x")
	m.SetName(0x10, "y") // first name wins
	if m.NameOf(0x10) != "x" || m.ObjLabel(0x20) != "0x20" {
		t.Errorf("names: %q %q", m.NameOf(0x10), m.ObjLabel(0x20))
	}
}

// Copy forwards every definition before the first event that may use it.
func TestCopyCarriesMetadata(t *testing.T) {
	b := NewBuilder()
	b.Fork("main", "T1", "a.go:1")
	b.WriteV("T1", "x", 7, "a.go:2")
	b.Call("T1", "os.ReadFile", "x", "y")
	src := b.Trace()
	dst := NewTrace()
	n, err := Copy(dst, src.Iter())
	if err != nil || n != 3 {
		t.Fatalf("Copy = %d, %v", n, err)
	}
	if !reflect.DeepEqual(dst.Events, src.Events) {
		t.Errorf("events differ:\n%+v\n%+v", dst.Events, src.Events)
	}
	if !reflect.DeepEqual(dst.M.Sites, src.M.Sites) || !reflect.DeepEqual(dst.M.Goroutines, src.M.Goroutines) || !reflect.DeepEqual(dst.M.Names, src.M.Names) {
		t.Errorf("meta differs:\n%+v\n%+v", dst.M, src.M)
	}
	if g := dst.M.Goroutine(1); g.Parent != 0 || dst.M.Site(g.Site).Line != 1 {
		t.Errorf("child's creation not carried: %+v", g)
	}
	// Events handed out by a reader are copies: changing one does not
	// change the trace.
	r := src.Iter()
	var e Event
	if err := r.Next(&e); err != nil {
		t.Fatal(err)
	}
	e.Obj = 99
	if src.Events[0].Obj == 99 {
		t.Error("reader aliased the trace's event")
	}
	for r.Next(&e) == nil {
	}
	if err := r.Next(&e); err != io.EOF {
		t.Errorf("after the end: %v, want io.EOF", err)
	}
}

func TestEventValidate(t *testing.T) {
	good := []Event{
		{Op: OpRead, Flags: FlagValueUnknown},
		{Op: OpAcquire, Flags: FlagReadLock},
		{Op: OpMethodBegin, Addrs: []uint64{1, 2}},
		{Op: OpFork, Obj: 0xFFFFFFFE},
	}
	for _, e := range good {
		if err := e.Validate(); err != nil {
			t.Errorf("%+v: %v", e, err)
		}
	}
	bad := []Event{
		{Op: OpInvalid},
		{Op: Op(NumOps)},
		{Op: OpWrite, Flags: FlagReadLock},
		{Op: OpAcquire, Flags: FlagValueUnknown},
		{Op: OpRead, Addrs: []uint64{1}},
		{Op: OpJoin, Obj: 1 << 40},
		{Op: OpRead, Flags: 0x80},
	}
	for _, e := range bad {
		if err := e.Validate(); err == nil {
			t.Errorf("%+v: accepted", e)
		}
	}
}

func TestOpClasses(t *testing.T) {
	for op := Op(1); int(op) < NumOps; op++ {
		if op.String() == "" || !op.Valid() {
			t.Errorf("op %d has no name or is invalid", op)
		}
		if op.IsAccess() && op.IsSync() {
			t.Errorf("%s is both an access and sync", op)
		}
	}
	// Sync is never sampled or filtered away: every edge-creating op must
	// be in it.
	for _, op := range []Op{OpAcquire, OpRelease, OpFork, OpJoin, OpSyncRelease, OpSyncAcquire, OpAtomicLoad, OpAtomicStore, OpAtomicRMW, OpMethodBegin, OpMethodEnd} {
		if !op.IsSync() {
			t.Errorf("%s is not sync", op)
		}
	}
}

// Location: a package-level variable named by GlobalName covers its whole
// range (an offset inside it is said), names defined later are seen, and
// other names are shown only for their own address.
func TestLocation(t *testing.T) {
	m := NewMeta()
	m.SetName(0x1000, GlobalName("example.com/p.table", 24))
	m.SetName(0x2000, "racekit: I/O")
	for _, c := range []struct {
		addr uint64
		want string
	}{
		{0x1000, "global example.com/p.table"},
		{0x1008, "global example.com/p.table+8"},
		{0x1017, "global example.com/p.table+23"},
		{0x1018, ""},
		{0xfff, ""},
		{0x2000, "racekit: I/O"},
		{0x2001, ""},
	} {
		if got := m.Location(c.addr); got != c.want {
			t.Errorf("Location(%#x) = %q, want %q", c.addr, got, c.want)
		}
	}
	m.SetName(0x0ff8, GlobalName("example.com/p.x", 8)) // defined after the first lookup
	if got := m.Location(0xffc); got != "global example.com/p.x+4" {
		t.Errorf("a name defined later: %q", got)
	}
	if got := m.ObjLabel(0x1000); got != "example.com/p.table" {
		t.Errorf("ObjLabel of a global: %q", got)
	}
	for _, bad := range []string{"global x", "global x size=0", "global x size=z", "globalx size=8"} {
		if _, _, ok := parseGlobal(bad); ok {
			t.Errorf("parseGlobal(%q) accepted", bad)
		}
	}
}
