package stdraces

import (
	"bytes"
	"testing"
)

// bytes.IndexByte and bytes.Index read their operand up to the match they
// return (racekit: rt.BytesUpTo), not past it: a write past the match in
// another goroutine does not race with them (nor does go test -race see
// their reads, which are in assembly).
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
