package p

type Digest struct {
	v1, v2 uint64
	total  uint64
	n      int
}

func New() *Digest { return NewWithSeed(0) }

func NewWithSeed(seed uint64) *Digest {
	var d Digest
	d.ResetWithSeed(seed)
	return &d
}

func (d *Digest) ResetWithSeed(seed uint64) {
	d.v1 = seed + 1
	d.v2 = seed
	d.total = 0
	d.n = 0
}

func (d *Digest) Size() int { return 8 }

func (d *Digest) Sum64() uint64 { return d.v1 ^ d.v2 }

// Not inline wrappers: each keeps its frame.

type hasher interface{ Sum64() uint64 }

func viaInterface(h hasher) uint64 { return h.Sum64() }

func viaFuncValue(f func() *Digest) *Digest { return f() }

// Two calls: a region of its own (AtomFuzzer's check then act).
func twoCalls(d *Digest) bool { return ok(d) && ok(New()) }

func ok(d *Digest) bool { return d.n > 0 }

func threeCalls() *Digest {
	d := New()
	d.ResetWithSeed(1)
	d.ResetWithSeed(2)
	return d
}

func loops(n int) *Digest {
	var d *Digest
	for i := 0; i < n; i++ {
		d = New()
	}
	return d
}

func readsField(d *Digest) *Digest { return NewWithSeed(d.v1) }

func untracedPointer(b []byte) *Digest {
	copy(b, "x")
	return New()
}

// An inline wrapper with a parameter whose address it returns, and one
// with an if statement.
func boxed(seed uint64) *uint64 { return &seed }

func newOrNil(ok bool) *Digest {
	if !ok {
		return nil
	}
	return New()
}

// An option's constructor: the closure it returns keeps its own frame
// and hooks; the constructor none. One that also calls keeps its frame.
type opts struct{ empty bool }

func IncludeEmpty() func(*opts) {
	return func(o *opts) {
		o.empty = true
	}
}

func IncludeAfter(d *Digest) func(*opts) {
	d = New()
	return func(o *opts) { o.empty = d.n > 0 }
}

// Constructors of objects (smithy-go's NewAnonymousScheme, whose zero-sized
// signer equals another only when the constructor is inlined): inline
// wrappers, their allocations left to the runtime's hook. A channel's
// make keeps the frame.
type Signer interface{ Sign() }

type nopSigner struct{}

func (nopSigner) Sign() {}

type scheme struct {
	id     string
	signer Signer
	seen   map[string]bool
	ids    []int
}

func NewScheme() *scheme {
	return &scheme{id: "anon", signer: &nopSigner{}, seen: map[string]bool{}, ids: make([]int, 0, 4)}
}

func NewDigest() *Digest { return new(Digest) }

func newDone() chan struct{} { return make(chan struct{}) }

// Literals called where they are written: inline wrappers when their
// shape is one's (the outer calls the inner, which calls New), else
// they keep their frames; a deferred one keeps its frame.
func nested() *Digest {
	return func() *Digest {
		return func() *Digest {
			return New()
		}()
	}()
}

func literalReads(d *Digest) uint64 {
	return func() uint64 { return d.v1 }()
}

func deferredLiteral() {
	defer func() {
		_ = New()
	}()
}

func assigned() *Digest {
	f := func() *Digest { return New() }
	return f()
}

// A constructor whose closure calls, loops and defers (templ's Raw): an
// inline wrapper all the same, as Go's inliner charges a closure a fixed
// cost whatever its body; the closure keeps its frame and hooks.
func Render(s string, errs ...error) func(w []byte) []byte {
	return func(w []byte) []byte {
		defer ok(nil)
		for _, e := range errs {
			_ = e
		}
		return append(w, s...)
	}
}
