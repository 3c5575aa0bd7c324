package stdraces

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"math/big"
	"net"
	"testing"
	"time"
)

// encoding/binary's Write and Read write and read their io.Writer and
// io.Reader: a file's system calls order them as Write and Read do.
func TestNoRaceBinaryReadOrders(t *testing.T) {
	r, w := osPipe(t)
	x := new(int)
	go func() {
		*x = 1
		binary.Write(w, binary.LittleEndian, uint32(7))
	}()
	var v uint32
	if err := binary.Read(r, binary.LittleEndian, &v); err != nil {
		t.Fatal(err)
	}
	sink = *x
}

// A write after binary.Write is not ordered by it.
func TestRaceBinaryWriteThenWrite(t *testing.T) {
	r, w := osPipe(t)
	x := new(int)
	done := make(chan bool)
	go func() {
		binary.Write(w, binary.LittleEndian, uint32(7))
		*x = 1 // race: binarywritethenwrite
		close(done)
	}()
	var v uint32
	if err := binary.Read(r, binary.LittleEndian, &v); err != nil {
		t.Fatal(err)
	}
	sink = *x // race: binarywritethenwrite
	<-done
}

// A crypto/tls connection's Write and Read write and read the connection
// under it (after the handshake, which does both).
func TestNoRaceTLSConnOrders(t *testing.T) {
	cert := selfSigned(t)
	x := new(int)
	addr := serveOnce(t, func(c net.Conn) {
		s := tls.Server(c, &tls.Config{Certificates: []tls.Certificate{cert}})
		*x = 1
		s.Write([]byte("hi"))
		s.Read(make([]byte, 1)) // until the client closes
	})
	c, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	buf := make([]byte, 2)
	if _, err := c.Read(buf); err != nil {
		t.Fatal(err)
	}
	sink = *x
}

// serveOnce listens on the loopback and runs serve, in a goroutine of its
// own, on the first connection it accepts, closed after; it returns the
// listener's address.
func serveOnce(t *testing.T, serve func(c net.Conn)) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skip("no loopback listener:", err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		serve(c)
	}()
	return l.Addr().String()
}

// selfSigned is a certificate for 127.0.0.1, made for the test.
func selfSigned(t *testing.T) tls.Certificate {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}
