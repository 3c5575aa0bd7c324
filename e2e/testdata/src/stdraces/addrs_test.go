package stdraces

import (
	"fmt"
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

// Through an interface, the dynamic value's String is std's: lesismal/nbio's
// TestUDP, c.LocalAddr().String() on the *net.UDPAddr whose IP the test's
// goroutine had copied (rt.RStringer).
func TestRaceAddrStringViaInterface(t *testing.T) {
	ip := make(net.IP, 4)
	var a net.Addr = &net.UDPAddr{IP: ip, Port: 53}
	c := make(chan bool)
	go func() {
		copy(ip, []byte{10, 0, 0, 1}) // race: addr
		c <- true
	}()
	sink = a.String() // race: addr
	<-c
}

// A net.IP held by a fmt.Stringer: its String reads its bytes.
func TestRaceIPStringViaStringer(t *testing.T) {
	ip := make(net.IP, 4)
	var s fmt.Stringer = ip
	c := make(chan bool)
	go func() {
		ip[3] = 1 // race: ip
		c <- true
	}()
	sink = s.String() // race: ip
	<-c
}

// fmt calls the String method of the address it prints.
func TestRaceAddrPrinted(t *testing.T) {
	ip := make(net.IP, 4)
	addr := &net.TCPAddr{IP: ip, Port: 80}
	c := make(chan bool)
	go func() {
		copy(ip, []byte{10, 0, 0, 1}) // race: addr
		c <- true
	}()
	sink = fmt.Sprint(addr) // race: addr
	<-c
}

func TestNoRaceAddrStringViaInterfaceAfterChan(t *testing.T) {
	ip := make(net.IP, 4)
	var a net.Addr = &net.UDPAddr{IP: ip, Port: 53}
	c := make(chan bool)
	go func() {
		copy(ip, []byte{10, 0, 0, 1})
		c <- true
	}()
	<-c
	sink = a.String()
	sink = fmt.Sprint(a)
}
