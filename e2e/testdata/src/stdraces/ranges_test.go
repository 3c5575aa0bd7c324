package stdraces

import (
	"slices"
	"testing"
)

// Copies and whole values wider than the 256 words racekit once recorded
// of one access: go test -race checks every word a copy reads or writes,
// so a race at the far end of a long copy is reported, and a write just
// past a copy's last byte is not.

func TestRaceLongCopyTail(t *testing.T) {
	src := make([]int64, 4096)
	dst := make([]int64, 4096)
	c := make(chan bool)
	go func() {
		src[4000] = 1 // race: copytail
		c <- true
	}()
	copy(dst, src) // race: copytail
	<-c
	sink = dst[0]
}

type bigArray [1024]int64

func TestRaceLongArrayAssign(t *testing.T) {
	a := new(bigArray)
	var b bigArray
	c := make(chan bool)
	go func() {
		a[1000] = 1 // race: arrayassign
		c <- true
	}()
	b = *a // race: arrayassign
	<-c
	sink = b[0]
}

func TestRaceLongSortTail(t *testing.T) {
	s := make([]int, 5000)
	for i := range s {
		s[i] = 5000 - i
	}
	c := make(chan bool)
	go func() {
		s[4500] = 7 // race: sorttail
		c <- true
	}()
	slices.Sort(s) // race: sorttail
	<-c
	sink = s[0]
}

func TestNoRaceLongCopyDisjoint(t *testing.T) {
	s := make([]int64, 4096)
	dst := make([]int64, 2048)
	c := make(chan bool)
	go func() {
		s[2048] = 1 // just past the half the copy reads
		c <- true
	}()
	copy(dst, s[:2048])
	<-c
	sink = dst[0]
}

func TestNoRaceBytesCopyNeighbour(t *testing.T) {
	buf := make([]byte, 1024)
	src := make([]byte, 1000)
	c := make(chan bool)
	go func() {
		buf[1000] = 1 // the byte after the last one the copy writes, in its word
		c <- true
	}()
	copy(buf, src)
	<-c
	sink = buf[0]
}
