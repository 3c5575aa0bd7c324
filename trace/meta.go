package trace

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Site is a source position of an instrumented operation.
type Site struct {
	File string // file path; for a text trace whose location is a bare label, the label
	Line int    // 1-based; 0 when unknown
	Col  int    // 1-based; 0 when unknown
	Func string // enclosing function, package-qualified; "" when unknown
	// Callee is the untraced function called at this site whose accesses
	// the site's events stand for (a standard-library call recorded by
	// its interceptor: strings.(*Builder).WriteString); zero when the
	// events are the site's own. Reports show it as the innermost frame,
	// above the caller's, as Go's race report shows the std frame.
	Callee Frame
	// Call, when set, says the site is a call in traced code (never an
	// event's site): reports show the frame of its function at the call
	// when they show the callee's frame above it, as Go's show the call's
	// line (analyze's stacks pick the call a callee was entered from).
	Call Call
	// Wide: the site's accesses are of a value of more than one part (a
	// struct of several fields, an array of several elements), which Go's
	// compiler has go test -race check as one range access, not word by
	// word (analyze's Suppress follows what that changes).
	Wide bool
	// Inline: the site is the declaration of a function that records no
	// frame (a small wrapper racekit leaves inlinable, as the compiler
	// inlines it under go test -race: instrument/inline.go). Its
	// callees' frames follow its caller's in the trace; analyze's stacks
	// put it back between them by their static calls (Call).
	Inline bool
}

// Call describes a call site: the traced function it calls, and where its
// arguments end, which orders it among its function's events.
type Call struct {
	// Func is the traced function called, package-qualified as a
	// function's site names it; "." and the method's name for a method
	// of an interface (".Apply": any method of that name may be the one
	// entered, MethodCall); "" when it is not known statically otherwise
	// (a func value, an untraced function that may call back into traced
	// code).
	Func string
	// EndLine and EndCol are the call's closing parenthesis: every event
	// of its arguments comes before it. EndLine is 0 only in the zero
	// Call (the site is not a call).
	EndLine, EndCol int
}

// IsZero reports whether c describes no call.
func (c Call) IsZero() bool { return c.EndLine == 0 }

// MethodCall returns the name of the interface method c calls, if it is
// one (Func ".M").
func (c Call) MethodCall() (string, bool) {
	if len(c.Func) > 1 && c.Func[0] == '.' {
		return c.Func[1:], true
	}
	return "", false
}

// MethodName returns the method name of function name fn as a site names
// it ("pkg.(*T).M", "pkg.T.M": "M"; a function's own name otherwise).
func MethodName(fn string) string {
	if i := strings.LastIndexByte(fn, '.'); i >= 0 {
		return fn[i+1:]
	}
	return fn
}

// Frame is a function outside the trace: its name, package-qualified, and
// its declaration's file and line (0 when unknown).
type Frame struct {
	Func string
	File string
	Line int
}

// IsZero reports whether f names no function.
func (f Frame) IsZero() bool { return f.Func == "" }

// Frames returns the frames an access at s shows, innermost first: the
// callee's, if s has one, then s.
func (s Site) Frames() []Site {
	if s.Callee.IsZero() {
		return []Site{s}
	}
	c := Site{File: s.Callee.File, Line: s.Callee.Line, Func: s.Callee.Func}
	s.Callee = Frame{}
	return []Site{c, s}
}

// String formats the site as file:line:col (omitting unknown parts).
func (s Site) String() string {
	if s.Line == 0 {
		if s.File == "" {
			return "?"
		}
		return s.File
	}
	if s.Col == 0 {
		return s.File + ":" + strconv.Itoa(s.Line)
	}
	return s.File + ":" + strconv.Itoa(s.Line) + ":" + strconv.Itoa(s.Col)
}

// ParseSiteLabel turns a location label of a text trace into a Site:
// "file.go:12" and "file.go:12:5" give file, line and column; anything else
// (RAPID's integer locations, free labels) is kept whole in File.
func ParseSiteLabel(label string) Site {
	s := Site{File: label}
	rest, last, ok := cutLastColonInt(label)
	if !ok {
		return s
	}
	if rest2, mid, ok2 := cutLastColonInt(rest); ok2 && rest2 != "" {
		return Site{File: rest2, Line: mid, Col: last}
	}
	if rest == "" {
		return s
	}
	return Site{File: rest, Line: last}
}

func cutLastColonInt(s string) (string, int, bool) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return s, 0, false
	}
	n, err := strconv.Atoi(s[i+1:])
	if err != nil || n <= 0 {
		return s, 0, false
	}
	return s[:i], n, true
}

// NoParent is the Parent of a goroutine whose creator was not traced (the
// main goroutine, goroutines of the testing framework or net/http).
const NoParent = ^GID(0)

