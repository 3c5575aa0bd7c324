// Package stdsites: a race inside the standard library (two goroutines
// writing one bytes.Buffer) is one warning at the user's two calls, with
// the std frames as its trace, as Go's race report shows it; not one
// warning per pair of operations inside bytes.Buffer (there were 62).
package main

import "bytes"

func race() string {
	var b bytes.Buffer
	done := make(chan bool)
	go func() {
		b.WriteString("a") // want `potential race on b\.buf\[\*\]: read at stdsites\.go:13:16 \(in \(\*bytes\.Buffer\)\.grow at buffer\.go:\d+:\d+, via \(\*bytes\.Buffer\)\.WriteString\) in goroutine race\$1 started at stdsites\.go:12:2 holding no lock, and write at stdsites\.go:16:15 \(in \(\*bytes\.Buffer\)\.grow at buffer\.go:\d+:\d+, via \(\*bytes\.Buffer\)\.WriteString\) in race after the go statement at stdsites\.go:12:2 holding no lock`
		done <- true
	}()
	b.WriteString("b")
	<-done
	return b.String()
}

// ordered: the same calls handed off by the channel; no warning.
func ordered() string {
	var b bytes.Buffer
	done := make(chan bool)
	go func() {
		b.WriteString("a")
		done <- true
	}()
	<-done
	b.WriteString("b")
	return b.String()
}

func main() {
	race()
	ordered()
}
