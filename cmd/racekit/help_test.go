package main

import (
	"strings"
	"testing"
)

// Every command's help names a flag's default once: a flag whose value only
// means "not given" documents its real default in its usage (gen's -locks:
// "mutexes (default 4)"), and the printed default of -1 was added after it
// ("(default 4) (default -1)").
func TestHelpDefaultsOnce(t *testing.T) {
	for _, c := range commands {
		var b strings.Builder
		c.usage(&b)
		for _, line := range strings.Split(b.String(), "\n") {
			if strings.Count(line, "(default") > 1 {
				t.Errorf("racekit help %s: %q", c.name, strings.TrimSpace(line))
			}
		}
	}
}

// racekit help lists the commands in name order, each description at one
// column, past the longest name.
func TestMainUsageAligned(t *testing.T) {
	var b strings.Builder
	mainUsage(&b)
	col, prev, n := -1, "", 0
	for _, line := range strings.Split(b.String(), "\n") {
		name, _, ok := strings.Cut(strings.TrimPrefix(line, "\t"), " ")
		if !strings.HasPrefix(line, "\t") || !ok || strings.HasPrefix(name, "racekit") {
			continue
		}
		n++
		c := len(name) + strings.IndexFunc(line[1+len(name):], func(r rune) bool { return r != ' ' })
		if col >= 0 && c != col {
			t.Errorf("%q: description at column %d, others at %d", line, c, col)
		}
		if name <= prev {
			t.Errorf("%s listed after %s", name, prev)
		}
		col, prev = c, name
	}
	if n != len(commands) {
		t.Errorf("%d command lines, want %d", n, len(commands))
	}
}
