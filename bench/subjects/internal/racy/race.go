//go:build race

package racy

// Enabled reports whether the binary was built with -race.
const Enabled = true
