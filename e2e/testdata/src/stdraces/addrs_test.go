package stdraces

import (
	"net"
	"testing"
)

// Formatting a net address reads its IP's bytes (hashicorp/serf's mDNS
// agent: net.TCPAddr{IP: h.Addr, Port: h.Port}.String(), with h.Addr
// written by another goroutine's DNS unpacking).

func TestRaceTCPAddrString(t *testing.T) {
	ip := make(net.IP, 4)
	c := make(chan bool)
	go func() {
		copy(ip, []byte{10, 0, 0, 1}) // race: addr
		c <- true
	}()
	addr := net.TCPAddr{IP: ip, Port: 80}
	sink = addr.String() // race: addr
	<-c
}

func TestNoRaceTCPAddrStringAfterChan(t *testing.T) {
	ip := make(net.IP, 4)
	c := make(chan bool)
	go func() {
		copy(ip, []byte{10, 0, 0, 1})
		c <- true
	}()
	<-c
	addr := net.TCPAddr{IP: ip, Port: 80}
	sink = addr.String()
}
