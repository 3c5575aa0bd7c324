package rt

import (
	"bytes"
	"fmt"
	"net"
	"reflect"
	"testing"
	"unsafe"

	"github.com/racekit/racekit/trace"
)

func TestStringerOf(t *testing.T) {
	for _, c := range []struct {
		v    any
		want stringerKind
	}{
		{&net.UDPAddr{}, stringerDeep},
		{&net.TCPAddr{}, stringerDeep},
		{&net.IPNet{}, stringerDeep},
		{net.IP{}, stringerElems},
		{net.HardwareAddr{}, stringerElems},
		{net.UDPAddr{}, stringerNone}, // String has a pointer receiver: fmt walks the fields
		{&net.UnixAddr{}, stringerNone},
		{&bytes.Buffer{}, stringerNone},
		{[]byte{}, stringerNone},
	} {
		if got := stringerOf(reflect.TypeOf(c.v)); got != c.want {
			t.Errorf("stringerOf(%T) = %d, want %d", c.v, got, c.want)
		}
	}
}

// TestRStringer: the String of an address held by an interface, called or
// printed by fmt, reads the IP's bytes, where the program wrote them.
func TestRStringer(t *testing.T) {
	ip := make(net.IP, 16)
	ipAt := uint64(uintptr(unsafe.Pointer(&ip[0])))
	cases := []struct {
		name string
		f    func(site uint32)
	}{
		{"net.Addr", func(site uint32) {
			var a net.Addr = &net.UDPAddr{IP: ip}
			_ = RStringer(a, site, true).String()
		}},
		{"fmt.Stringer", func(site uint32) {
			var s fmt.Stringer = ip
			_ = RStringer(s, site, true).String()
		}},
		{"fmt", func(site uint32) {
			a := &net.TCPAddr{IP: ip}
			_ = fmt.Sprint(RFmt(a, site, true))
		}},
		{"fmt, interface", func(site uint32) {
			var a net.Addr = &net.TCPAddr{IP: ip}
			_ = fmt.Sprint(RFmt(a, site, true))
		}},
		{"not std's", func(site uint32) {
			var s fmt.Stringer = stringerOfProgram{ip}
			_ = RStringer(s, site, true).String()
		}},
	}
	for _, c := range cases {
		tr := record(t, false, c.f)
		read := false
		for _, e := range tr.Events { // ranges come as their words
			if e.Op == trace.OpRead && e.Obj == ipAt {
				read = true
			}
		}
		if want := c.name != "not std's"; read != want {
			t.Errorf("%s: IP's bytes read: %v, want %v", c.name, read, want)
		}
	}
}

// stringerOfProgram's String is the program's, traced where it is.
type stringerOfProgram struct{ ip net.IP }

func (s stringerOfProgram) String() string { return "x" }
