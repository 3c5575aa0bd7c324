//go:build race

package anomaly

// raceOn: the race detector slows the differential tests tenfold; they
// then run on fewer traces.
const raceOn = true
