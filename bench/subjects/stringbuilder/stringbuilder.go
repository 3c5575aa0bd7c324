// Package stringbuilder is PECAN's StringBuf subject (PECAN Table 1:
// java.lang.StringBuffer of JDK 1.4.2, 0 races, 1 atomicity violation),
// the classic atomicity violation of StringBuffer.append(StringBuffer sb):
//
//	synchronized StringBuffer append(StringBuffer sb) {
//	    int len = sb.length();              // locks sb, releases it
//	    ...
//	    sb.getChars(0, len, value, count);  // locks sb again
//
// Every access is protected (no data race), but sb's lock is released
// between reading its length and copying its characters: another thread's
// sb.setLength(0) in between makes the copy run past the end
// (StringIndexOutOfBoundsException in Java, an error here).
package stringbuilder

import (
	"errors"
	"sync"
)

// ErrIndexOutOfBounds is getChars' complaint.
var ErrIndexOutOfBounds = errors.New("string index out of range")

// Buffer is a synchronized growable string.
type Buffer struct {
	mu    sync.Mutex
	value []byte
	count int
}

// New returns a buffer holding s.
func New(s string) *Buffer {
	return &Buffer{value: append(make([]byte, 0, len(s)+16), s...), count: len(s)}
}

// Len is StringBuffer.length(): synchronized.
func (b *Buffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.count // racekit:race id=sb-append kind=atomicity benign=false
}

// SetLength truncates or pads with zeros: synchronized.
func (b *Buffer) SetLength(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for len(b.value) < n {
		b.value = append(b.value, 0)
	}
	b.value = b.value[:n]
	b.count = n // racekit:race id=sb-append kind=atomicity benign=false
}

// AppendString appends s: synchronized.
func (b *Buffer) AppendString(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.value = append(b.value[:b.count], s...)
	b.count += len(s)
}

// getChars copies b[srcBegin:srcEnd] into dst at dstBegin: synchronized,
// and it checks srcEnd against the current count.
func (b *Buffer) getChars(srcBegin, srcEnd int, dst []byte, dstBegin int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if srcEnd > b.count { // racekit:race id=sb-append kind=atomicity benign=false
		return ErrIndexOutOfBounds
	}
	copy(dst[dstBegin:], b.value[srcBegin:srcEnd])
	return nil
}

// Append is StringBuffer.append(StringBuffer sb): synchronized on b, it
// reads sb's length under sb's lock, lets it go, and copies under sb's
// lock again. The two reads of sb.count are one atomic region (sb-append:
// Len's read, getChars' read, and SetLength's write in between).
func (b *Buffer) Append(sb *Buffer) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := sb.Len()
	newCount := b.count + n
	for len(b.value) < newCount {
		b.value = append(b.value, 0)
	}
	b.value = b.value[:newCount]
	if err := sb.getChars(0, n, b.value, b.count); err != nil {
		b.value = b.value[:b.count]
		return err
	}
	b.count = newCount
	return nil
}

// String returns the contents.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.value[:b.count])
}

// Config sizes a run.
type Config struct {
	Rounds int
}

// DefaultConfig is the size the test uses.
func DefaultConfig() Config { return Config{Rounds: 30} }

// Result counts the appends.
type Result struct {
	Appends    int // successful appends
	Exceptions int // appends that ran past the end of sb
	Len        int // length of the destination at the end
}

// Run is PECAN's driver: one thread appends sb to a buffer while another
// keeps emptying and refilling sb.
func Run(cfg Config) Result {
	dst := New("")
	sb := New("abcdefgh")
	var r Result
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 0; i < cfg.Rounds; i++ {
			if err := dst.Append(sb); err != nil {
				r.Exceptions++
			} else {
				r.Appends++
			}
		}
	}()
	go func() {
		defer wg.Done()
		for i := 0; i < cfg.Rounds; i++ {
			sb.SetLength(0)
			sb.AppendString("abcdefgh")
		}
	}()
	wg.Wait()
	r.Len = len(dst.String())
	return r
}
