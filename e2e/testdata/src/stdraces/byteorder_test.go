package stdraces

// Fixed-size integers read and written by binary.LittleEndian and
// BigEndian (instrument/stdcalls.go: EF and EFW of 2, 4 or 8 bytes at the
// start of the buffer), as websocket and wire-protocol code masks and
// frames its buffers. (go test -race keeps four accesses per 8-byte word
// of shadow memory, so an 8-byte Uint64 read, eight byte reads there, may
// lose the byte another goroutine writes; these tests race on bytes it
// keeps.)

import (
	"encoding/binary"
	"testing"
)

func TestRaceByteOrderPutRead(t *testing.T) {
	buf := make([]byte, 8)
	c := make(chan bool)
	go func() {
		binary.BigEndian.PutUint32(buf, 7) // race: putuint32
		c <- true
	}()
	sink = buf[2] // race: putuint32
	<-c
}

func TestRaceByteOrderUint32Write(t *testing.T) {
	buf := make([]byte, 16)
	c := make(chan bool)
	go func() {
		buf[0] = 1 // race: uint32
		c <- true
	}()
	sink = binary.LittleEndian.Uint32(buf) // race: uint32
	<-c
}

func TestRaceByteOrderPutPut(t *testing.T) {
	buf := make([]byte, 8)
	c := make(chan bool)
	go func() {
		binary.LittleEndian.PutUint16(buf[1:], 1) // race: putput
		c <- true
	}()
	binary.BigEndian.PutUint32(buf, 2) // race: putput
	<-c
}

func TestNoRaceByteOrderDisjoint(t *testing.T) {
	buf := make([]byte, 16)
	c := make(chan bool)
	go func() {
		buf[9] = 1
		c <- true
	}()
	sink = binary.BigEndian.Uint64(buf)
	binary.LittleEndian.PutUint16(buf[4:], 3)
	<-c
}
