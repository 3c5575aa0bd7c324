package instrument

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// The race build tag. go test -race builds with the tag "race", and code
// behaves by it: a package's race_enabled.go (//go:build race) declares
// `const Enabled = true`, and tests skip themselves under the race
// detector (hashicorp/serf skips five, one because it "contains a data
// race"; corpus, session 27). racekit cannot build with -tags race: the
// runtime and std have race files that need ThreadSanitizer's runtime.
// So the files of every package outside std and racekit's runtime, traced
// or not (-race builds the dependencies with the tag too), are given the
// tag's meaning instead: in their build constraints, race is replaced by go1.1, a tag every Go
// since 1.1 satisfies, and the go command (and racekit's loading, through
// the same overlay) keeps //go:build race files and drops //go:build !race
// ones, as under -race. A file that uses the race detector's runtime
// functions (runtime.RaceAcquire...) keeps its constraint: it would not
// compile without -race.

// raceTagLine matches the race tag in a build constraint line.
var raceTagLine = regexp.MustCompile(`\brace\b`)

// raceTagged returns src with the race tag of its build constraints
// replaced by go1.1, and whether there was one to replace.
func raceTagged(src []byte) ([]byte, bool) {
	if !bytes.Contains(src, []byte("race")) || bytes.Contains(src, []byte("runtime.Race")) {
		return nil, false
	}
	lines := bytes.SplitAfter(src, []byte("\n"))
	changed := false
	for i, l := range lines {
		t := bytes.TrimSpace(l)
		if bytes.HasPrefix(t, []byte("package ")) {
			break // constraints come before the package clause
		}
		if !bytes.HasPrefix(t, []byte("//go:build")) && !bytes.HasPrefix(t, []byte("// +build")) {
			continue
		}
		if n := raceTagLine.ReplaceAll(l, []byte("go1.1")); !bytes.Equal(n, l) {
			lines[i], changed = n, true
		}
	}
	if !changed {
		return nil, false
	}
	return bytes.Join(lines, nil), true
}

// raceOverlay reads the .go files of the packages outside std (files,
// those the build uses and those its constraints leave out) and returns
// the new content of each whose constraints name the race tag.
func raceOverlay(files []string) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, f := range files {
		if !strings.HasSuffix(f, ".go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		if n, ok := raceTagged(src); ok {
			out[filepath.Clean(f)] = n
		}
	}
	return out, nil
}
