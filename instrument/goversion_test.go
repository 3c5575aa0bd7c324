package instrument

import (
	"go/build/constraint"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestRequireGo(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"none", "// Package p.\npackage p\n", "//go:build go1.21\n\n// Package p.\npackage p\n"},
		{"instrumented", "//line /src/a.go:1:1\npackage p\n", "//go:build go1.21\n\n//line /src/a.go:1:1\npackage p\n"},
		// In place, so that no line moves.
		{"gobuild", "//go:build linux || darwin\n\npackage p\n", "//go:build go1.21 && (linux || darwin)\n\npackage p\n"},
		{"version", "//line /a.go:1:1\n//go:build go1.23\n\npackage p\n", "//line /a.go:1:1\n//go:build go1.21 && go1.23\n\npackage p\n"},
		// The // +build lines would no longer match (vet checks them):
		// emptied, and their conjunction kept.
		{"both", "//go:build linux && amd64\n// +build linux,amd64\n\npackage p\n", "//go:build go1.21 && linux && amd64\n//\n\npackage p\n"},
		{"plus", "// +build linux darwin\n// +build amd64\n\npackage p\n", "//go:build go1.21 && (linux || darwin) && amd64\n//\n\npackage p\n"},
		// A "+build" line in the package's doc comment is no constraint.
		{"doc", "// +build is a word here\npackage p\n", "//go:build go1.21\n\n// +build is a word here\npackage p\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := requireGo([]byte(tc.in), "1.21")
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
	if _, err := requireGo([]byte("//go:build a\n//go:build b\n\npackage p\n"), "1.21"); err == nil {
		t.Error("two //go:build lines accepted")
	}
}

func TestHookGoSrc(t *testing.T) {
	src := "//line /a.go:1:1\npackage p\n"
	for _, tc := range []struct {
		modGo, src string
		raised     bool
	}{
		{"", src, true}, // no go line: go1.16
		{"1.13", src, true},
		{"1.20.3", src, true},
		{"1.21", src, false},
		{"1.21.0", src, false},
		{"1.23", src, false},
		// A file with a go1.N constraint is at go1.21 at least already;
		// one with only a negated version is at its module's.
		{"1.16", "//go:build go1.16\n\npackage p\n", false},
		{"1.16", "//go:build !go1.99\n\npackage p\n", true},
	} {
		got, err := hookGoSrc([]byte(tc.src), tc.modGo)
		if err != nil {
			t.Fatal(err)
		}
		if raised := string(got) != tc.src; raised != tc.raised {
			t.Errorf("go %q, %q: raised %v, want %v:\n%s", tc.modGo, tc.src, raised, tc.raised, got)
		}
		if tc.raised && fileGoVersion(got) != "go1.21" {
			t.Errorf("go %q, %q: file version %q after raising, want go1.21", tc.modGo, tc.src, fileGoVersion(got))
		}
	}
}

func TestModuleGoVersion(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ mod, want string }{
		{"module m\n", ""},
		{"module m\n\ngo 1.13\n", "1.13"},
		{"module m\n\ngo 1.22.1 // comment\n\ntoolchain go1.23.0\n", "1.22.1"},
	} {
		p := filepath.Join(dir, "go.mod")
		if err := os.WriteFile(p, []byte(tc.mod), 0o666); err != nil {
			t.Fatal(err)
		}
		if got, err := moduleGoVersion(p); err != nil || got != tc.want {
			t.Errorf("%q: %q, %v; want %q", tc.mod, got, err, tc.want)
		}
	}
}

// TestRuntimeMinGo holds minRuntimeGo to its promise: the runtime copy made
// for the oldest and the go-line-less modules builds and vets (vet checks
// the standard library's API versions too) with its files raised to
// minRuntimeGo and no more; a copy for a newer module is left as written.
func TestRuntimeMinGo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the runtime copy")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	for _, goVersion := range []string{"1.13", "", minRuntimeGo} {
		dir, err := copyRuntime(root, cache, goVersion)
		if err != nil {
			t.Fatal(err)
		}
		mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := moduleGoVersion(filepath.Join(dir, "go.mod")); got != goVersion {
			t.Errorf("go %q: the copy's go.mod says %q:\n%s", goVersion, got, mod)
		}
		raised := langBefore(goVersion, minRuntimeGo)
		files, _ := filepath.Glob(filepath.Join(dir, "rt", "*.go"))
		if len(files) == 0 {
			t.Fatalf("no files in %s/rt", dir)
		}
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			v := fileGoVersion(src)
			hasMin := false
			for _, l := range headerLines(src) {
				if x, err := constraint.Parse(l.text); err == nil && strings.Contains(x.String(), "go"+minRuntimeGo) {
					hasMin = true
				}
			}
			if raised && (v == "" || !hasMin) {
				t.Errorf("go %q: %s has no go%s constraint (version %q)", goVersion, f, minRuntimeGo, v)
			}
			if !raised && hasMin {
				t.Errorf("go %q: %s was raised", goVersion, f)
			}
		}
		for _, args := range [][]string{{"build", "./..."}, {"vet", "./..."}} {
			cmd := exec.Command("go", args...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("go %q: go %s in the runtime copy: %v\n%s", goVersion, args[0], err, out)
			}
		}
	}
}

func TestReadModulesTxt(t *testing.T) {
	txt := `# example.com/a v1.2.0
## explicit; go 1.18
example.com/a
example.com/a/sub
# example.com/b v0.1.0 => ../b
## explicit
example.com/b
# example.com/c v0.3.0
## explicit; go 1.13
# example.com/d => ./d
`
	mods := readModulesTxt([]byte(txt))
	// b is read where its directory is; c has no vendored package; d is a
	// replacement only.
	if len(mods) != 1 {
		t.Fatalf("got %d modules, want 1", len(mods))
	}
	if m := mods[0]; m.path != "example.com/a" || m.version != "v1.2.0" || m.goVersion != "1.18" || strings.Join(m.pkgs, ",") != "example.com/a,example.com/a/sub" {
		t.Errorf("got %+v", *m)
	}
}
