package truth

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/racekit/racekit/sched"
	"github.com/racekit/racekit/trace"
)

// Line is a source line of a subject: File is the slash-separated path
// relative to the subject directory.
type Line struct {
	File string
	Line int
}

func (l Line) String() string { return l.File + ":" + strconv.Itoa(l.Line) }

// Less orders lines by file, then line.
func (l Line) Less(m Line) bool {
	if l.File != m.File {
		return l.File < m.File
	}
	return l.Line < m.Line
}

// Pair is an unordered pair of lines, A not after B.
type Pair struct{ A, B Line }

// MakePair orders two lines into a Pair.
func MakePair(a, b Line) Pair {
	if b.Less(a) {
		a, b = b, a
	}
	return Pair{a, b}
}

func (p Pair) String() string { return p.A.String() + "-" + p.B.String() }

// Entry is one id of a subject: a known race or anomaly (NoRace false) or a
// lockset false alarm (NoRace true), with the lines that carry it.
type Entry struct {
	ID     string
	NoRace bool
	Kind   Kind // "" for NoRace entries
	Benign bool
	Flaky  bool
	Why    string // norace: why it is safe; race: the note, if any
	Lines  []Line // sorted, distinct
	Self   []Line // the lines marked self (a subset of Lines)
}

// Pairs returns the expected site pairs: every two distinct lines, and each
// self line with itself, sorted.
func (e *Entry) Pairs() []Pair {
	var ps []Pair
	for i, a := range e.Lines {
		for _, b := range e.Lines[i+1:] {
			ps = append(ps, MakePair(a, b))
		}
	}
	for _, s := range e.Self {
		ps = append(ps, Pair{s, s})
	}
	sort.Slice(ps, func(i, j int) bool { return pairLess(ps[i], ps[j]) })
	return ps
}

func pairLess(p, q Pair) bool {
	if p.A != q.A {
		return p.A.Less(q.A)
	}
	return p.B.Less(q.B)
}

// Has reports whether line l carries the entry.
func (e *Entry) Has(l Line) bool {
	for _, x := range e.Lines {
		if x == l {
			return true
		}
	}
	return false
}

func (e *Entry) isSelf(l Line) bool {
	for _, x := range e.Self {
		if x == l {
			return true
		}
	}
	return false
}

// Matches reports whether a finding over the given lines is this entry: a
// pair matches when it is one of Pairs; a longer tuple (an anomaly) when
// every line carries the entry and a repeated line is marked self.
func (e *Entry) Matches(lines []Line) bool {
	if len(lines) == 0 {
		return false
	}
	for i, l := range lines {
		if !e.Has(l) {
			return false
		}
		for _, m := range lines[:i] {
			if m == l && !e.isSelf(l) {
				return false
			}
		}
	}
	if len(lines) == 1 { // a one-site finding: the line racing with itself
		return e.isSelf(lines[0])
	}
	return true
}

// Subject is one subject program with its ground truth.
type Subject struct {
	Name      string   // the directory's base name
	Dir       string   // absolute directory
	Files     []string // Go files, slash paths relative to Dir, sorted
	Lines     int      // lines of the non-test Go files
	TestLines int      // lines of the _test.go files
	GoStmts   int      // go statements in the non-test files
	Races     []*Entry // race and anomaly ids, sorted by id
	NoRaces   []*Entry // lockset false alarms, sorted by id
}

// Entries returns the race entries of the given kinds (all if none given).
func (s *Subject) Entries(kinds ...Kind) []*Entry {
	if len(kinds) == 0 {
		return s.Races
	}
	var out []*Entry
	for _, e := range s.Races {
		for _, k := range kinds {
			if e.Kind == k {
				out = append(out, e)
				break
			}
		}
	}
	return out
}

// Lookup returns the entry (race or norace) with the given id.
func (s *Subject) Lookup(id string) *Entry {
	for _, es := range [][]*Entry{s.Races, s.NoRaces} {
		for _, e := range es {
			if e.ID == id {
				return e
			}
		}
	}
	return nil
}

// placed is a marker with its position, while loading.
type placed struct {
	Marker
	line Line
	file string // the file as named to the user (below the dir given to Load)
}

func (p placed) pos() string { return fmt.Sprintf("%s:%d", p.file, p.line.Line) }

