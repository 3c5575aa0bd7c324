// A QUIC handshake over crypto/tls's QUICConn: the server's GetCertificate
// callback runs in the goroutine crypto/tls starts for the handshake, and
// main reads what it wrote once the handshake is done. No race: the
// QUICConn methods hand the handshake over to that goroutine and wait on
// channels until it blocks again, which go test -race sees and racekit
// does not; racekit took the read for a race (held-out quic-go,
// TestHelloRetryRequest) until it ordered each QUICConn call as I/O
// (instrument's ioKind; the callback, traced code entered from untraced
// code, acquires and releases the I/O object).
package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"math/big"
	"time"
)

func cert() tls.Certificate {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), DNSNames: []string{"localhost"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, pub, priv)
	if err != nil {
		panic(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: priv}
}

func main() {
	c := cert()
	var sawName string
	scfg := &tls.Config{MinVersion: tls.VersionTLS13, GetCertificate: func(info *tls.ClientHelloInfo) (*tls.Certificate, error) {
		sawName = info.ServerName
		return &c, nil
	}}
	ccfg := &tls.Config{MinVersion: tls.VersionTLS13, ServerName: "localhost", InsecureSkipVerify: true}
	cli := tls.QUICClient(&tls.QUICConfig{TLSConfig: ccfg})
	srv := tls.QUICServer(&tls.QUICConfig{TLSConfig: scfg})
	cli.SetTransportParameters(nil)
	ctx := context.Background()
	if err := cli.Start(ctx); err != nil {
		panic(err)
	}
	if err := srv.Start(ctx); err != nil {
		panic(err)
	}
	conns := [2]*tls.QUICConn{cli, srv}
	done := [2]bool{}
	for steps := 0; !(done[0] && done[1]) && steps < 1000; steps++ {
		for i, q := range conns {
			other := conns[1-i]
			for {
				ev := q.NextEvent()
				if ev.Kind == tls.QUICNoEvent {
					break
				}
				switch ev.Kind {
				case tls.QUICWriteData:
					if err := other.HandleData(ev.Level, ev.Data); err != nil {
						panic(err)
					}
				case tls.QUICTransportParametersRequired:
					q.SetTransportParameters(nil)
				case tls.QUICHandshakeDone:
					done[i] = true
				}
			}
		}
	}
	if !done[0] || !done[1] {
		panic("handshake did not finish")
	}
	fmt.Println("server saw", sawName)
	cli.Close()
	srv.Close()
}
