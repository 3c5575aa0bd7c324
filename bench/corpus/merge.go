package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// MergedFile is one file of a merge (-merge), in merge order.
type MergedFile struct {
	File string `json:"file"` // as given
	// Racekit is the commit racekit was built from for this file's runs:
	// the one given as FILE@REV, else the file's own racekit field.
	Racekit string `json:"racekit"`
	// Recorded is the file's own racekit field when FILE@REV replaced it
	// (the harness records its working tree's commit, which is not the
	// binary's when racekit was built from a snapshot).
	Recorded string `json:"recorded,omitempty"`
	Go       string `json:"go,omitempty"`
	Command  string `json:"command"`
	Rows     int    `json:"rows"` // modules whose merged row comes from this file
}

// revSuffix is FILE@REV's REV: an abbreviated or full commit.
var revSuffix = regexp.MustCompile(`^[0-9a-f]{7,40}(-dirty)?$`)

// parseMergeList splits -merge's comma-separated list into files and the
// commits given with them (FILE@REV; "" when none).
func parseMergeList(list string) (files, revs []string, err error) {
	for _, e := range strings.Split(list, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		rev := ""
		if i := strings.LastIndex(e, "@"); i > 0 && revSuffix.MatchString(e[i+1:]) {
			e, rev = e[:i], e[i+1:]
		}
		files = append(files, e)
		revs = append(revs, rev)
	}
	if len(files) == 0 {
		return nil, nil, fmt.Errorf("-merge: no files in %q", list)
	}
	return files, revs, nil
}

// mergeResults reads the files of list in order and keeps, for each
// module, its row from the last file that measured it (a -race run,
// ModuleResult.Race set); a module no file measured keeps its last error
// row. Each row records its file and racekit commit.
func mergeResults(list, command string) (*Results, error) {
	files, revs, err := parseMergeList(list)
	if err != nil {
		return nil, err
	}
	out := &Results{Command: command, Racekit: "merged"}
	latest := map[string]*ModuleResult{}
	var gos []string
	for i, f := range files {
		res, err := readResults(f)
		if err != nil {
			return nil, err
		}
		if len(res.Modules) == 0 {
			return nil, fmt.Errorf("%s: no modules (not a bench/corpus results file?)", f)
		}
		mf := MergedFile{File: f, Racekit: res.Racekit, Go: res.Go, Command: res.Command}
		if revs[i] != "" {
			mf.Racekit = revs[i]
			if res.Racekit != revs[i] {
				mf.Recorded = res.Racekit
			}
		}
		out.Merged = append(out.Merged, mf)
		if res.Go != "" && !contains(gos, res.Go) {
			gos = append(gos, res.Go)
		}
		for j, m := range res.Modules {
			if m == nil || m.Path == "" {
				return nil, fmt.Errorf("%s: module %d has no path", f, j)
			}
			row := *m
			// A row of an earlier merge keeps where it came from.
			if row.From == "" {
				row.From, row.RacekitAt = f, mf.Racekit
			}
			if old := latest[m.Path]; old == nil || row.Race != nil || old.Race == nil {
				latest[m.Path] = &row
			}
		}
	}
	out.Go = strings.Join(gos, ", ")
	for _, m := range latest {
		recompare(m)
		out.Modules = append(out.Modules, m)
	}
	// The corpus's order, then modules no longer in it by path.
	index := map[string]int{}
	for i, c := range corpus {
		index[c.Path] = i
	}
	rank := func(m *ModuleResult) int {
		if i, ok := index[m.Path]; ok {
			return i
		}
		return len(corpus)
	}
	sort.Slice(out.Modules, func(i, j int) bool {
		a, b := out.Modules[i], out.Modules[j]
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra < rb
		}
		return a.Path < b.Path
	})
	for _, m := range out.Modules {
		for i := range out.Merged {
			if out.Merged[i].File == m.From {
				out.Merged[i].Rows++
			}
		}
	}
	return out, nil
}

// recompare recomputes m's comparison from its test rows, so that every
// row of a merge follows the comparison's current rules (unstable names)
// whichever session measured it. A row without test rows, or with rows
// that do not match its number of racekit runs, keeps its comparison.
func recompare(m *ModuleResult) {
	if m.Compare == nil || len(m.TestRows) == 0 {
		return
	}
	k := len(m.Racekit)
	race := &Run{Tests: map[string]*TestResult{}}
	rks := make([]*Run, k)
	for i := range rks {
		rks[i] = &Run{Tests: map[string]*TestResult{}}
	}
	for _, row := range m.TestRows {
		vs := strings.Fields(row.Racekit)
		if len(vs) != k {
			return
		}
		rr, rs := 0, make([]int, k)
		if row.Races != "" {
			before, after, _ := strings.Cut(row.Races, "|")
			fmt.Sscan(before, &rr)
			for i, f := range strings.Fields(after) {
				if i < k {
					fmt.Sscan(f, &rs[i])
				}
			}
		}
		if row.Race != Missing {
			race.Tests[row.Test] = &TestResult{Verdict: row.Race, Races: rr}
		}
		for i, v := range vs {
			if v != Missing {
				rks[i].Tests[row.Test] = &TestResult{Verdict: v, Races: rs[i]}
			}
		}
	}
	c := Compare(race, rks)
	m.Compare = &c
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// readResults reads a results file, plain JSON or gzip-compressed.
func readResults(path string) (*Results, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		if b, err = io.ReadAll(zr); err != nil {
			return nil, fmt.Errorf("%s: gzip: %v", path, err)
		}
	} else if strings.HasSuffix(path, ".gz") {
		return nil, fmt.Errorf("%s: not gzip data", path)
	}
	res := &Results{}
	if err := json.Unmarshal(b, res); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return res, nil
}

// writeResults writes res to path as indented JSON, gzip-compressed when
// path ends in .gz.
func writeResults(path string, res *Results) error {
	b, err := json.MarshalIndent(res, "", " ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if strings.HasSuffix(path, ".gz") {
		var z bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
		if _, err := zw.Write(b); err != nil {
			return err
		}
		if err := zw.Close(); err != nil {
			return err
		}
		b = z.Bytes()
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// shellQuote quotes an argument of the command recorded in a merge.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
