//go:build !race

package anomaly

const raceOn = false
