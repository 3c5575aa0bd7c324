//go:build race

package hb_test

// raceBuild is set under -race, which slows the differential test's
// brute-force oracle about fivefold: it then runs fewer seeds.
const raceBuild = true
