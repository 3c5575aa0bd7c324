package stdraces

import (
	"bytes"
	"testing"
)

// bytes.Compare runs in assembly (internal/bytealg), whose reads go test
// -race does not see: a key compared while its owner rewrites it is not
// reported (held-out blevesearch/bleve's treap iterator).
func TestNoRaceCompareAssembly(t *testing.T) {
	key := make([]byte, 9)
	other := make([]byte, 9)
	c := make(chan bool)
	go func() {
		_ = bytes.Compare(key, other)
		c <- true
	}()
	key[0] = 't'
	<-c
}

// bytes.IndexByte and bytes.Count of one byte: assembly.
func TestNoRaceIndexByteCountAssembly(t *testing.T) {
	b := make([]byte, 200)
	c := make(chan bool)
	go func() {
		_ = bytes.IndexByte(b, 'z')
		_ = bytes.Count(b, []byte{'\n'})
		c <- true
	}()
	b[100] = 't'
	<-c
}

// bytes.Index and Contains search an operand of at most 64 bytes in
// assembly.
func TestNoRaceIndexShortAssembly(t *testing.T) {
	b := make([]byte, 64)
	c := make(chan bool)
	go func() {
		_ = bytes.Index(b, []byte("zz"))
		_ = bytes.Contains(b, []byte("zz"))
		c <- true
	}()
	b[1] = 't'
	<-c
}

// A longer operand is searched in Go code, whose reads -race sees: the
// first byte of each candidate (here every byte), up to the match.
func TestRaceIndexLong(t *testing.T) {
	b := make([]byte, 200)
	c := make(chan bool)
	go func() {
		b[1] = 't' // race: indexlong
		c <- true
	}()
	_ = bytes.Index(b, []byte{0, 1}) // race: indexlong
	<-c
}

// The same for Contains.
func TestRaceContainsLong(t *testing.T) {
	b := make([]byte, 200)
	c := make(chan bool)
	go func() {
		b[1] = 't' // race: containslong
		c <- true
	}()
	_ = bytes.Contains(b, []byte{0, 1}) // race: containslong
	<-c
}

// bytes.IndexRune, ContainsRune of an ASCII rune, IndexAny and ContainsAny
// of one ASCII character search with IndexByte: assembly.
func TestNoRaceIndexRuneASCIIAssembly(t *testing.T) {
	b := make([]byte, 200)
	c := make(chan bool)
	go func() {
		_ = bytes.IndexRune(b, ',')
		_ = bytes.ContainsRune(b, ',')
		_ = bytes.IndexAny(b, ";")
		_ = bytes.ContainsAny(b, ";")
		c <- true
	}()
	b[100] = 't'
	<-c
}

// IndexAny of several characters loops over the operand in Go code,
// which -race sees, up to the match. The operand starts at the written
// byte, the last of an 8-byte word: -race keeps four accesses per word,
// and of eight byte reads in one word it may forget the racing one.
func TestRaceIndexAnyLoop(t *testing.T) {
	b := make([]byte, 200)
	c := make(chan bool)
	go func() {
		b[7] = 't' // race: indexany
		c <- true
	}()
	_ = bytes.IndexAny(b[7:], ";,") // race: indexany
	<-c
}
