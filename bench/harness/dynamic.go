package harness

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/racekit/racekit/bench/truth"
	"github.com/racekit/racekit/detect"
	"github.com/racekit/racekit/detect/hb"
	"github.com/racekit/racekit/detect/lockset"
	"github.com/racekit/racekit/finding"
	"github.com/racekit/racekit/trace"
	"github.com/racekit/racekit/trace/tracefile"
)

// Detectors are the trace detectors Dynamic can run, by --algo name.
var Detectors = map[string]func(finding.Sink) detect.Detector{
	"hb":        func(s finding.Sink) detect.Detector { return hb.New(s) },
	"fasttrack": func(s finding.Sink) detect.Detector { return hb.NewFastTrack(s) },
	"lockset":   func(s finding.Sink) detect.Detector { return lockset.New(s) },
	"hybrid":    func(s finding.Sink) detect.Detector { return lockset.NewHybrid(s) },
}

// Dynamic runs the subjects' tests under racekit's front end (`racekit test
// --keep-trace DIR`, one instrumented build for all subjects) and analyzes
// each test binary's trace with one detector.
type Dynamic struct {
	Algo     string   // a key of Detectors
	Racekit  string   // the racekit binary
	ModDir   string   // the module root; racekit test runs there
	TraceDir string   // where traces are kept; "" means a temporary directory, removed by Close
	GoFlags  []string // flags for go test (after --), e.g. -timeout=2m
	// Dedup keeps the runtime's default of dropping an access a goroutine
	// repeats within one epoch (rt's RACEKIT_DEDUP). The repeat races with
	// exactly what the first access races with, so no racy word is lost,
	// but the race is then reported at the first access's site: distinct
	// site pairs, which the ground truth counts, are. False (the default
	// for scoring) runs with RACEKIT_DEDUP=0: every access recorded.
	Dedup bool
	// Log receives racekit test's output (go test's, and racekit's own
	// reports); nil discards it. It is also kept in TraceDir/racekit-test.log.
	Log io.Writer

	module string
	tmp    bool
	traces []*traceResult
	failed map[string]string // import path → "--- FAIL" lines
}

// traceResult is one analyzed trace.
type traceResult struct {
	path       string
	program    string // the test binary's import path, without ".test"
	events     int64
	goroutines int
	elapsed    time.Duration
	races      []rawRace
	warnings   []string
}

type rawRace struct {
	a, b     trace.Site
	evidence string
	count    int
}

func (d *Dynamic) Name() string        { return d.Algo }
func (d *Dynamic) Kinds() []truth.Kind { return []truth.Kind{truth.KindRace} }

