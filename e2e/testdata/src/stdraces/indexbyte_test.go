package stdraces

import (
	"bytes"
	"slices"
	"testing"
)

// bytes.IndexByte, and bytes.Index of a short operand, read it in assembly,
// which go test -race does not see (racekit records nothing for them:
// asmreads_test.go): a write past the match in another goroutine is no
// race either way.
func TestNoRaceIndexBytePastMatch(t *testing.T) {
	b := make([]byte, 64)
	b[2] = '"'
	c := make(chan bool)
	go func() {
		b[40] = 1
		c <- true
	}()
	if bytes.IndexByte(b, '"') != 2 || bytes.Index(b, []byte{'"'}) != 2 {
		t.Error("no match")
	}
	<-c
}

// slices.Index reads up to the match: a write before it races, as go test
// -race sees in its loop.
func TestRaceSlicesIndexBeforeMatch(t *testing.T) {
	s := make([]int, 64)
	s[40] = 7
	c := make(chan bool)
	go func() {
		s[3] = 1 // race: index
		c <- true
	}()
	if slices.Index(s, 7) != 40 { // race: index
		t.Error("no match")
	}
	<-c
}

// A write past the match does not race with it.
func TestNoRaceSlicesIndexPastMatch(t *testing.T) {
	s := make([]int, 64)
	s[2] = 7
	c := make(chan bool)
	go func() {
		s[40] = 1
		c <- true
	}()
	if slices.Index(s, 7) != 2 {
		t.Error("no match")
	}
	<-c
}
