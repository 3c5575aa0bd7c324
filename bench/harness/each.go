package harness

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/racekit/racekit/bench/truth"
)

// EachSubject is the loop of the benchmark commands that run racekit per
// subject (bench/fuzz, bench/pecan): it loads the subjects under root,
// keeps those named in names (all when none: truth.Select), and calls row
// for each in order with a temporary directory the calls share (removed
// afterwards), printing "tool: NAME" on stderr as it goes.
func EachSubject[R any](tool, root string, names []string, row func(s *truth.Subject, tmp string) R) ([]R, error) {
	subjects, err := truth.LoadAll(root)
	if err != nil {
		return nil, err
	}
	subjects = truth.Select(subjects, names)
	tmp, err := os.MkdirTemp("", "racekit-bench-"+tool+"-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	var rows []R
	for _, s := range subjects {
		fmt.Fprintf(os.Stderr, "bench/%s: %s\n", tool, s.Name)
		rows = append(rows, row(s, tmp))
	}
	return rows, nil
}

// WriteJSONFile writes v as indented JSON to path; an empty path writes
// nothing.
func WriteJSONFile(path string, v any) error {
	if path == "" {
		return nil
	}
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o666)
}

// RelToWd is dir relative to the working directory (the module root the
// benchmarks run from), as a package path or a report names it; dir
// itself when it is not below it.
func RelToWd(dir string) string {
	wd, _ := os.Getwd()
	if rel, err := filepath.Rel(wd, dir); err == nil {
		return rel
	}
	return dir
}
