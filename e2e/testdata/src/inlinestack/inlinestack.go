// Package inlinestack races inside a method reached through small
// wrappers the compiler inlines (Reset, resetTo: no frame under racekit);
// the reports must show their frames as go test -race's do
// (e2e.TestInlineFrames).
package inlinestack

type Counter struct{ n, seed uint64 }

func (c *Counter) Reset() { c.resetTo(0) }

func (c *Counter) resetTo(seed uint64) { c.store(seed, seed+1) }

func (c *Counter) store(seed, n uint64) {
	c.seed = seed
	c.n = n
}
