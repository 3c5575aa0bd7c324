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
