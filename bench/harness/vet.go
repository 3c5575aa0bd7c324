package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/racekit/racekit/bench/truth"
	"github.com/racekit/racekit/trace"
)

// Vet runs racekit's static analysis (RELAY, `racekit vet --json`) on each
// subject's packages. It runs the binary rather than calling package static
// so that the harness depends only on vet's documented JSON output.
type Vet struct {
	Racekit string   // the racekit binary
	ModDir  string   // the module root; racekit vet runs there
	Flags   []string // extra racekit vet flags (--filters=..., --callgraph=cha)
}

func (v *Vet) Name() string        { return "vet" }
func (v *Vet) Kinds() []truth.Kind { return []truth.Kind{truth.KindRace} }

// vetJSON is the part of `racekit vet --json` the harness reads.
type vetJSON struct {
	Evidence string `json:"evidence"`
	Warnings []struct {
		Object string `json:"object"`
		A      struct {
			Site string `json:"site"`
		} `json:"a"`
		B struct {
			Site string `json:"site"`
		} `json:"b"`
	} `json:"warnings"`
}

func (v *Vet) Analyze(ctx context.Context, s *truth.Subject) (*Result, error) {
	rel, err := filepath.Rel(v.ModDir, s.Dir)
	if err != nil || strings.HasPrefix(rel, "..") {
		return nil, fmt.Errorf("subject %s is outside the module at %s", s.Dir, v.ModDir)
	}
	args := append([]string{"vet", "--json"}, v.Flags...)
	args = append(args, "./"+filepath.ToSlash(rel)+"/...")
	cmd := exec.CommandContext(ctx, v.Racekit, args...)
	cmd.Dir = v.ModDir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err = cmd.Run()
	elapsed := time.Since(start)
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 66) { // 66: warnings found
		return nil, fmt.Errorf("racekit %s: %v: %s", strings.Join(args, " "), err, lastLines(stderr.String(), 5))
	}
	res, err := parseVet(stdout.Bytes(), s.Dir)
	if err != nil {
		return nil, fmt.Errorf("racekit %s: %w", strings.Join(args, " "), err)
	}
	res.Elapsed = elapsed
	return res, nil
}

// parseVet turns vet's JSON into findings relative to dir.
func parseVet(data []byte, dir string) (*Result, error) {
	var out vetJSON
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("reading vet JSON: %v", err)
	}
	res := &Result{}
	for i, w := range out.Warnings {
		var sites []Site
		for _, raw := range []string{w.A.Site, w.B.Site} {
			if raw == "?" || raw == "" { // an access vet could not place: kept, it can only be false
				res.Notes = append(res.Notes, fmt.Sprintf("warning %d on %s has an access without a position", i, w.Object))
				sites = append(sites, Site{File: "?"})
				continue
			}
			s, err := parseSite(dir, raw)
			if err != nil {
				return nil, fmt.Errorf("warning %d: %v", i, err)
			}
			sites = append(sites, s)
		}
		res.Findings = append(res.Findings, Finding{Sites: sites, Evidence: out.Evidence, Object: w.Object})
	}
	return res, nil
}

// parseSite reads "file:line:col" or "file:line" (trace.ParseSiteLabel).
func parseSite(dir, s string) (Site, error) {
	site := trace.ParseSiteLabel(s)
	if site.Line <= 0 || site.File == "" {
		return Site{}, fmt.Errorf("site %q: want file:line[:col]", s)
	}
	return RelSite(dir, site.File, site.Line, site.Col), nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
