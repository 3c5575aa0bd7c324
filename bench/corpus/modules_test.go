package main

import "testing"

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
