package instrument

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestRaceTagged(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"//go:build race\n\npackage p\n", "//go:build go1.1\n\npackage p\n"},
		{"//go:build !race && linux\n\npackage p\n", "//go:build !go1.1 && linux\n\npackage p\n"},
		{"// +build race,!windows\n\npackage p\n", "// +build go1.1,!windows\n\npackage p\n"},
		{"//go:build race\n// +build race\n\npackage p\n", "//go:build go1.1\n// +build go1.1\n\npackage p\n"},
		{"//go:build norace || race_x\n\npackage p\n", ""}, // other tags
		{"package p\n\n//go:build race\n", ""},             // after the package clause: not a constraint
		{"// Package p: a race.\npackage p\n", ""},         // a comment
	} {
		got, ok := raceTagged([]byte(c.in))
		if ok != (c.want != "") || ok && string(got) != c.want {
			t.Errorf("raceTagged(%q) = %q, %v; want %q", c.in, got, ok, c.want)
		}
	}
}

// FuzzRaceTagged: the rewrite only ever changes constraint lines before the
// package clause, and is done after one pass.
func FuzzRaceTagged(f *testing.F) {
	f.Add([]byte("//go:build race\n\npackage p\n"))
	f.Add([]byte("// +build !race\n// +build linux\n\npackage p // race\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		out, ok := raceTagged(src)
		if !ok {
			return
		}
		a, b := bytes.SplitAfter(src, []byte("\n")), bytes.SplitAfter(out, []byte("\n"))
		if len(a) != len(b) {
			t.Fatalf("line count %d → %d", len(a), len(b))
		}
		for i := range a {
			if !bytes.Equal(a[i], b[i]) && !bytes.HasPrefix(bytes.TrimSpace(a[i]), []byte("//")) {
				t.Fatalf("line %d not a comment, changed: %q → %q", i, a[i], b[i])
			}
		}
		if _, again := raceTagged(out); again {
			t.Fatalf("a second pass still rewrites %q", out)
		}
	})
}

// raceOverlay leaves alone a directory where one file uses the race
// detector's runtime (x/sys/unix's race.go and race0.go), and files under
// the module cache; it rewrites the others.
func TestRaceOverlay(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"a/on.go":        "//go:build race\n\npackage a\n",
		"a/off.go":       "//go:build !race\n\npackage a\n",
		"unix/race.go":   "//go:build linux && race\n\npackage unix\n\nfunc raceAcquire(p uintptr) { runtime.RaceAcquire(p) }\n",
		"unix/race0.go":  "//go:build !race\n\npackage unix\n\nfunc raceAcquire(p uintptr) {}\n",
		"cache/m/off.go": "//go:build !race\n\npackage m\n",
		// A dependency's test files: the loader lists the one its
		// constraints exclude, not the other; both are rewritten.
		"b/race_test.go":   "//go:build race\n\npackage b\n\nconst n = 1\n",
		"b/norace_test.go": "//go:build !race\n\npackage b\n\nconst n = 3\n",
		// Likewise unlisted, and a file of the race runtime's: the
		// directory is left alone.
		"c/on.go":    "//go:build race\n\npackage c\n",
		"c/race0.go": "//go:build race\n\npackage c\n\nfunc f(p uintptr) { runtime.RaceAcquire(p) }\n",
	}
	unlisted := map[string]bool{"b/norace_test.go": true, "c/race0.go": true}
	var names []string
	for name, src := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		if !unlisted[name] {
			names = append(names, p)
		}
	}
	out, err := raceOverlay(names, filepath.Join(root, "cache"))
	if err != nil {
		t.Fatal(err)
	}
	got := slices.Sorted(maps.Keys(out))
	want := []string{filepath.Join(root, "a/off.go"), filepath.Join(root, "a/on.go"), filepath.Join(root, "b/norace_test.go"), filepath.Join(root, "b/race_test.go")}
	if !slices.Equal(got, want) {
		t.Errorf("rewrote %q, want %q", got, want)
	}
}
