// Package dedup: two thread pairs reach the same two sites (the read and
// the write of b.v++ in bump). In ordered the goroutine's accesses are
// handed off to the spawner's (the handoff filter removes that pairing);
// in racy nothing orders them. The filters must judge each pairing before
// one warning per site pair is kept, or the first (filtered) pairing hides
// the race of the second. ordered comes first in the file on purpose.
package main

type box struct{ v int }

func bump(b *box) {
	b.v++ // want `potential race on new@dedup.go:29:11.v: write at dedup.go:12:4 in racy after the go statement at dedup.go:30:2 holding no lock, and read at dedup.go:12:4 in goroutine bump started at dedup.go:30:2 holding no lock`
}

// ordered: race-free, the spawner's bump runs after the goroutine's.
func ordered() {
	x := &box{}
	done := make(chan bool)
	go func() {
		bump(x)
		done <- true
	}()
	<-done
	bump(x)
}

// racy: the goroutine's bump and the spawner's run in parallel.
func racy() {
	y := &box{}
	go bump(y)
	bump(y)
}

func main() {
	ordered()
	racy()
}
