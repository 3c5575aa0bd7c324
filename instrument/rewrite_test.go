package instrument

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files of TestRewriteGolden")

// TestRewriteGolden instruments each testdata/rewrite/NAME.go (one
// construct or family of constructs per file) and compares the result
// with NAME.go.golden. Every output must also type-check against the real
// runtime (rewrite checks that).
func TestRewriteGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/rewrite/*.go")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("found %d inputs", len(files))
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(strings.TrimSuffix(name, ".go"), func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			// Inputs named *_test.go.go are test files.
			fname := strings.TrimSuffix(name, ".go")
			if !strings.HasSuffix(fname, ".go") {
				fname = name
			}
			got := rewrite(t, fname, string(src))
			golden := f + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o666); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("instrumented %s differs from %s:\n%s", name, golden, diffLines(string(want), got))
			}
		})
	}
}

// diffLines shows the first differing lines.
func diffLines(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	n := 0
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, c string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			c = g[i]
		}
		if a != c {
			b.WriteString("line " + strconv.Itoa(i+1) + ":\n- " + a + "\n+ " + c + "\n")
			if n++; n > 10 {
				break
			}
		}
	}
	return b.String()
}

// TestPromotedThroughUnexportedField: a method promoted through an
// unexported embedded field of another package is called by its promoted
// name; the rewrite must not name the field (github.com/panjf2000/ants/v2's
// tests, `defer p.Release()`, failed to build: "cannot refer to unexported
// field poolCommon"). rewrite type-checks the result.
func TestPromotedThroughUnexportedField(t *testing.T) {
	if _, err := (rtImporter{}).Import("fmt"); err != nil {
		t.Fatal(err)
	}
	_, _, _, emb := check(t, "emb.go", `package emb

type common struct{ n int }

func (c *common) Release() { c.n++ }

type Pool struct{ *common }

func New() *Pool { return &Pool{&common{}} }
`)
	rtPkgs[emb.Path()] = emb
	defer delete(rtPkgs, emb.Path())
	out := rewrite(t, "use.go", `package use

import "example.com/emb"

var P = emb.New()

func F(q *emb.Pool) {
	defer P.Release()
	q.Release()
}
`)
	if strings.Contains(out, ".common") {
		t.Errorf("the rewrite names the unexported field:\n%s", out)
	}
}

// A file that ends without a newline right after an instrumented
// expression (modern-go/concurrent's log.go; gofmt keeps such a file out
// of testdata): the trailer racekit adds closes after every wrap, and the
// result parses and type-checks (rewrite checks it).
func TestNoFinalNewline(t *testing.T) {
	out := rewrite(t, "nonl.go", "package p\n\nimport (\n\t\"io\"\n\t\"log\"\n)\n\nvar L = log.New(io.Discard, \"\", 0)")
	if !strings.Contains(out, "var L = ") {
		t.Fatalf("rewritten:\n%s", out)
	}
}

// A reflect.Value method promoted from an embedded reflect.Value, and a
// sync.Mutex method promoted through another package's unexported
// embedded field: the hooks take the embedded Value (maxminddb-golang's
// decoder wraps reflect.Value in addressableValue and calls its Set:
// "cannot use result (variable of struct type addressableValue) as
// reflect.Value value in argument to _rk.ReflectSet", held-out
// codeberg.org/miekg/dns's dependency), and a field the rewrite cannot name
// leaves the call as it is. rewrite type-checks the result.
func TestHookReceiverPromoted(t *testing.T) {
	if _, err := (rtImporter{}).Import("fmt"); err != nil {
		t.Fatal(err)
	}
	_, _, _, emb := check(t, "emb2.go", `package emb2

import "sync"

type inner struct{ sync.Mutex }

type Guarded struct {
	inner
	N int
}
`)
	rtPkgs[emb.Path()] = emb
	defer delete(rtPkgs, emb.Path())
	out := rewrite(t, "use2.go", `package use2

import (
	"reflect"
	"sync"

	"example.com/emb2"
)

type addressable struct {
	reflect.Value
	forced bool
}

type locked struct{ sync.Mutex }

func F(v reflect.Value, g *emb2.Guarded, l *locked) int64 {
	a := addressable{v, false}
	a.Set(reflect.ValueOf(1))
	g.Lock()
	g.N++
	g.Unlock()
	l.Lock()
	l.Unlock()
	p := &v
	return a.Int() + p.Int()
}
`)
	for _, want := range []string{"ReflectSet((a).Value", "ReflectInt((a).Value", "(l).Mutex", "ReflectInt((*"} {
		if !strings.Contains(out, want) {
			t.Errorf("rewritten without %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, ".inner") {
		t.Errorf("the rewrite names the unexported field:\n%s", out)
	}
	// The lock promoted through it is taken as a sync.Locker's.
	if !strings.Contains(out, "LockerLock(g,") || !strings.Contains(out, "LockerUnlock(g,") {
		t.Errorf("g.Lock and g.Unlock not hooked as a sync.Locker's:\n%s", out)
	}
}
