//go:build race

package rt

// raceEnabled: the tests run under the Go race detector (about 10x
// slower), so the randomized ones run fewer seeds.
const raceEnabled = true
