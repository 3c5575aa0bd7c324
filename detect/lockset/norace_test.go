//go:build !race

package lockset

// diffSeeds is how many random traces each differential test checks.
const diffSeeds = 3000

const raceEnabled = false
