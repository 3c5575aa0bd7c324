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
// or not (-race builds the dependencies with the tag too), that an overlay
// may replace (not those in the module cache) are given the tag's meaning
// instead: in their build constraints, race is replaced by go1.1, a tag every Go
// since 1.1 satisfies, and the go command (and racekit's loading, through
// the same overlay) keeps //go:build race files and drops //go:build !race
// ones, as under -race. A package that uses the race detector's runtime
// functions (runtime.RaceAcquire...) keeps its constraints: that file
// would not compile without -race.

// raceTagLine matches the race tag in a build constraint line.
var raceTagLine = regexp.MustCompile(`\brace\b`)

// raceTagged returns src with the race tag of its build constraints
// replaced by go1.1, and whether there was one to replace.
func raceTagged(src []byte) ([]byte, bool) {
	if !bytes.Contains(src, []byte("race")) {
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
// the new content of each whose constraints name the race tag. Left as
// they are: a directory with a file that uses the race detector's runtime
// functions (golang.org/x/sys/unix: race.go calls runtime.RaceAcquire,
// race0.go, //go:build !race, defines the same names for builds without
// -race: giving the one its meaning and not the other leaves neither), and
// files under modCache, which an overlay may not replace.
func raceOverlay(files []string, modCache string) (map[string][]byte, error) {
	out := map[string][]byte{}
	srcs := map[string][]byte{}
	raceRuntime := map[string]bool{} // directories
	for _, f := range files {
		f = filepath.Clean(f)
		if _, done := srcs[f]; done || !strings.HasSuffix(f, ".go") ||
			modCache != "" && strings.HasPrefix(f, filepath.Clean(modCache)+string(filepath.Separator)) {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		srcs[f] = src
		if bytes.Contains(src, []byte("runtime.Race")) {
			raceRuntime[filepath.Dir(f)] = true
		}
	}
	tag := func(f string, src []byte) {
		if raceRuntime[filepath.Dir(f)] {
			return
		}
		if n, ok := raceTagged(src); ok {
			out[f] = n
		}
	}
	dirs := map[string]bool{}
	for f, src := range srcs {
		tag(f, src)
		if _, ok := out[f]; ok {
			dirs[filepath.Dir(f)] = true
		}
	}
	// The other files of a directory with a race-tagged one: a package
	// loaded only as a dependency lists its test files excluded by their
	// constraints (race_test.go, //go:build race) but not the ones they
	// include (norace_test.go, //go:build !race); given the tag's meaning
	// to the one and not the other, its test variant declares both.
	for dir := range dirs {
		names, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		var more []string
		for _, f := range names {
			if _, done := srcs[f]; done {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			srcs[f] = src
			more = append(more, f)
			if bytes.Contains(src, []byte("runtime.Race")) {
				raceRuntime[dir] = true
			}
		}
		if raceRuntime[dir] {
			for f := range out {
				if filepath.Dir(f) == dir {
					delete(out, f)
				}
			}
			continue
		}
		for _, f := range more {
			tag(f, srcs[f])
		}
	}
	return out, nil
}
