// Package testingorder is the ground truth for the testing framework's
// ordering (rt/rttest), in the style of Go's race suite
// (runtime/race/testdata): each TestRace* and TestNoRace* (and the
// benchmarks, the fuzz target and the example) shows one behaviour of
// package testing, and the lines of every race carry a race mark with the
// race's tag (e2e's expected).
// Run it with -parallel of at least 2: sibling parallel subtests meet at a
// WaitGroup before their racing accesses, so that neither ends before the
// other runs (with -parallel=1 the framework's own semaphore would order
// them, for the Go race detector too).
package testingorder
