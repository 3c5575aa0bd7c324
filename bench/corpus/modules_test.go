package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCorpusUnique: each module is pinned once. A second entry ran the
// module twice and counted it as held out although the corpus held it
// (github.com/miekg/dns in session 59's batch BR).
func TestCorpusUnique(t *testing.T) {
	seen := map[string]int{}
	for i, m := range corpus {
		if m.Path == "" || m.Version == "" {
			t.Errorf("entry %d: path %q, version %q: both needed", i, m.Path, m.Version)
		}
		if j, ok := seen[m.Path]; ok {
			t.Errorf("%s listed twice: entries %d and %d", m.Path, j, i)
		}
		seen[m.Path] = i
	}
}

// TestDropMissingReplaces: a replace to a sibling directory the copy does
// not hold goes (OpenTelemetry's collector modules, batch HA: neither tool
// could build them); one to a directory that is there, and one to a
// module version, stay.
func TestDropMissingReplaces(t *testing.T) {
	dir := t.TempDir()
	gomod := `module example.com/a/b

go 1.22

require (
	example.com/a/c v1.0.0
	example.com/a/d v1.0.0
	example.com/e v1.0.0
)

replace example.com/a/c => ../c

replace example.com/a/d v1.0.0 => ./d

replace example.com/e => example.com/f v1.2.0
`
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "d", "go.mod"), []byte("module example.com/a/d\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	n, err := dropMissingReplaces(dir)
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("dropped %d, want 1", n)
	}
	b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	if strings.Contains(got, "=> ../c") {
		t.Errorf("the replace to the missing ../c stayed:\n%s", got)
	}
	for _, keep := range []string{"=> ./d", "=> example.com/f v1.2.0"} {
		if !strings.Contains(got, keep) {
			t.Errorf("%q was dropped:\n%s", keep, got)
		}
	}
}