// FrameworkFile is the file of the site at which rt/rttest records the fork
// of a top-level test: package testing starts it, once the test before it
// has ended (or called t.Parallel), and rttest records that order as a fork
// by the goroutine of the test before, at a site whose function is
// package testing's (testing.(*T).Run). Reports say such a goroutine was
// created by package testing. rt records a cleanup's run the same way, as
// a fork by its batch's goroutine at a site of runtime.AddCleanup.
const FrameworkFile = "racekit:framework"

// StallSuffix is added to a trace file's path to name the file rt writes
// when the run stalled (every goroutine blocked on another, nothing able
// to wake one: rt.FinishStalled): the names of the tests that were
// running, one per line.
const StallSuffix = ".stalled"

// Goroutine describes one goroutine of the trace.
type Goroutine struct {
	ID     GID
	Parent GID    // NoParent when not created by a traced fork
	Site   SiteID // the go statement that created it; NoSite when unknown
	Name   string // display name ("T1" in text traces); "" means "G<ID>"
}

// Label is the goroutine's display name.
func (g Goroutine) Label() string {
	if g.Name != "" {
		return g.Name
	}
	return "G" + strconv.FormatUint(uint64(g.ID), 10)
}

// Name binds an object ID (variable address, lock, sync object, function,
// region) to a human-readable name.
type Name struct {
	Obj  uint64
	Name string
}

// Meta holds a trace's tables. They only grow while a trace is read, so a
// consumer can copy what is new by comparing lengths (see Copy).
type Meta struct {
	Sites      []Site      // indexed by SiteID; Sites[0] is the unknown site
	Goroutines []Goroutine // indexed by GID; undefined entries have Parent NoParent and no name
	Names      []Name      // in definition order; see NameOf

	siteIndex map[Site]SiteID
	nameIndex map[uint64]int
	defined   []bool // per GID: was DefineGoroutine called

	globals      []globalVar // the Names that are GlobalNames, by address
	globalsNames int         // how many of Names globals reflects
}

// globalVar is a package-level variable named in a trace (GlobalName).
type globalVar struct {
	addr, size uint64
	name       string
}

// NewMeta returns empty tables holding only the unknown site.
func NewMeta() *Meta {
	return &Meta{Sites: []Site{{}}}
}

// InternSite returns the ID of s, adding it if new.
func (m *Meta) InternSite(s Site) SiteID {
	if m.siteIndex == nil {
		m.siteIndex = make(map[Site]SiteID, len(m.Sites))
		for i, x := range m.Sites {
			if _, dup := m.siteIndex[x]; !dup {
				m.siteIndex[x] = SiteID(i)
			}
		}
	}
	if id, ok := m.siteIndex[s]; ok {
		return id
	}
	id := SiteID(len(m.Sites))
	m.Sites = append(m.Sites, s)
	m.siteIndex[s] = id
	return id
}

// DefineSite sets site id, which must be the next unused ID. Decoders use it
// to rebuild the table in the writer's order.
func (m *Meta) DefineSite(id SiteID, s Site) error {
	if int(id) != len(m.Sites) {
		return fmt.Errorf("site %d defined out of order (expected %d)", id, len(m.Sites))
	}
	m.Sites = append(m.Sites, s)
	if m.siteIndex != nil {
		if _, dup := m.siteIndex[s]; !dup {
			m.siteIndex[s] = id
		}
	}
	return nil
}

// SetCall sets the call of the defined site id (a trace file defines a
// site, then its call).
func (m *Meta) SetCall(id SiteID, c Call) error {
	if id == NoSite || int(id) >= len(m.Sites) {
		return fmt.Errorf("call at site %d, which is not defined", id)
	}
	m.setSite(id, func(s *Site) { s.Call = c })
	return nil
}

// SetWide marks the defined site id Wide (a trace file defines a site,
// then its mark).
func (m *Meta) SetWide(id SiteID) error {
	if id == NoSite || int(id) >= len(m.Sites) {
		return fmt.Errorf("wide access at site %d, which is not defined", id)
	}
	m.setSite(id, func(s *Site) { s.Wide = true })
	return nil
}

// SetInline marks the defined site id Inline (a trace file defines a
// site, then its mark).
func (m *Meta) SetInline(id SiteID) error {
	if id == NoSite || int(id) >= len(m.Sites) {
		return fmt.Errorf("inline function at site %d, which is not defined", id)
	}
	m.setSite(id, func(s *Site) { s.Inline = true })
	return nil
}

// SetCallee sets the callee frame of the defined site id (a trace file
// defines a site, then its callee).
func (m *Meta) SetCallee(id SiteID, f Frame) error {
	if id == NoSite || int(id) >= len(m.Sites) {
		return fmt.Errorf("callee of site %d, which is not defined", id)
	}
	m.setSite(id, func(s *Site) { s.Callee = f })
	return nil
}

// setSite changes the defined site id by set, keeping the intern index.
func (m *Meta) setSite(id SiteID, set func(*Site)) {
	old := m.Sites[id]
	set(&m.Sites[id])
	if m.siteIndex != nil {
		if m.siteIndex[old] == id {
			delete(m.siteIndex, old)
		}
		if _, dup := m.siteIndex[m.Sites[id]]; !dup {
			m.siteIndex[m.Sites[id]] = id
		}
	}
}

