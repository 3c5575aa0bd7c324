package text

import "strings"

// WithForks prefixes src, a trace in racekit text, with a fork by
// goroutine M of every other goroutine its lines name, in order of first
// appearance: hand-written traces (tests) then need not spell them out (a
// goroutine never forked is ordered after everything before it).
func WithForks(src string) string {
	var b strings.Builder
	seen := map[string]bool{"M": true}
	for _, l := range strings.Split(src, "\n") {
		if g, _, ok := strings.Cut(strings.TrimSpace(l), "|"); ok && !seen[g] {
			seen[g] = true
			b.WriteString("M|fork(" + g + ")\n")
		}
	}
	return b.String() + src
}
