package verdictdiff

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// fetch makes the module of spec available in a writable directory, into
// (for self, the current directory), and returns its path, its directory
// and the package patterns.
func fetch(spec, into string) (mod, dir string, patterns []string, err error) {
	mod, patterns = parseSpec(spec)
	if mod == "self" {
		dir, err = os.Getwd()
		return "self", dir, patterns, err
	}
	if !strings.Contains(mod, "@") {
		return "", "", nil, fmt.Errorf("want MODULE@VERSION[:PATTERNS] or self[:PATTERNS]")
	}
	out, err := exec.Command("go", "mod", "download", "-json", mod).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return "", "", nil, fmt.Errorf("go mod download: %v\n%s%s", err, out, ee.Stderr)
		}
		return "", "", nil, err
	}
	var info struct{ Dir, Error string }
	if err := json.Unmarshal(out, &info); err != nil {
		return "", "", nil, fmt.Errorf("go mod download: %v", err)
	}
	if info.Error != "" {
		return "", "", nil, fmt.Errorf("go mod download: %s", info.Error)
	}
	// A writable copy of the read-only module cache's files (a kept
	// work directory's earlier copy is replaced).
	if err := os.RemoveAll(into); err != nil {
		return "", "", nil, err
	}
	if err := os.CopyFS(into, os.DirFS(info.Dir)); err != nil {
		return "", "", nil, err
	}
	// The module's go.sum may lack entries for its tests' dependencies.
	tidy := exec.Command("go", "mod", "download", "all")
	tidy.Dir = into
	if out, err := tidy.CombinedOutput(); err != nil {
		return "", "", nil, fmt.Errorf("go mod download all: %v\n%s", err, out)
	}
	return mod, into, patterns, nil
}

// parseSpec splits MODULE@VERSION[:PATTERNS] or self[:PATTERNS] into the
// module and its patterns (./... when none).
func parseSpec(spec string) (mod string, patterns []string) {
	mod, pats, _ := strings.Cut(spec, ":")
	patterns = []string{"./..."}
	if pats != "" {
		patterns = strings.Split(pats, ",")
	}
	return mod, patterns
}

// goTest runs a go test-like command in dir and returns each package's
// verdict from its output. A failing exit status is not an error: the
// verdicts say what failed.
func goTest(dir, name string, args []string) (map[string]verdict, []byte, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	out, err := cmd.CombinedOutput()
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			return nil, out, err
		}
	}
	v := parseGoTest(out)
	if len(v) == 0 && err != nil {
		return nil, out, fmt.Errorf("%v, and no package results in its output:\n%s", err, lastLines(out, 20))
	}
	return v, out, nil
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
