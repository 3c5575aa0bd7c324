package lockhash

import "testing"

// Map semantics in one goroutine.
func TestSequential(t *testing.T) {
	tb := New(4, 2)
	for k := uint64(0); k < 20; k++ {
		tb.Put(k, k*10)
	}
	tb.Put(7, 700)
	if !tb.Delete(3) || tb.Delete(3) {
		t.Fatal("Delete(3) twice should succeed once")
	}
	if v, ok := tb.Get(7); !ok || v != 700 {
		t.Fatalf("Get(7) = %d, %v", v, ok)
	}
	if _, ok := tb.Get(3); ok || tb.Len() != 19 {
		t.Fatalf("Get(3) found, or Len %d != 19", tb.Len())
	}
}

// Race-free (runs under -race): readers only ever see values written for
// their key, and the size counter agrees with a final scan.
func TestConcurrent(t *testing.T) {
	cfg := DefaultConfig()
	r := Run(cfg)
	if r.Mismatch != 0 || r.Len != r.Counted || r.Gets == 0 {
		t.Fatalf("got %+v", r)
	}
}
