package confirmonly

import "testing"

func TestRun(t *testing.T) {
	if v := Run(); v != 1 && v != 2 {
		t.Fatalf("data %d", v)
	}
}