// Prepare runs racekit test over all subjects and analyzes every trace.
func (d *Dynamic) Prepare(ctx context.Context, subjects []*truth.Subject) error {
	if _, ok := Detectors[d.Algo]; !ok {
		return fmt.Errorf("unknown detector %q", d.Algo)
	}
	mod, err := modulePath(d.ModDir)
	if err != nil {
		return err
	}
	d.module = mod
	if d.TraceDir == "" {
		dir, err := os.MkdirTemp("", "racekit-bench-")
		if err != nil {
			return err
		}
		d.TraceDir, d.tmp = dir, true
	} else if err := os.MkdirAll(d.TraceDir, 0o777); err != nil {
		return err
	}
	for _, old := range tracefile.List(d.TraceDir) { // traces of an earlier run would be mixed in
		if err := os.Remove(old); err != nil {
			return err
		}
	}
	args := []string{"test", "--algo=" + d.Algo, "--keep-trace", d.TraceDir}
	for _, s := range subjects {
		rel, err := filepath.Rel(d.ModDir, s.Dir)
		if err != nil || strings.HasPrefix(rel, "..") {
			return fmt.Errorf("subject %s is outside the module at %s", s.Dir, d.ModDir)
		}
		args = append(args, "./"+filepath.ToSlash(rel)+"/...")
	}
	if len(d.GoFlags) > 0 {
		args = append(args, "--")
		args = append(args, d.GoFlags...)
	}
	logPath := filepath.Join(d.TraceDir, "racekit-test.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logf.Close()
	var out bytes.Buffer
	var w io.Writer = io.MultiWriter(logf, &out)
	if d.Log != nil {
		w = io.MultiWriter(w, d.Log)
	}
	cmd := exec.CommandContext(ctx, d.Racekit, args...)
	cmd.Dir = d.ModDir
	cmd.Stdout, cmd.Stderr = w, w
	env := ""
	if !d.Dedup {
		env = "RACEKIT_DEDUP=0 "
		cmd.Env = append(os.Environ(), "RACEKIT_DEDUP=0")
	}
	fmt.Fprintf(logf, "$ cd %s && %s%s %s\n", d.ModDir, env, d.Racekit, strings.Join(args, " "))
	runErr := cmd.Run()
	// Exit status 1 is expected: the subjects race. What matters is
	// which traces were written; a subject without one failed to build
	// or run (see the log).
	var ee *exec.ExitError
	if runErr != nil && !errors.As(runErr, &ee) {
		return fmt.Errorf("racekit test: %w", runErr)
	}
	d.failed = failedTests(out.Bytes())
	files := tracefile.List(d.TraceDir)
	if len(files) == 0 {
		return fmt.Errorf("racekit test wrote no trace (exit %v); see %s", runErr, logPath)
	}
	for _, f := range files {
		tr, err := analyzeTrace(f, Detectors[d.Algo])
		if err != nil {
			return err
		}
		d.traces = append(d.traces, tr)
	}
	return nil
}

// Analyze collects the findings of the traces of the subject's packages.
func (d *Dynamic) Analyze(ctx context.Context, s *truth.Subject) (*Result, error) {
	rel, _ := filepath.Rel(d.ModDir, s.Dir)
	pkg := d.module + "/" + filepath.ToSlash(rel)
	res := &Result{}
	n := 0
	for _, tr := range d.traces {
		if tr.program != pkg && !strings.HasPrefix(tr.program, pkg+"/") {
			continue
		}
		n++
		res.Events += tr.events
		res.Goroutines += tr.goroutines
		res.Elapsed += tr.elapsed
		for _, w := range tr.warnings {
			res.Notes = append(res.Notes, filepath.Base(tr.path)+": "+w)
		}
		for _, r := range tr.races {
			res.Findings = append(res.Findings, Finding{
				Sites:    []Site{RelSite(s.Dir, r.a.File, r.a.Line, r.a.Col), RelSite(s.Dir, r.b.File, r.b.Line, r.b.Col)},
				Evidence: r.evidence,
				Count:    r.count,
			})
		}
	}
	var fails []string
	for p, lines := range d.failed {
		if p == pkg || strings.HasPrefix(p, pkg+"/") {
			fails = append(fails, p+": "+lines)
		}
	}
	sort.Strings(fails)
	if n == 0 {
		if len(fails) > 0 {
			return nil, fmt.Errorf("no trace: %s", strings.Join(fails, "; "))
		}
		return nil, fmt.Errorf("no trace for %s (did its test run? see %s)", pkg, filepath.Join(d.TraceDir, "racekit-test.log"))
	}
	for _, f := range fails {
		res.Notes = append(res.Notes, "test failed: "+f)
	}
	if res.Elapsed == 0 {
		res.Elapsed = time.Nanosecond // analyzed, just fast: do not let Run time Analyze instead
	}
	return res, nil
}

// Close removes a temporary trace directory.
func (d *Dynamic) Close() error {
	if d.tmp {
		return os.RemoveAll(d.TraceDir)
	}
	return nil
}

// analyzeTrace runs one detector over a trace file.
func analyzeTrace(path string, mk func(finding.Sink) detect.Detector) (*traceResult, error) {
	f, err := tracefile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	col := finding.NewCollector()
	det := mk(col)
	start := time.Now()
	n, err := detect.Run(f, det)
	if err != nil {
		return nil, err
	}
	tr := &traceResult{path: path, events: n, elapsed: time.Since(start)}
	m := f.Meta()
	tr.program = strings.TrimSuffix(strings.TrimPrefix(m.NameOf(0), "program "), ".test")
	for i := range m.Goroutines {
		if m.GoroutineDefined(trace.GID(i)) {
			tr.goroutines++
		}
	}
	for _, g := range col.Groups() {
		tr.races = append(tr.races, rawRace{a: m.Site(g.Prev.Site), b: m.Site(g.Cur.Site), evidence: g.Evidence.String(), count: g.Count})
	}
	if w, ok := f.Reader.(trace.Warner); ok {
		tr.warnings = w.Warnings()
	}
	return tr, nil
}

// failedTests finds go test's failure lines ("--- FAIL: TestX" followed,
// later, by "FAIL\tpkg\t...") per package.
func failedTests(out []byte) map[string]string {
	res := map[string]string{}
	var pending []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(strings.TrimSpace(line), "--- FAIL:"):
			pending = append(pending, strings.TrimSpace(line))
		case strings.HasPrefix(line, "FAIL\t") && !strings.Contains(line, "(racekit:"):
			fields := strings.Split(line, "\t")
			if len(fields) >= 2 {
				pkg, note, _ := strings.Cut(fields[1], " ") // "m/d [build failed]"
				msg := strings.Join(pending, ", ")
				if msg == "" {
					msg = strings.TrimSpace(note + " " + strings.Join(fields[2:], " "))
				}
				res[pkg] = msg
			}
			pending = nil
		case strings.HasPrefix(line, "ok  \t"):
			pending = nil
		}
	}
	return res
}

// modulePath reads the module path from dir/go.mod.
func modulePath(dir string) (string, error) {
	data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(data), "\n") {
		line, _, _ = strings.Cut(line, "//")
		line = strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(line, "module"); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
			return strings.Trim(strings.TrimSpace(rest), `"`), nil
		}
	}
	return "", fmt.Errorf("%s: no module line", filepath.Join(dir, "go.mod"))
}

// FindModule walks up from dir to the directory holding go.mod.
func FindModule(dir string) (string, error) {
	d, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no go.mod in %s or above", dir)
		}
		d = parent
	}
}
