package truth

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/racekit/racekit/trace"
)

// writeSubject creates a subject directory with the given files.
func writeSubject(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "subj")
	for name, src := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const goodSrc = `package subj

import "sync"

type acct struct {
	mu  sync.Mutex
	bal int
}

func (a *acct) deposit(n int) {
	a.mu.Lock()
	a.bal += n // racekit:race id=t2 kind=race benign=false
	a.mu.Unlock()
}

func (a *acct) transfer(to *acct, n int) {
	a.mu.Lock()
	to.bal += n // racekit:race id=t1 kind=race benign=false self racekit:race id=t2 kind=race benign=false
	a.mu.Unlock()
}

func run() {
	a := &acct{}
	go a.deposit(1)
	go a.transfer(a, 1)
}
`

const pipeSrc = `package pipe

var data int

func produce(ch chan int) {
	data = 1 // racekit:norace id=h1 why="send orders it before the receive"
	ch <- 1
}

func consume(ch chan int) int {
	<-ch
	return data // racekit:norace id=h1 why="see produce"
}
`

func TestLoad(t *testing.T) {
	dir := writeSubject(t, map[string]string{
		"subj.go":       goodSrc,
		"subj_test.go":  "package subj\n\nimport \"testing\"\n\nfunc TestRun(t *testing.T) { run() }\n",
		"pipe/pipe.go":  pipeSrc,
		"testdata/x.go": "package x // racekit:race id=ignored kind=race benign=false\n",
	})
	s, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "subj" {
		t.Errorf("Name = %q", s.Name)
	}
	if want := []string{"pipe/pipe.go", "subj.go", "subj_test.go"}; !reflect.DeepEqual(s.Files, want) {
		t.Errorf("Files = %v, want %v", s.Files, want)
	}
	if want := strings.Count(goodSrc, "\n") + strings.Count(pipeSrc, "\n"); s.Lines != want {
		t.Errorf("Lines = %d, want %d", s.Lines, want)
	}
	if s.TestLines != 5 || s.GoStmts != 2 {
		t.Errorf("TestLines, GoStmts = %d, %d; want 5, 2", s.TestLines, s.GoStmts)
	}
	if len(s.Races) != 2 || len(s.NoRaces) != 1 {
		t.Fatalf("got %d races, %d noraces; want 2, 1", len(s.Races), len(s.NoRaces))
	}
	t1, t2, h1 := s.Lookup("t1"), s.Lookup("t2"), s.Lookup("h1")
	dep, tr := Line{"subj.go", 12}, Line{"subj.go", 18}
	if got, want := t1.Pairs(), []Pair{{tr, tr}}; !reflect.DeepEqual(got, want) {
		t.Errorf("t1 pairs = %v, want %v", got, want)
	}
	if got, want := t2.Pairs(), []Pair{{dep, tr}}; !reflect.DeepEqual(got, want) {
		t.Errorf("t2 pairs = %v, want %v", got, want)
	}
	if t2.Kind != KindRace || t2.Benign || t2.Flaky {
		t.Errorf("t2 = %+v", t2)
	}
	if got, want := h1.Pairs(), []Pair{{Line{"pipe/pipe.go", 6}, Line{"pipe/pipe.go", 12}}}; !reflect.DeepEqual(got, want) {
		t.Errorf("h1 pairs = %v, want %v", got, want)
	}
	if h1.Why != "send orders it before the receive" || !h1.NoRace {
		t.Errorf("h1 = %+v", h1)
	}
	// Matching: a pair of the entry, in either order; not a self pair of
	// a line not marked self.
	if !t2.Matches([]Line{tr, dep}) || t2.Matches([]Line{dep, dep}) || !t1.Matches([]Line{tr, tr}) || !t1.Matches([]Line{tr}) {
		t.Error("Matches disagrees with Pairs")
	}
	if t1.Matches([]Line{tr, dep}) {
		t.Error("t1 matched a pair outside its lines")
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string // each a "file:line: msg" fragment, in order
	}{
		{"malformed", "package p\n\nvar x = 1 // racekit:race id=a kind=race\n",
			[]string{"p.go:3: racekit:race: missing benign"}},
		{"lonely id", "package p\n\nvar x = 1 // racekit:race id=a kind=race benign=false\n",
			[]string{`p.go:3: id "a" has only one line`}},
		{"no code", "package p\n\n// racekit:race id=a kind=race benign=false self\nvar x = 1\n",
			[]string{"p.go:3: marker on a line without code"}},
		{"kind mismatch", "package p\n\nvar x = 1 // racekit:race id=a kind=race benign=false\nvar y = 2 // racekit:race id=a kind=atomicity benign=false\n",
			[]string{`p.go:4: id "a" has kind=atomicity here but kind=race at`, `p.go:3: id "a" has only one line`}},
		{"benign mismatch", "package p\n\nvar x = 1 // racekit:race id=a kind=race benign=false\nvar y = 2 // racekit:race id=a kind=race benign=true\n",
			[]string{`p.go:4: id "a" has benign=true here but benign=false at`, `p.go:3: id "a" has only one line`}},
		{"race and norace", "package p\n\nvar x = 1 // racekit:race id=a kind=race benign=false\nvar y = 2 // racekit:norace id=a why=x\n",
			[]string{`p.go:4: id "a" is a racekit:norace here but a racekit:race at`, `p.go:3: id "a" has only one line`}},
		{"twice on a line", "package p\n\nvar x = 1 // racekit:race id=a kind=race benign=false racekit:race id=a kind=race benign=false\nvar y = 2 // racekit:race id=a kind=race benign=false\n",
			[]string{`p.go:3: id "a" marked twice on this line`}},
		{"block comment", "package p\n\nvar x = 1 /* racekit:race id=a kind=race benign=false */\n",
			[]string{"p.go:3: marker in a /* */ comment"}},
		{"nested", "package p\n\n// x++ // racekit:race id=a kind=race benign=false self\nvar x = 1\n",
			[]string{"p.go:3: marker inside another comment"}},
		{"two errors", "package p\n\nvar x = 1 // racekit:race id=a\nvar y = 1 // racekit:norace id=b why=\n",
			[]string{"p.go:3: racekit:race: missing kind, benign", "p.go:4: racekit:norace: empty why"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeSubject(t, map[string]string{"p.go": tt.src})
			_, err := Load(dir)
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			lines := strings.Split(msg, "\n")
			if len(lines) != len(tt.want) {
				t.Fatalf("got %d errors, want %d:\n%s", len(lines), len(tt.want), msg)
			}
			for i, w := range tt.want {
				if !strings.Contains(lines[i], w) {
					t.Errorf("error %d = %q, want it to contain %q", i, lines[i], w)
				}
				if !strings.HasPrefix(lines[i], filepath.Join(dir, "p.go")+":") {
					t.Errorf("error %d = %q does not start with the file name", i, lines[i])
				}
			}
			var fe *trace.FormatError
			if !errors.As(err, &fe) || fe.Line == 0 {
				t.Errorf("error is not a *trace.FormatError with a line: %#v", err)
			}
		})
	}
}

func TestLoadSyntaxError(t *testing.T) {
	dir := writeSubject(t, map[string]string{"p.go": "package p\n\nfunc {\n"})
	_, err := Load(dir)
	if err == nil || !strings.Contains(err.Error(), "p.go:3") {
		t.Fatalf("Load of a file with a syntax error = %v, want an error at p.go:3", err)
	}
}

func TestDiscover(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"b/b.go", "a/x/x.go", "internal/racy/r.go", "_skip/s.go", "empty/README"} {
		p := filepath.Join(root, f)
		os.MkdirAll(filepath.Dir(p), 0o777)
		os.WriteFile(p, []byte("package x\n"), 0o666)
	}
	got, err := Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(root, "a"), filepath.Join(root, "b")}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Discover = %v, want %v", got, want)
	}
}
