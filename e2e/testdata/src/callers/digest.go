package callers

import "io"

// Digest is a streaming sum in the shape of cespare/xxhash's: New and
// NewWithSeed are small wrappers the compiler inlines, so that a Digest
// they return by pointer stays on the caller's stack (TestAllocsWrappers).
type Digest struct {
	s1, s2 uint64
	n      int
}

func New() *Digest { return NewWithSeed(0) }

func NewWithSeed(seed uint64) *Digest {
	var d Digest
	d.ResetWithSeed(seed)
	return &d
}

func (d *Digest) ResetWithSeed(seed uint64) {
	d.s1 = seed + 1
	d.s2 = seed
	d.n = 0
}

func (d *Digest) Write(b []byte) {
	for _, c := range b {
		d.s1 = d.s1*31 + uint64(c)
		d.s2 ^= d.s1
	}
	d.n += len(b)
}

func (d *Digest) Sum64() uint64 { return d.s1 ^ d.s2 ^ uint64(d.n) }

// Option sets a Digest's seed; WithSeed returns one, a closure the
// compiler names after the function WithSeed is inlined into
// (TestClosureNames).
type Option func(*Digest)

func WithSeed(seed uint64) Option {
	return func(d *Digest) {
		d.s2 = seed
	}
}

// Counter is made by a constructor of a composite literal (&Counter{...}),
// which the compiler inlines, keeping the Counter on the caller's stack
// (TestAllocsConstructor).
type Counter struct {
	n    int
	name string
}

func NewCounter(name string) *Counter { return &Counter{name: name} }

func (c *Counter) Add(k int) { c.n += k }

// Signer is an interface that a zero-sized type implements; NewScheme
// returns one, whose pointer equals another zero-sized object's only when
// NewScheme is inlined (aws/smithy-go's TestAnonymousScheme compares them).
type Signer interface{ Sign() }

type nopSigner struct{}

func (*nopSigner) Sign() {}

type scheme struct {
	id     string
	signer Signer
}

func NewScheme() *scheme { return &scheme{id: "anon", signer: &nopSigner{}} }

// Raw is templ's Raw: a constructor whose closure calls, loops and (under
// racekit) defers. The compiler charges the closure a fixed cost, inlines
// Raw, and a closure made and dropped at once stays on the stack
// (TestAllocsClosureConstructor).
func Raw(html string, errs ...error) func(w io.Writer) error {
	return func(w io.Writer) error {
		for _, e := range errs {
			if e != nil {
				return e
			}
		}
		_, err := io.WriteString(w, html)
		return err
	}
}
