package stdraces

import (
	"net"
	"strings"
	"testing"
	"time"
)

// An object a std call makes and fills in is written by that call, as Go's
// race detector sees it in the instrumented standard library:
// lesismal/nbio's TestDialAsyncTCP, whose event loop formatted a
// *net.TCPAddr another goroutine's net.ResolveTCPAddr had made, handed over
// without synchronization (rt.Made). The handover races too.
func TestRaceResolvedAddrRead(t *testing.T) {
	var p *net.TCPAddr
	c := make(chan bool)
	go func() {
		a, _ := net.ResolveTCPAddr("tcp", "127.0.0.1:80") // race: made
		p = a                                             // race: p
		c <- true
	}()
	var a *net.TCPAddr
	for a == nil {
		a = p // race: p
		time.Sleep(time.Millisecond)
	}
	sink = a.Port // race: made
	<-c
}

func TestNoRaceResolvedAddrAfterChan(t *testing.T) {
	c := make(chan *net.TCPAddr)
	go func() {
		a, _ := net.ResolveTCPAddr("tcp", "127.0.0.1:80")
		c <- a
	}()
	a := <-c
	sink = a.Port
}

// A new slice's elements, written by the call that made it (rt.MadeSlice).
func TestRaceSplitResultRead(t *testing.T) {
	var p []string
	c := make(chan bool)
	go func() {
		s := strings.Split("a,b,c", ",") // race: made
		p = s                            // race: p
		c <- true
	}()
	var s []string
	for s == nil {
		s = p // race: p
		time.Sleep(time.Millisecond)
	}
	sink = s[1] // race: made
	<-c
}
