package pecanflag

import "testing"

func TestFlag(t *testing.T) {
	if v := Run(); v != 42 {
		t.Fatalf("read %d", v)
	}
}
