package instrument

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// go build's output names each package it could not compile in a "# "
// header; only the dependencies among them are left untraced, each with
// its first error.
func TestFailedPackages(t *testing.T) {
	out := `# example.com/dep/codec
/mod/example.com/dep/codec/helper.go:1486:158: cannot use _rk18 (variable of type int) as byte value in assignment
/mod/example.com/dep/codec/helper.go:1490:2: too many errors
# example.com/m
./m.go:3:2: undefined: x
# example.com/dep/util [example.com/dep/util.test]
/mod/example.com/dep/util/u.go:9:1: missing return
`
	got := failedPackages(out, []string{"example.com/dep/codec", "example.com/dep/util", "example.com/dep/ok"})
	want := []Skip{
		{"example.com/dep/codec", "/mod/example.com/dep/codec/helper.go:1486:158: cannot use _rk18 (variable of type int) as byte value in assignment"},
		{"example.com/dep/util", "/mod/example.com/dep/util/u.go:9:1: missing return"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("failed %q, want %q", got, want)
	}
	if got := failedPackages("go: downloading example.com/x v1.0.0\n", []string{"example.com/dep/codec"}); got != nil {
		t.Errorf("no header: failed %q", got)
	}
}

// ours keeps, of the dependencies whose instrumented code did not
// compile, those that compile without racekit: a package that fails a
// plain go build too is not racekit's to leave untraced.
func TestOurs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	dir := t.TempDir()
	for name, src := range map[string]string{
		"go.mod":        "module example.com/m\n\ngo 1.21\n",
		"good/good.go":  "package good\n\nvar N = 1\n",
		"broken/bad.go": "package broken\n\nvar N int = \"not an int\"\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("GOFLAGS", "")
	t.Setenv("GOWORK", "off")
	failed := []Skip{{"example.com/m/good", "instrumented: an error"}, {"example.com/m/broken", "instrumented: an error"}}
	got := ours(&Config{Dir: dir}, failed)
	if want := failed[:1]; !reflect.DeepEqual(got, want) {
		t.Errorf("ours: %q, want %q", got, want)
	}
	if got := ours(&Config{Dir: dir}, failed[:1]); !reflect.DeepEqual(got, failed[:1]) {
		t.Errorf("ours of a package that compiles: %q", got)
	}
}
