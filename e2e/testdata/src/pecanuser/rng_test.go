package pecanuser

import "testing"

func TestRange(t *testing.T) {
	if lo, hi := Run(); hi-lo != 1 {
		t.Errorf("read [%d,%d]: a lo and a hi never set together", lo, hi)
	}
}
