package stdraces

// Structs with exported fields that std functions read and write field by
// field, some under the struct's own mutex (instrument/stdfields.go: the O
// effect). A user's write of a field races with a std read of it; two std
// calls that take the struct's mutex do not race with each other; a lazy
// initializer that wrote once is a read afterwards.

import (
	"context"
	"crypto/tls"
	"go/token"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"testing"
)

// Config.Clone reads every field under the Config's own RWMutex, which
// the program's write does not take.
func TestRaceTLSConfigClone(t *testing.T) {
	cfg := &tls.Config{}
	c := make(chan bool)
	go func() {
		cfg.MinVersion = tls.VersionTLS12 // race: clone
		c <- true
	}()
	sink = cfg.Clone() // race: clone
	<-c
}

// The Config another goroutine has just made and published without
// synchronization, as gws's Server.RunTLS does.
func TestRaceTLSConfigPublishedClone(t *testing.T) {
	var cfg *tls.Config
	c := make(chan bool)
	go func() {
		cfg = &tls.Config{ServerName: "a"} // race: publish published
		c <- true
	}()
	for cfg == nil { // race: publish
		runtime.Gosched()
	}
	sink = cfg.Clone() // race: published
	<-c
}

func TestRaceURLString(t *testing.T) {
	u := &url.URL{Scheme: "http", Host: "example.com"}
	c := make(chan bool)
	go func() {
		u.Path = "/x" // race: urlstring
		c <- true
	}()
	sink = u.String() // race: urlstring
	<-c
}

func TestNoRaceTLSConfigCloneTwice(t *testing.T) {
	cfg := &tls.Config{ServerName: "a"}
	c := make(chan bool)
	go func() {
		_ = cfg.Clone()
		c <- true
	}()
	_ = cfg.Clone()
	<-c
}

// SetLines writes the File under its own mutex.
func TestNoRaceTokenFileSetLines(t *testing.T) {
	f := token.NewFileSet().AddFile("x.go", -1, 100)
	c := make(chan bool)
	go func() {
		f.SetLines([]int{0, 10})
		c <- true
	}()
	f.SetLines([]int{0, 20})
	<-c
}

func TestNoRaceServerRegisterOnShutdown(t *testing.T) {
	srv := &http.Server{}
	c := make(chan bool)
	go func() {
		srv.RegisterOnShutdown(func() {})
		c <- true
	}()
	srv.RegisterOnShutdown(func() {})
	<-c
}

// Header writes HeaderMap only when it is nil; NewRecorder made it.
func TestNoRaceRecorderHeader(t *testing.T) {
	rec := httptest.NewRecorder()
	c := make(chan bool)
	go func() {
		_ = rec.Header().Get("a")
		c <- true
	}()
	_ = rec.Header().Get("b")
	<-c
}

// Header sets HeaderMap when it is nil: two first calls race, as under go
// test -race (the O effect's "z": a write while the field is zero).
func TestRaceRecorderHeaderLazy(t *testing.T) {
	rec := &httptest.ResponseRecorder{}
	c := make(chan bool)
	go func() {
		_ = rec.Header() // race: lazy
		c <- true
	}()
	_ = rec.Header() // race: lazy
	<-c
}

// After the first call set it, later calls only read HeaderMap.
func TestNoRaceRecorderHeaderAfterLazy(t *testing.T) {
	rec := &httptest.ResponseRecorder{}
	rec.Header().Set("a", "1")
	c := make(chan bool)
	go func() {
		_ = rec.Header().Get("a")
		c <- true
	}()
	_ = rec.Header().Get("a")
	<-c
}

// WithContext copies the Request whole (the O effect's "**").
func TestRaceRequestWithContext(t *testing.T) {
	req := httptest.NewRequest("GET", "/x", nil)
	c := make(chan bool)
	go func() {
		req.Method = "POST" // race: withctx
		c <- true
	}()
	sink = req.WithContext(context.Background()) // race: withctx
	<-c
}
