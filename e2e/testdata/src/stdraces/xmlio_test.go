package stdraces

import (
	"encoding/xml"
	"os"
	"testing"
)

// An xml.Decoder's Token reads its reader (a file here, a connection in
// held-out gosrc.io/xmpp's client and test server): the read system call
// acquires what the writer's released, as a Read does.
func TestNoRaceXMLTokenOrders(t *testing.T) {
	r, w := osPipe(t)
	x := new(int)
	go func() {
		*x = 1
		w.Write([]byte("<a/>"))
	}()
	if _, err := xml.NewDecoder(r).Token(); err != nil {
		t.Fatal(err)
	}
	sink = *x
}

// An xml.Encoder's EncodeToken and Flush write its writer, as a Write does.
func TestNoRaceXMLEncodeTokenOrders(t *testing.T) {
	r, w := osPipe(t)
	x := new(int)
	go func() {
		*x = 1
		enc := xml.NewEncoder(w)
		enc.EncodeToken(xml.StartElement{Name: xml.Name{Local: "a"}})
		enc.Flush()
	}()
	buf := make([]byte, 3)
	if _, err := r.Read(buf); err != nil {
		t.Fatal(err)
	}
	sink = *x
}

// A write after the Token call is not ordered by it.
func TestRaceXMLTokenThenWrite(t *testing.T) {
	r, w := osPipe(t)
	x := new(int)
	done := make(chan bool)
	go func() {
		w.Write([]byte("<a/>"))
		*x = 1 // race: xmltokenthenwrite
		close(done)
	}()
	if _, err := xml.NewDecoder(r).Token(); err != nil {
		t.Fatal(err)
	}
	sink = *x // race: xmltokenthenwrite
	<-done
}

// osPipe is a pipe of the operating system's, closed when the test ends:
// its Write and Read are system calls, ordered as ioSync orders them.
func osPipe(t *testing.T) (r, w *os.File) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}