// Load reads the ground truth of the subject in dir: the markers of every
// .go file below it (test files included; directories named testdata or
// starting with "." or "_" are skipped). Malformed markers are reported all
// at once, each as a *trace.FormatError naming the file and line.
func Load(dir string) (*Subject, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s: not a directory", dir)
	}
	s := &Subject{Name: filepath.Base(abs), Dir: abs}
	var errs []error
	var markers []placed
	fset := token.NewFileSet()
	err = filepath.WalkDir(abs, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != abs && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
			return nil
		}
		rel, _ := filepath.Rel(abs, path)
		rel = filepath.ToSlash(rel)
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		s.Files = append(s.Files, rel)
		n := bytes.Count(src, []byte("\n"))
		if len(src) > 0 && src[len(src)-1] != '\n' {
			n++
		}
		isTest := strings.HasSuffix(name, "_test.go")
		if isTest {
			s.TestLines += n
		} else {
			s.Lines += n
		}
		display := filepath.Join(dir, filepath.FromSlash(rel))
		f, perr := parser.ParseFile(fset, path, src, parser.ParseComments|parser.SkipObjectResolution)
		if perr != nil {
			errs = append(errs, perr)
			return nil
		}
		if !isTest {
			ast.Inspect(f, func(n ast.Node) bool {
				if _, ok := n.(*ast.GoStmt); ok {
					s.GoStmts++
				}
				return true
			})
		}
		ms, merrs := fileMarkers(fset, f, src, rel, display)
		markers = append(markers, ms...)
		errs = append(errs, merrs...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(s.Files) == 0 {
		return nil, fmt.Errorf("%s: no Go files", dir)
	}
	sort.Strings(s.Files)
	errs = append(errs, s.build(markers)...)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return s, nil
}

// fileMarkers extracts the markers of one parsed file.
func fileMarkers(fset *token.FileSet, f *ast.File, src []byte, rel, display string) ([]placed, []error) {
	var out []placed
	var errs []error
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if !strings.HasPrefix(c.Text, "//") || !IsMarkerComment(c.Text) {
				msg := ""
				switch {
				case strings.HasPrefix(c.Text, "/*") && strings.Contains(c.Text, prefix+"race"):
					msg = "marker in a /* */ comment (markers are // line comments)"
				case strings.Contains(c.Text, "// "+prefix+"race") || strings.Contains(c.Text, "// "+prefix+"norace"):
					msg = "marker inside another comment (a marker's comment must start with racekit:)"
				}
				if msg != "" {
					p := fset.Position(c.Pos())
					errs = append(errs, &trace.FormatError{File: display, Line: p.Line, Offset: -1, Msg: msg})
				}
				continue
			}
			p := fset.Position(c.Pos())
			ferr := func(msg string) {
				errs = append(errs, &trace.FormatError{File: display, Line: p.Line, Offset: -1, Msg: msg})
			}
			ms, err := ParseComment(c.Text)
			if err != nil {
				ferr(err.Error())
				continue
			}
			// The marker must trail code: the text before it on its line
			// is not blank.
			lineStart := p.Offset
			for lineStart > 0 && src[lineStart-1] != '\n' {
				lineStart--
			}
			if strings.TrimSpace(string(src[lineStart:p.Offset])) == "" {
				ferr("marker on a line without code (put it at the end of the racing line)")
				continue
			}
			for _, m := range ms {
				out = append(out, placed{Marker: m, line: Line{rel, p.Line}, file: display})
			}
		}
	}
	return out, errs
}

