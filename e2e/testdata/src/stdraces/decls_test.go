package stdraces

import "testing"

// The declaration of an escaping variable writes it: Go's compiler stores
// its initial value, zero or not, into the new heap object, and go test
// -race reports that store when another goroutine reads the variable
// through a pointer published without synchronization (hashicorp/serf's
// IPC event stream: header := responseHeader{...}; client.Send(&header),
// read by the test after a sleep). The publication itself is a race too.
// new(T) has no such write: its memory is zeroed by the allocator.

type header struct {
	Seq   uint64
	Error string
}

var pubHeader *header

func TestRaceDeclLiteralInit(t *testing.T) {
	c := make(chan bool)
	go func() {
		h := header{Seq: 42} // race: init
		pubHeader = &h       // race: pub
		c <- true
	}()
	apart()
	p := pubHeader // race: pub
	if p != nil {
		sink = p.Seq // race: init
	}
	<-c
}

func TestRaceDeclVarZero(t *testing.T) {
	c := make(chan bool)
	go func() {
		var h header   // race: init
		pubHeader = &h // race: pub
		c <- true
	}()
	apart()
	p := pubHeader // race: pub
	if p != nil {
		sink = p.Error // race: init
	}
	<-c
}

func TestRaceDeclAddrLiteral(t *testing.T) {
	c := make(chan bool)
	go func() {
		pubHeader = &header{} // race: init pub
		c <- true
	}()
	apart()
	p := pubHeader // race: pub
	if p != nil {
		sink = p.Seq // race: init
	}
	<-c
}

func TestNoRaceDeclPublishedByChan(t *testing.T) {
	c := make(chan *header)
	go func() {
		h := header{Seq: 42}
		c <- &h
	}()
	p := <-c
	sink = p.Seq
	sink = p.Error
}

func TestNoRaceDeclNewThenWrittenOnce(t *testing.T) {
	c := make(chan bool)
	p := new(header)
	go func() {
		p.Seq = 1
		c <- true
	}()
	<-c
	sink = p.Seq
}
