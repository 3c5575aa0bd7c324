//go:build race

package lockset

// The race detector slows the differential tests about fivefold: run fewer
// seeds under it to keep each test within a few seconds.
const diffSeeds = 1000

const raceEnabled = true