// build groups markers by id and checks each id's consistency.
func (s *Subject) build(ms []placed) []error {
	type group struct {
		e     *Entry
		first placed
		lines map[Line]bool
	}
	groups := map[string]*group{}
	var order []string
	var errs []error
	bad := func(p placed, format string, args ...any) {
		errs = append(errs, &trace.FormatError{File: p.file, Line: p.line.Line, Offset: -1, Msg: fmt.Sprintf(format, args...)})
	}
	for _, m := range ms {
		for _, id := range m.IDs {
			g := groups[id]
			if g == nil {
				e := &Entry{ID: id, NoRace: m.NoRace, Kind: m.Kind, Benign: m.Benign, Flaky: m.Flaky, Why: m.Why}
				if !m.NoRace {
					e.Why = m.Note
				}
				g = &group{e: e, first: m, lines: map[Line]bool{}}
				groups[id] = g
				order = append(order, id)
			} else {
				switch {
				case g.e.NoRace != m.NoRace:
					bad(m, "id %q is a %s here but a %s at %s", id, m.name(), g.first.name(), g.first.pos())
					continue
				case !m.NoRace && g.e.Kind != m.Kind:
					bad(m, "id %q has kind=%s here but kind=%s at %s", id, m.Kind, g.e.Kind, g.first.pos())
					continue
				case !m.NoRace && g.e.Benign != m.Benign:
					bad(m, "id %q has benign=%t here but benign=%t at %s", id, m.Benign, g.e.Benign, g.first.pos())
					continue
				}
				g.e.Flaky = g.e.Flaky || m.Flaky
				if g.e.Why == "" {
					if m.NoRace {
						g.e.Why = m.Why
					} else {
						g.e.Why = m.Note
					}
				}
			}
			if g.lines[m.line] {
				bad(m, "id %q marked twice on this line", id)
				continue
			}
			g.lines[m.line] = true
			g.e.Lines = append(g.e.Lines, m.line)
			if m.Self {
				g.e.Self = append(g.e.Self, m.line)
			}
		}
	}
	for _, id := range order {
		g := groups[id]
		e := g.e
		sortLines(e.Lines)
		sortLines(e.Self)
		if len(e.Lines) < 2 && len(e.Self) == 0 {
			bad(g.first, "id %q has only one line; mark its other side, or mark the line self if it races with itself", id)
			continue
		}
		if e.NoRace {
			s.NoRaces = append(s.NoRaces, e)
		} else {
			s.Races = append(s.Races, e)
		}
	}
	sort.Slice(s.Races, func(i, j int) bool { return s.Races[i].ID < s.Races[j].ID })
	sort.Slice(s.NoRaces, func(i, j int) bool { return s.NoRaces[i].ID < s.NoRaces[j].ID })
	return errs
}

func sortLines(ls []Line) {
	sort.Slice(ls, func(i, j int) bool { return ls[i].Less(ls[j]) })
}

// Discover lists the subject directories under root: its immediate
// subdirectories that hold Go files (directly or below), except internal,
// testdata and those starting with "." or "_". Sorted by name.
func Discover(root string) ([]string, error) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, e := range ents {
		n := e.Name()
		if !e.IsDir() || n == "internal" || n == "testdata" || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_") {
			continue
		}
		dir := filepath.Join(root, n)
		has := false
		filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(path, ".go") {
				has = true
				return filepath.SkipAll
			}
			return nil
		})
		if has {
			dirs = append(dirs, dir)
		}
	}
	sort.Strings(dirs)
	return dirs, nil
}

// LoadAll loads every subject under root (see Discover).
func LoadAll(root string) ([]*Subject, error) {
	dirs, err := Discover(root)
	if err != nil {
		return nil, err
	}
	var out []*Subject
	var errs []error
	for _, d := range dirs {
		s, err := Load(d)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, s)
	}
	return out, errors.Join(errs...)
}

// Select returns the subjects named in names, all of them if names is
// empty.
func Select(subjects []*Subject, names []string) []*Subject {
	if len(names) == 0 {
		return subjects
	}
	keep := map[string]bool{}
	for _, n := range names {
		keep[n] = true
	}
	var sel []*Subject
	for _, s := range subjects {
		if keep[s.Name] {
			sel = append(sel, s)
		}
	}
	return sel
}

// LineOf maps a site or statement ("file:line", "file:line:col", either
// with ":r" or ":w", as racekit names accesses; the file absolute) to the
// subject's line; false for a file outside the subject.
func (s *Subject) LineOf(site string) (Line, bool) {
	st, ok := sched.ParseStmt(site)
	if !ok {
		return Line{}, false
	}
	rel, err := filepath.Rel(s.Dir, st.File)
	if err != nil || strings.HasPrefix(rel, "..") {
		return Line{}, false
	}
	return Line{File: filepath.ToSlash(rel), Line: st.Line}, true
}

// PairOf maps a racekit pair "stmt~stmt" to the subject's pair of lines.
func (s *Subject) PairOf(pair string) (Pair, bool) {
	a, b, ok := strings.Cut(pair, "~")
	if !ok {
		return Pair{}, false
	}
	la, oka := s.LineOf(a)
	lb, okb := s.LineOf(b)
	return MakePair(la, lb), oka && okb
}
