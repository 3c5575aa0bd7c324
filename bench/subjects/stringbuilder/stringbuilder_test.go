package stringbuilder

import "testing"

// Sequential semantics of append and of the failure the violation causes.
func TestSequential(t *testing.T) {
	a, b := New("xy"), New("abc")
	if err := a.Append(b); err != nil || a.String() != "xyabc" {
		t.Fatalf("Append = %v, %q", err, a.String())
	}
	b.SetLength(1)
	if err := a.Append(b); err != nil || a.String() != "xyabca" {
		t.Fatalf("Append after SetLength(1) = %v, %q", err, a.String())
	}
	// What the interleaving produces: getChars asked for more than sb has.
	if err := b.getChars(0, 3, make([]byte, 3), 0); err != ErrIndexOutOfBounds {
		t.Fatalf("getChars past the end = %v", err)
	}
}

// Race-free (every access is locked), so this runs under -race too: the
// atomicity violation may show as errors, and every append is accounted
// for: the destination holds 8 bytes per successful append, at most.
func TestDriver(t *testing.T) {
	cfg := DefaultConfig()
	r := Run(cfg)
	if r.Appends+r.Exceptions != cfg.Rounds || r.Len > 8*r.Appends {
		t.Fatalf("got %+v", r)
	}
	t.Logf("%+v", r)
}