// Site returns the site with the given ID, or the unknown site.
func (m *Meta) Site(id SiteID) Site {
	if int(id) < len(m.Sites) {
		return m.Sites[id]
	}
	return Site{}
}

// DefineGoroutine records g. Redefinition of an already defined goroutine is
// an error: the tables only grow.
func (m *Meta) DefineGoroutine(g Goroutine) error {
	if g.ID == NoParent {
		return fmt.Errorf("goroutine ID %d is reserved", g.ID)
	}
	if m.GoroutineDefined(g.ID) {
		return fmt.Errorf("goroutine %d defined twice", g.ID)
	}
	for GID(len(m.Goroutines)) <= g.ID {
		m.Goroutines = append(m.Goroutines, Goroutine{ID: GID(len(m.Goroutines)), Parent: NoParent})
		m.defined = append(m.defined, false)
	}
	m.Goroutines[g.ID] = g
	m.defined[g.ID] = true
	return nil
}

// GoroutineDefined reports whether DefineGoroutine was called for g.
func (m *Meta) GoroutineDefined(g GID) bool {
	return int(g) < len(m.defined) && m.defined[g]
}

// Goroutine returns the description of g (a default one if undefined).
func (m *Meta) Goroutine(g GID) Goroutine {
	if int(g) < len(m.Goroutines) {
		return m.Goroutines[g]
	}
	return Goroutine{ID: g, Parent: NoParent}
}

// SetName binds obj to name; a later binding of the same object is ignored
// (the first name wins, so tables only grow).
func (m *Meta) SetName(obj uint64, name string) {
	if m.nameIndex == nil {
		m.nameIndex = make(map[uint64]int, len(m.Names))
		for i, n := range m.Names {
			m.nameIndex[n.Obj] = i
		}
	}
	if _, ok := m.nameIndex[obj]; ok {
		return
	}
	m.nameIndex[obj] = len(m.Names)
	m.Names = append(m.Names, Name{obj, name})
}

// NameOf returns obj's name, or "" if it has none.
func (m *Meta) NameOf(obj uint64) string {
	if m.nameIndex == nil {
		if len(m.Names) == 0 {
			return ""
		}
		m.SetName(m.Names[0].Obj, m.Names[0].Name) // builds the index
	}
	if i, ok := m.nameIndex[obj]; ok {
		return m.Names[i].Name
	}
	return ""
}

// GlobalName is the name a trace gives the package-level variable called
// name (its package path, a dot, its name), of size bytes, at its address:
// Location finds it for any address inside it.
func GlobalName(name string, size uint64) string {
	return "global " + name + " size=" + strconv.FormatUint(size, 10)
}

// parseGlobal reads a GlobalName.
func parseGlobal(s string) (name string, size uint64, ok bool) {
	rest, ok := strings.CutPrefix(s, "global ")
	if !ok {
		return "", 0, false
	}
	i := strings.LastIndex(rest, " size=")
	if i < 0 {
		return "", 0, false
	}
	size, err := strconv.ParseUint(rest[i+len(" size="):], 10, 64)
	if err != nil || size == 0 {
		return "", 0, false
	}
	return rest[:i], size, true
}

// Location describes addr for a report, as Go's race report says where an
// address is: the package-level variable that holds it ("global pkg.x",
// "global pkg.x+8" inside it), else the name of the object at addr, else "".
func (m *Meta) Location(addr uint64) string {
	if m.globalsNames != len(m.Names) {
		m.globals = m.globals[:0]
		for _, n := range m.Names {
			if name, size, ok := parseGlobal(n.Name); ok {
				m.globals = append(m.globals, globalVar{n.Obj, size, name})
			}
		}
		slices.SortFunc(m.globals, func(a, b globalVar) int { return cmp.Compare(a.addr, b.addr) })
		m.globalsNames = len(m.Names)
	}
	i, _ := slices.BinarySearchFunc(m.globals, addr+1, func(g globalVar, a uint64) int { return cmp.Compare(g.addr, a) })
	if i > 0 {
		if g := m.globals[i-1]; addr-g.addr < g.size {
			if off := addr - g.addr; off > 0 {
				return "global " + g.name + "+" + strconv.FormatUint(off, 10)
			}
			return "global " + g.name
		}
	}
	if n := m.NameOf(addr); n != "" {
		if _, _, ok := parseGlobal(n); !ok {
			return n
		}
	}
	return ""
}

// ObjLabel returns obj's name, or its hexadecimal value.
func (m *Meta) ObjLabel(obj uint64) string {
	if n := m.NameOf(obj); n != "" {
		if name, _, ok := parseGlobal(n); ok {
			return name
		}
		return n
	}
	return "0x" + strconv.FormatUint(obj, 16)
}
