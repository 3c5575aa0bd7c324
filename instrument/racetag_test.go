package instrument

import (
	"bytes"
	"testing"
)

func TestRaceTagged(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"//go:build race\n\npackage p\n", "//go:build go1.1\n\npackage p\n"},
		{"//go:build !race && linux\n\npackage p\n", "//go:build !go1.1 && linux\n\npackage p\n"},
		{"// +build race,!windows\n\npackage p\n", "// +build go1.1,!windows\n\npackage p\n"},
		{"//go:build race\n// +build race\n\npackage p\n", "//go:build go1.1\n// +build go1.1\n\npackage p\n"},
		{"//go:build norace || race_x\n\npackage p\n", ""},                           // other tags
		{"package p\n\n//go:build race\n", ""},                                       // after the package clause: not a constraint
		{"// Package p: a race.\npackage p\n", ""},                                   // a comment
		{"//go:build race\n\npackage p\n\nfunc f() { runtime.RaceDisable() }\n", ""}, // needs -race's runtime
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
